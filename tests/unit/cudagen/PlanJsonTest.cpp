//===- PlanJsonTest.cpp - The plan's JSON form round-trips and validates --===//

#include "cudagen/DevicePlan.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

using namespace modelc::cudagen;
using modelc::runtime::Device;
using modelc::runtime::DType;

namespace {

Buffer buffer(BufferId id, Device device, llvm::ArrayRef<SizeExpr> shape, BufferKind kind,
              std::string name = "", unsigned index = 0) {
  Buffer b;
  b.id = id;
  b.device = device;
  b.shape.assign(shape.begin(), shape.end());
  b.kind = kind;
  b.name = std::move(name);
  b.index = index;
  return b;
}

/// A plan with one of everything: state, input, a view, a cpu call, a copy,
/// a launch with buffer and size arguments, two devices, a GEMM a library
/// can run.
DevicePlan samplePlan() {
  SizeExpr b = SizeExpr::symbol("B");
  DevicePlan plan;
  plan.entry = "forward";
  plan.symbols = {Symbol{"B", 1, 0}};
  plan.buffers = {
      buffer(0, Device::cuda(0), {SizeExpr(4), SizeExpr(3)}, BufferKind::State, "fc.weight", 0),
      buffer(1, Device::cpu(), {b, SizeExpr(3)}, BufferKind::Input, "input0", 0),
      buffer(2, Device::cpu(), {b, SizeExpr(3)}, BufferKind::Temporary),
      buffer(3, Device::cuda(0), {b, SizeExpr(3)}, BufferKind::Temporary),
      buffer(4, Device::cuda(0), {b, SizeExpr(4)}, BufferKind::Output, "result", 0),
      buffer(5, Device::cuda(1), {b * 4}, BufferKind::Temporary),
  };
  plan.buffers[5].viewOf = 4;
  plan.buffers[2].dtype = DType::I64;
  plan.steps.push_back(CpuCall{"cpu_region_0", {1}, {2}});
  plan.steps.push_back(Copy{2, 3});
  Launch launch;
  launch.device = 0;
  launch.kernel = "k0_matmul";
  launch.grid = {SizeExpr::ceilDiv(b, 16), SizeExpr(1), SizeExpr::min(b, 65535)};
  launch.block = {SizeExpr(16), SizeExpr(16), SizeExpr(1)};
  launch.dynamicSharedBytes = b * 4;
  launch.args = {KernelArg::ofBuffer(3), KernelArg::ofBuffer(0), KernelArg::ofBuffer(4),
                 KernelArg::ofSize(b)};
  plan.steps.push_back(launch);
  plan.cpuModule = "module {\n}\n";
  KernelInfo info;
  info.name = "k0_matmul";
  info.category = "matmul";
  info.sourceLines = {"nn.mdl:12", "mlp.mdl:9"};
  info.flops = SizeExpr(24) * b;
  info.bytesRead = SizeExpr(48) + SizeExpr(12) * b;
  info.bytesWritten = SizeExpr(16) * b;
  plan.devices.push_back(DeviceCode{0, "extern \"C\" __global__ void k0_matmul() {}\n", {info}});
  plan.devices.push_back(DeviceCode{1, "// nothing\n", {}});
  GemmCall gemm;
  gemm.device = 0;
  gemm.firstStep = 2;
  gemm.stepCount = 1;
  gemm.m = b;
  gemm.n = 4;
  gemm.k = 3;
  gemm.batch = 1;
  gemm.a = {3, false, 3, 0};
  gemm.b = {0, true, 3, 0};
  gemm.out = 4;
  gemm.residual = 3;
  gemm.activation = GemmActivation::Relu;
  gemm.tf32 = true;
  gemm.label = "k0_matmul";
  Launch after = launch;
  after.kernel = "k0_matmul_after_library";
  gemm.after = after;
  plan.gemms.push_back(gemm);
  return plan;
}

std::string text(const DevicePlan &plan) { return llvm::formatv("{0:2}", toJSON(plan)).str(); }

TEST(PlanJsonTest, RoundTrips) {
  DevicePlan plan = samplePlan();
  std::string first = text(plan);
  llvm::Expected<DevicePlan> back = parsePlan(first);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(text(*back), first);
  // Spot checks on the structures themselves, not just the text.
  ASSERT_EQ(back->buffers.size(), 6u);
  EXPECT_EQ(back->buffers[5].viewOf, std::optional<BufferId>(4));
  EXPECT_EQ(back->buffers[2].dtype, DType::I64);
  EXPECT_EQ(back->buffers[0].name, "fc.weight");
  EXPECT_EQ(back->buffers[5].shape[0], SizeExpr(4) * SizeExpr::symbol("B"));
  const auto &launch = std::get<Launch>(back->steps[2]);
  EXPECT_EQ(launch.grid[2], SizeExpr::min(SizeExpr::symbol("B"), 65535));
  EXPECT_EQ(launch.args[3].kind, KernelArg::Kind::Size);
  EXPECT_EQ(std::get<Copy>(back->steps[1]).destination, 3u);
  EXPECT_EQ(back->kernel(0, "k0_matmul")->sourceLines[1], "mlp.mdl:9");
  EXPECT_EQ(back->deviceCode(1)->source, "// nothing\n");
  ASSERT_EQ(back->gemms.size(), 1u);
  const GemmCall &gemm = back->gemms[0];
  EXPECT_EQ(gemm.firstStep, 2u);
  EXPECT_TRUE(gemm.b.transposed);
  EXPECT_EQ(gemm.b.ld, SizeExpr(3));
  EXPECT_EQ(gemm.m, SizeExpr::symbol("B"));
  EXPECT_EQ(gemm.residual, std::optional<BufferId>(3));
  EXPECT_FALSE(gemm.bias);
  EXPECT_EQ(gemm.activation, GemmActivation::Relu);
  EXPECT_TRUE(gemm.tf32);
  ASSERT_TRUE(gemm.after);
  EXPECT_EQ(gemm.after->kernel, "k0_matmul_after_library");
}

TEST(PlanJsonTest, PlansWithoutGemmsStillRead) {
  DevicePlan plan = samplePlan();
  plan.gemms.clear();
  std::string json = text(plan);
  EXPECT_EQ(json.find("\"gemms\""), std::string::npos);
  llvm::Expected<DevicePlan> back = parsePlan(json);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_TRUE(back->gemms.empty());
}

TEST(PlanJsonTest, BindsSymbolsAndFindsLastUses) {
  DevicePlan plan = samplePlan();
  llvm::Expected<SymbolValues> values = plan.bindSymbols({{7, 3}});
  ASSERT_TRUE(bool(values)) << llvm::toString(values.takeError());
  EXPECT_EQ(values->lookup("B"), 7);
  llvm::Expected<SymbolValues> wrongCount = plan.bindSymbols({});
  ASSERT_FALSE(bool(wrongCount));
  EXPECT_NE(llvm::toString(wrongCount.takeError()).find("takes 1 input"), std::string::npos);
  std::vector<int> last = plan.lastUses();
  EXPECT_EQ(last[1], 0); // the input: the cpu call
  EXPECT_EQ(last[2], 1); // the cpu result: the copy
  EXPECT_EQ(last[3], 2); // the copy's destination: the launch
  EXPECT_EQ(last[5], -1);
  EXPECT_EQ(plan.buffersOfKind(BufferKind::State), std::vector<BufferId>{0});
}

/// Reading a broken plan fails with the JSON path of the problem.
void expectRejected(llvm::StringRef from, llvm::StringRef to, llvm::StringRef message) {
  std::string json = text(samplePlan());
  size_t at = json.find(from.str());
  ASSERT_NE(at, std::string::npos) << from.str();
  json.replace(at, from.size(), to.str());
  llvm::Expected<DevicePlan> plan = parsePlan(json);
  ASSERT_FALSE(bool(plan)) << "accepted: " << to.str();
  std::string error = llvm::toString(plan.takeError());
  EXPECT_NE(error.find(message.str()), std::string::npos) << error;
}

TEST(PlanJsonTest, RejectsBrokenPlans) {
  expectRejected("\"modelc-device-plan\"", "\"something-else\"", "not a modelc device plan");
  expectRejected("\"version\": 1", "\"version\": 7", "unsupported plan version");
  expectRejected("\"op\": \"copy\"", "\"op\": \"teleport\"", "expected cpu_call, launch or copy");
  expectRejected("\"destination\": 3", "\"destination\": 99", "expected a buffer id");
  expectRejected("\"dtype\": \"f32\"", "\"dtype\": \"f128\"", "unknown dtype");
  expectRejected("\"device\": \"cpu\"", "\"device\": \"tpu:0\"", "expected cpu or cuda:N");
  expectRejected("\"ceildiv(B, 16)\"", "\"ceildiv(B,\"", "unparsable size expression");
  expectRejected("\"kind\": \"temporary\"", "\"kind\": \"scratch\"", "expected state, input");
  expectRejected("\"activation\": \"relu\"", "\"activation\": \"swish\"",
                 "expected none, relu or gelu_tanh");
  expectRejected("\"first_step\": 2", "\"first_step\": 9", "expected an integer in range");
  expectRejected("\"step_count\": 1", "\"step_count\": 2", "expected an integer in range");
  llvm::Expected<DevicePlan> notJson = parsePlan("{");
  ASSERT_FALSE(bool(notJson));
  llvm::consumeError(notJson.takeError());
}

} // namespace
