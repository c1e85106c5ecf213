#!/usr/bin/env python3
"""gen_zoo_refs.py - PyTorch's reference data for the model zoo.

    /usr/bin/python3 tools/gen_zoo_refs.py MODEL OUT_DIR [--wrong-weight] [--args K=V,...]
    /usr/bin/python3 tools/gen_zoo_refs.py --list

Builds the torch.nn model that examples/zoo/MODEL.mdl ports, from its
source in examples/zoo/torch/, with the sizes the zoo runs it at, and
writes into OUT_DIR:

    weights.safetensors  its state_dict in float32 (the names are the
                         .mdl's state names: the ports read like the source)
    input.npy            a seeded input (float32 images/activations, or
                         int64 tokens)
    expected.npy         PyTorch's output in float64: the model converted
                         with .double() after the weights were rounded to
                         float32, run on that same input in eval mode

The weights come from torch.manual_seed(0) and PyTorch's own
initialisation; then, so that the normalisations are tested rather than
left at identity, what PyTorch initialises to constants is drawn from
torch.Generator().manual_seed(3): BatchNorm's running mean (N(0, 0.1^2))
and variance (U(0.5, 1.5)), and every norm's weight (U(0.5, 1.5)) and bias
(N(0, 0.1^2)), as tools/gen_stdlib_refs.py does; MobileNetV2 measures its
BatchNorm statistics instead (calibrate_batch_norms says why). The input
comes from torch.Generator().manual_seed(1).

--wrong-weight writes the same files, but with the first float tensor of
the state_dict 1% too large (the reference is computed with the right
one): a test that runs the port on these files must fail its comparison.

Nothing here is needed to build modelc; the zoo's lit tests
(tests/lit/zoo/) run it into their temporary folder, so no weights are
committed.
"""

import argparse
import importlib.util
import os
import sys

import numpy as np
import torch
import torch.nn as nn

from gen_stdlib_refs import write_safetensors

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_SOURCES = os.path.join(ROOT, "examples", "zoo", "torch")


# Each zoo model: its torch source and class, the constructor arguments the
# zoo runs it with (the .mdl's defaults), and its input.
#   input: ("float", shape) for torch.randn, ("tokens", shape, vocab) for
#   torch.randint(0, vocab).
MODELS = {
    "resnet18": {
        "source": "resnet18.py", "class": "ResNet18",
        "args": {"num_classes": 1000},
        "input": ("float", [2, 3, 32, 32]),
    },
    "mobilenet_v2": {
        "source": "mobilenet_v2.py", "class": "MobileNetV2",
        "args": {"num_classes": 1000, "width": 1.0},
        "input": ("float", [2, 3, 32, 32]), "calibrate": True,
    },
    "vit_tiny": {  # ViT-Ti's width, heads, MLP and depth on 32x32 images
        "source": "vit.py", "class": "ViT",
        "args": {"image": 32, "patch": 8, "dim": 192, "depth": 12, "heads": 3, "mlp": 768,
                 "classes": 1000},
        "input": ("float", [2, 3, 32, 32]),
    },
    "gpt2_block": {  # GPT-2 small's block: d = 768, 12 heads
        "source": "gpt2_block.py", "class": "GPT2Block",
        "args": {"n_embd": 768, "n_head": 12},
        "input": ("float", [2, 16, 768]),
    },
    "lstm_classifier": {
        "source": "lstm_classifier.py", "class": "LstmClassifier",
        "args": {"vocab": 100, "embed": 32, "hidden": 64, "classes": 5},
        "input": ("tokens", [2, 12], 100),
    },
    "unet": {
        "source": "unet.py", "class": "UNet",
        "args": {"in_ch": 3, "classes": 2, "base": 16},
        "input": ("float", [2, 3, 32, 32]),
    },
}

NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm)


def load_class(source, class_name):
    path = os.path.join(TORCH_SOURCES, source)
    spec = importlib.util.spec_from_file_location("zoo_" + class_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, class_name)


