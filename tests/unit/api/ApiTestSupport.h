//===- ApiTestSupport.h - Shared fixtures of the public API tests -*- C++ -*-===//
#ifndef MODELC_TESTS_UNIT_API_APITESTSUPPORT_H
#define MODELC_TESTS_UNIT_API_APITESTSUPPORT_H

#include "modelc/modelc.h"

#include <string>
#include <tuple>
#include <vector>

namespace modelc::api::test {

/// The reference MLP (examples/mlp.mdl) instantiated 784-256-10 on `device`
/// with PyTorch's weights from ../shared/ref/mlp, compiled once.
Function compiledReferenceMlp(Device device = Device::cpu());

/// `rows` x 784 deterministic inputs that differ with `seed`.
std::vector<float> mlpInput(int64_t rows, unsigned seed);

/// A safetensors image holding `tensors` (name, shape, f32 values).
std::string safetensors(
    const std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<float>>> &tensors);

/// Runs `command` through the shell; returns its exit status (-1 when it
/// cannot start) and sets `output` to what it printed.
int runCommand(const std::string &command, std::string &output);

/// The path of `file` in the source tree.
std::string sourcePath(const std::string &file);

/// A model whose forward returns two results, its logits and their mean
/// cross-entropy, instantiated with n = k = 2 on `device` and weights that
/// make the logits the input itself.
Model logitsAndLossModel(Device device);
/// Its loss for x = [[0, 1], [2, 0]], y = [1, 0] (each row picks its larger
/// logit): (log(1 + e^-1) + log(1 + e^-2)) / 2.
double logitsAndLossExpected();

} // namespace modelc::api::test

#endif // MODELC_TESTS_UNIT_API_APITESTSUPPORT_H
