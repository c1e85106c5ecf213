# lit.cfg.py - configuration of modelc's golden tests (lit + FileCheck).
#
# Run through the build tree, whose lit.site.cfg.py says where the binaries
# are:  lit -sv <build>/tests/lit   (or: ninja -C <build> check-lit).
# Run on this source folder directly, it loads the site config of
# $MODELC_BUILD_DIR (default: <repo>/build).
#
# Substitutions: %modelc, %modelc-opt, %stdlib, %examples, %shared,
# %expect-exit, %make-input, %python, %torch-python, and FileCheck. `not`
# needs no binary: lit's internal shell implements it.

import os
import sys

import lit.formats
import lit.util

if not hasattr(config, "modelc_obj_root"):
    source_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    build_dir = os.environ.get("MODELC_BUILD_DIR", os.path.join(source_root, "build"))
    site_config = os.path.join(build_dir, "tests", "lit", "lit.site.cfg.py")
    if not os.path.exists(site_config):
        lit_config.fatal(
            "no %s: build modelc first, or set MODELC_BUILD_DIR to its build folder" % site_config
        )
    lit_config.load_config(config, site_config)
else:
    config.name = "modelc"
    # The internal shell runs the same everywhere and implements `not`.
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = [".mdl", ".mlir", ".test"]
    config.excludes = ["tools", "Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "CMakeLists.txt"]
    config.test_source_root = os.path.dirname(os.path.abspath(__file__))
    config.test_exec_root = os.path.join(config.modelc_obj_root, "tests", "lit")

    # Tests see a predictable environment: no colour unless asked for, and
    # the in-tree stdlib unless a test points elsewhere.
    config.environment["NO_COLOR"] = "1"
    config.environment["MODELC_STDLIB"] = config.modelc_stdlib_dir
    config.environment["PATH"] = os.pathsep.join(
        [config.modelc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
    )

    tools_dir = os.path.join(config.test_source_root, "tools")
    python = '"%s"' % sys.executable
    # Longer names first: %modelc must not eat the start of %modelc-opt.
    # modelc-opt (the MLIR tool) may be built in its own folder.
    modelc_opt = lit.util.which(
        "modelc-opt",
        os.pathsep.join(
            [config.modelc_tools_dir, os.path.join(config.modelc_obj_root, "tools", "modelc-opt")]
        ),
    )
    config.substitutions.append(
        ("%modelc-opt", modelc_opt or os.path.join(config.modelc_tools_dir, "modelc-opt"))
    )
    config.substitutions.append(("%modelc", os.path.join(config.modelc_tools_dir, "modelc")))
    config.substitutions.append(("%stdlib", config.modelc_stdlib_dir))
    config.substitutions.append(("%examples", os.path.join(config.modelc_src_root, "examples")))
    config.substitutions.append(
        ("%shared", os.path.join(os.path.dirname(config.modelc_src_root), "shared"))
    )
    config.substitutions.append(
        ("%expect-exit", "%s %s" % (python, os.path.join(tools_dir, "expect_exit.py")))
    )
    config.substitutions.append(
        ("%make-input", "%s %s" % (python, os.path.join(tools_dir, "make_input.py")))
    )
    config.substitutions.append(("%python", python))
    # The Python `modelc import-torch` runs (it has torch), for the tests that
    # compute PyTorch's reference output.
    config.substitutions.append(
        ("%torch-python", os.environ.get("MODELC_PYTHON") or "/usr/bin/python3")
    )
    config.substitutions.append(
        (r"\bFileCheck\b", os.path.join(config.llvm_tools_dir, "FileCheck"))
    )