def make_input(spec, generator):
    if spec[0] == "tokens":
        return torch.randint(0, spec[2], spec[1], generator=generator, dtype=torch.int64)
    return torch.randn(spec[1], generator=generator)


def randomise_norms(model, generator):
    """Draws what PyTorch initialises to constants: the norms' affine weights
    and biases, BatchNorm's running statistics (overwritten for the models
    that calibrate them)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.copy_(0.1 * torch.randn(m.running_mean.shape, generator=generator))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=generator))
            if isinstance(m, NORMS) and getattr(m, "weight", None) is not None:
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=generator))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=generator))


def calibrate_batch_norms(model, spec):
    """Measures BatchNorm's running statistics on a seeded batch of 16, as
    training would, so that the signal keeps its scale through a deep stack
    (with made-up statistics MobileNetV2's output hardly depends on its
    input: its first weight 1% off moves it by 4e-7). Each variance is then
    raised to at least its layer's median: a channel nearly dead on the
    batch would divide by sqrt(eps) and magnify float32 rounding past what
    PyTorch's own float32 run matches to 1e-5."""
    batch_norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in batch_norms:
        m.reset_running_stats()
        m.momentum = None  # a plain average over the batch
    model.train()
    shape = [16] + list(spec[1][1:])
    with torch.no_grad():
        model(make_input((spec[0], shape) + tuple(spec[2:]), torch.Generator().manual_seed(2)))
        for m in batch_norms:
            m.running_var.clamp_(min=m.running_var.median().item())
    model.eval()


def parse_args_option(text):
    """`depth=2,width=0.5` -> {"depth": 2, "width": 0.5}."""
    values = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        values[key.strip()] = float(value) if "." in value or "e" in value else int(value)
    return values


def generate(name, out_dir, wrong_weight, overrides):
    entry = MODELS[name]
    torch.manual_seed(0)
    args = dict(entry["args"], **overrides)
    model = load_class(entry["source"], entry["class"])(**args)
    randomise_norms(model, torch.Generator().manual_seed(3))
    if entry.get("calibrate"):
        calibrate_batch_norms(model, entry["input"])
    model.eval()

    x = make_input(entry["input"], torch.Generator().manual_seed(1))
    state = {k: v.clone() for k, v in model.state_dict().items()}

    # The reference: the float32 weights and input, computed in float64.
    model.double()
    with torch.no_grad():
        expected = model(x.double() if x.is_floating_point() else x)

    if wrong_weight:
        # The first float weight 1% too large: every output depends on it
        # (one element nudged may sit where the input never reaches, as an
        # embedding row of a token that the input does not hold).
        key = next(k for k, v in state.items() if v.is_floating_point())
        state[key] *= 1.01

    os.makedirs(out_dir, exist_ok=True)
    write_safetensors(os.path.join(out_dir, "weights.safetensors"), state)
    np.save(os.path.join(out_dir, "input.npy"), x.numpy())
    np.save(os.path.join(out_dir, "expected.npy"), expected.numpy())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", choices=sorted(MODELS))
    parser.add_argument("out_dir", nargs="?")
    parser.add_argument("--wrong-weight", action="store_true",
                        help="scale the first weight by 1.01 after computing the reference")
    parser.add_argument("--args", default="",
                        help="constructor arguments that replace the zoo's (depth=2,...)")
    parser.add_argument("--list", action="store_true", help="print the models and exit")
    options = parser.parse_args()
    if options.list:
        for name, entry in sorted(MODELS.items()):
            print("%s: examples/zoo/torch/%s:%s %s" % (name, entry["source"], entry["class"],
                                                      entry["args"]))
        return 0
    if not options.model or not options.out_dir:
        parser.error("give MODEL and OUT_DIR (or --list)")
    torch.set_num_threads(1)
    generate(options.model, options.out_dir, options.wrong_weight,
             parse_args_option(options.args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
