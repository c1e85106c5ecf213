//===- PartitionTest.cpp - Splitting hand-written mdl modules by device ---===//

#include "cudagen/Partition.h"
#include "cudagen/KernelSource.h"
#include "cudagen/LibraryGemm.h"

#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

using namespace modelc::cudagen;

namespace {

class PartitionTest : public ::testing::Test {
protected:
  PartitionTest() {
    context.loadDialect<mlir::mdl::MdlDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                        mlir::tensor::TensorDialect>();
  }

  llvm::Expected<DevicePlan> plan(llvm::StringRef source, std::vector<std::string> state = {}) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(bool(module));
    PlanOptions options;
    options.stateNames = std::move(state);
    options.inputDimNames = {{"B"}};
    return buildDevicePlan(*module, options);
  }

  static unsigned count(const DevicePlan &p, size_t index) {
    return llvm::count_if(p.steps, [&](const Step &s) { return s.index() == index; });
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

constexpr llvm::StringLiteral LinearOnCuda = R"mlir(
!w = tensor<4x3xf32, #mdl.device<cuda:0>>
!b = tensor<4xf32, #mdl.device<cuda:0>>
!x = tensor<?x3xf32, #mdl.device<cuda:0>>
!y = tensor<?x4xf32, #mdl.device<cuda:0>>
func.func @forward(%w: !w, %b: !b, %x: !x) -> !y {
  %wt = mdl.transpose %w {dim0 = 0 : i64, dim1 = 1 : i64} : !w -> tensor<3x4xf32, #mdl.device<cuda:0>>
  %m = mdl.matmul %x, %wt : !x, tensor<3x4xf32, #mdl.device<cuda:0>> -> !y
  %a = mdl.add %m, %b : !y, !b -> !y
  %r = mdl.relu %a : !y
  return %r : !y
}
)mlir";

TEST_F(PartitionTest, FusesMatmulBiasAndActivationIntoOneKernel) {
  llvm::Expected<DevicePlan> p = plan(LinearOnCuda, {"fc.weight", "fc.bias"});
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->steps.size(), 1u);
  const Launch &launch = std::get<Launch>(p->steps[0]);
  EXPECT_EQ(launch.kernel, "k0_matmul_add_relu");
  EXPECT_EQ(launch.device, 0);
  EXPECT_TRUE(p->cpuModule.empty());
  ASSERT_EQ(p->devices.size(), 1u);
  const KernelInfo &info = p->devices[0].kernels[0];
  EXPECT_EQ(info.category, "matmul");
  // 2 * B * 4 * 3 for the product, 2 epilogue ops per output element.
  EXPECT_EQ(info.flops.str(), "24 * B + 8 * B");
  // Buffers: the two states, the input, the output; the transpose is a view.
  ASSERT_EQ(p->buffers.size(), 4u);
  EXPECT_EQ(p->buffers[0].name, "fc.weight");
  EXPECT_EQ(p->buffers[3].kind, BufferKind::Output);
  ASSERT_EQ(p->symbols.size(), 1u);
  EXPECT_EQ(p->symbols[0].name, "B");
  EXPECT_EQ(p->symbols[0].input, 2u);
  EXPECT_NE(p->devices[0].source.find("extern \"C\" __global__ void k0_matmul_add_relu("),
            std::string::npos);
}

TEST_F(PartitionTest, SplitsCpuAndTwoGpusWithCopies) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!c = tensor<?x8xf32, #mdl.device<cpu>>
!g0 = tensor<?x8xf32, #mdl.device<cuda:0>>
!g1 = tensor<?x8xf32, #mdl.device<cuda:1>>
func.func @forward(%x: !c) -> !c {
  %e = mdl.exp %x : !c
  %n = mdl.neg %e : !c
  %a = mdl.transfer %n : !c -> !g0
  %t = mdl.tanh %a : !g0
  %s = mdl.sigmoid %t : !g0
  %b = mdl.transfer %s : !g0 -> !g1
  %m = mdl.softmax %b {dim = 1 : i64} : !g1
  %back = mdl.transfer %m : !g1 -> !c
  %out = mdl.add %back, %x : !c, !c -> !c
  return %out : !c
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  // cpu_region_0 (exp, neg), copy, k0 (tanh+sigmoid), copy, k1 softmax,
  // copy, cpu_region_1 (add).
  ASSERT_EQ(p->steps.size(), 7u);
  EXPECT_EQ(std::get<CpuCall>(p->steps[0]).function, "cpu_region_0");
  EXPECT_EQ(std::get<Launch>(p->steps[2]).kernel, "k0_tanh_sigmoid");
  EXPECT_EQ(std::get<Launch>(p->steps[4]).device, 1);
  EXPECT_EQ(std::get<CpuCall>(p->steps[6]).arguments.size(), 2u);
  EXPECT_EQ(count(*p, 2), 3u); // copies
  ASSERT_EQ(p->devices.size(), 2u);
  EXPECT_NE(p->cpuModule.find("func.func @cpu_region_0"), std::string::npos);
  EXPECT_NE(p->cpuModule.find("mdl.exp"), std::string::npos);
  EXPECT_NE(p->cpuModule.find("func.func @cpu_region_1"), std::string::npos);
  // The outlined module parses and verifies on its own.
  mlir::OwningOpRef<mlir::ModuleOp> cpu =
      mlir::parseSourceString<mlir::ModuleOp>(p->cpuModule, &context);
  EXPECT_TRUE(bool(cpu));
}

TEST_F(PartitionTest, AValueUsedTwiceIsComputedOnce) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!g = tensor<?x8xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !g) -> !g {
  %e = mdl.exp %x : !g
  %a = mdl.mul %e, %e : !g, !g -> !g
  return %a : !g
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->steps.size(), 2u);
  EXPECT_EQ(std::get<Launch>(p->steps[0]).kernel, "k0_exp");
  EXPECT_EQ(std::get<Launch>(p->steps[1]).kernel, "k1_mul");
}

TEST_F(PartitionTest, ReshapeIsAView) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!g = tensor<?x8xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !g) -> tensor<?x2x4xf32, #mdl.device<cuda:0>> {
  %e = mdl.exp %x : !g
  %r = mdl.reshape %e : !g -> tensor<?x2x4xf32, #mdl.device<cuda:0>>
  %s = mdl.sum %r {dims = array<i64: 2>} : tensor<?x2x4xf32, #mdl.device<cuda:0>> -> tensor<?x2xf32, #mdl.device<cuda:0>>
  %q = mdl.reshape %s : tensor<?x2xf32, #mdl.device<cuda:0>> -> tensor<?x2x1xf32, #mdl.device<cuda:0>>
  %o = mdl.sub %r, %q : tensor<?x2x4xf32, #mdl.device<cuda:0>>, tensor<?x2x1xf32, #mdl.device<cuda:0>> -> tensor<?x2x4xf32, #mdl.device<cuda:0>>
  return %o : tensor<?x2x4xf32, #mdl.device<cuda:0>>
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->steps.size(), 3u); // exp, sum, sub: no copy kernels
  unsigned views = llvm::count_if(p->buffers, [](const Buffer &b) { return b.viewOf.has_value(); });
  EXPECT_EQ(views, 2u);
  // The reshape splits dim 1 and keeps `?`, the input's dim 0.
  const Buffer &reshaped = *llvm::find_if(p->buffers, [](const Buffer &b) { return b.viewOf; });
  EXPECT_EQ(reshaped.shape[0].str(), "B");
}

// Splitting heads ([B, T, 256] -> [B, T, 4, 64]) and merging them back keep
// each dynamic dim tied to its own input dim (each once was B * T).
TEST_F(PartitionTest, ReshapesWithSeveralDynamicDimsKeepEachDim) {
  module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
!x = tensor<?x?x256xf32, #mdl.device<cuda:0>>
!h = tensor<?x?x4x64xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !x) -> (!x, tensor<?x64xf32, #mdl.device<cuda:0>>) {
  %e = mdl.exp %x : !x
  %r = mdl.reshape %e : !x -> !h
  %t = mdl.exp %r : !h
  %m = mdl.reshape %t : !h -> !x
  %n = mdl.reshape %t : !h -> tensor<?x64xf32, #mdl.device<cuda:0>>
  return %m, %n : !x, tensor<?x64xf32, #mdl.device<cuda:0>>
}
)mlir",
                                                   &context);
  ASSERT_TRUE(bool(module));
  PlanOptions options;
  options.inputDimNames = {{"B", "T"}};
  llvm::Expected<DevicePlan> p = buildDevicePlan(*module, options);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  std::vector<std::string> shapes;
  for (const Buffer &b : p->buffers)
    if (b.viewOf) {
      std::string shape;
      for (const SizeExpr &d : b.shape)
        shape += (shape.empty() ? "" : ", ") + d.str();
      shapes.push_back(shape);
    }
  // The last merges two dynamic dims into one: the elements over the 64.
  EXPECT_EQ(shapes, (std::vector<std::string>{"B, T, 4, 64", "B, T, 256",
                                              "floordiv(256 * B * T, 64), 64"}));
}

TEST_F(PartitionTest, HalfTypesWidenOnLoadAndRoundOnStore) {
  // f16 and bf16 (once errors) keep their 16-bit buffers; the kernel
  // computes in f32.
  for (llvm::StringRef type : {"f16", "bf16"}) {
    std::string source = llvm::formatv(R"mlir(
!g = tensor<?x8x{0}, #mdl.device<cuda:0>>
func.func @forward(%x: !g) -> !g {{
  %e = mdl.exp %x : !g loc("model.mdl":7:12)
  return %e : !g
}
)mlir",
                                       type)
                             .str();
    llvm::Expected<DevicePlan> p = plan(source);
    ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
    ASSERT_EQ(p->steps.size(), 1u);
    for (const Buffer &b : p->buffers)
      EXPECT_EQ(modelc::runtime::dtypeName(b.dtype), type);
    std::string stored = "mdl_" + type.str();
    EXPECT_NE(p->devices[0].source.find("(" + stored + " *__restrict__ out, const " + stored +
                                        " *__restrict__ in0, int64_t B)"),
              std::string::npos)
        << p->devices[0].source;
    EXPECT_NE(p->devices[0].source.find("const float v0 = expf(mdl_widen(in0[i]));\n"
                                        "    out[i] = mdl_to_" +
                                        type.str() + "(v0);"),
              std::string::npos)
        << p->devices[0].source;
  }
}

TEST_F(PartitionTest, AModuleWithoutTheEntryFnIsAnError) {
  llvm::Expected<DevicePlan> none = plan("func.func @other() { return }");
  ASSERT_FALSE(bool(none));
  EXPECT_EQ(llvm::toString(none.takeError()), "the module has no function `forward`");
}

TEST_F(PartitionTest, SelectAtConstantPositionsIsASliceWithPythonsPositions) {
  // -1 of 4 is 3; 9 reads the nearest valid position (3), as the cpu does;
  // -1 of the dynamic B is B - 1.
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!x = tensor<?x4x3xf32, #mdl.device<cuda:0>>
!r = tensor<?x3xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !x) -> !r {
  %m1 = arith.constant -1 : index
  %c9 = arith.constant 9 : index
  %a = mdl.select %x[%m1] {dims = array<i64: 1>} : !x -> !r
  %b = mdl.select %x[%c9] {dims = array<i64: 1>} : !x -> !r
  %c = mdl.select %x[%m1, %m1] {dims = array<i64: 0, 1>} : !x -> tensor<3xf32, #mdl.device<cuda:0>>
  %s = mdl.add %a, %b : !r, !r -> !r
  %o = mdl.add %s, %c : !r, tensor<3xf32, #mdl.device<cuda:0>> -> !r
  return %o : !r
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->steps.size(), 4u);
  EXPECT_EQ(std::get<Launch>(p->steps[0]).kernel, "k0_select");
  EXPECT_EQ(p->devices[0].kernels[0].category, "copy");
  const std::string &source = p->devices[0].source;
  EXPECT_NE(source.find("out[i] = in0[c0 * 12 + 3 * 3 + c1];"), std::string::npos) << source;
  EXPECT_EQ(source.find("9 * 3"), std::string::npos) << source;
  // min(max(B + -1, 0), B - 1), the row at B - 1 (0 when B is 0).
  EXPECT_NE(source.find("out[i] = in0[(((((B + -1) > (0) ? (B + -1) : (0))) < (B - 1) ? "
                        "(((B + -1) > (0) ? (B + -1) : (0))) : (B - 1))) * 12 + 3 * 3 + c0];"),
            std::string::npos)
      << source;
}

TEST_F(PartitionTest, SelectScatterWritesInPlaceOnlyWhenNothingElseReadsTheInput) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!x = tensor<2x4x3xf32, #mdl.device<cuda:0>>
!h = tensor<2x3xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !x, %h: !h) -> !x {
  %c0 = arith.constant 0 : index
  %m1 = arith.constant -1 : index
  %z = mdl.zeros : !x
  %a = mdl.select_scatter %z[%c0], %h {dims = array<i64: 1>} : !x, !h -> !x
  %b = mdl.select_scatter %a[%m1], %h {dims = array<i64: 1>} : !x, !h -> !x
  %c = mdl.select_scatter %x[%c0], %h {dims = array<i64: 1>} : !x, !h -> !x
  %d = mdl.select_scatter %c[%m1], %h {dims = array<i64: 1>} : !x, !h -> !x
  %s = mdl.add %b, %d : !x, !x -> !x
  %o = mdl.add %s, %c : !x, !x -> !x
  return %o : !x
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  std::vector<const Launch *> scatters;
  for (const Step &step : p->steps)
    if (const auto *l = std::get_if<Launch>(&step);
        l && llvm::StringRef(l->kernel).ends_with("select_scatter"))
      scatters.push_back(l);
  ASSERT_EQ(scatters.size(), 4u);
  auto written = [](const Launch *l) { return l->args.back().buffer; };
  auto reads = [](const Launch *l) { return l->args.size(); };
  // The zeros' buffer has no other reader: both writes land in it, reading
  // only the source.
  EXPECT_EQ(written(scatters[0]), written(scatters[1]));
  EXPECT_EQ(reads(scatters[0]), 2u);
  EXPECT_EQ(reads(scatters[1]), 2u);
  // An input is never written; %c is read again, so %d copies it too.
  EXPECT_EQ(reads(scatters[2]), 3u);
  EXPECT_EQ(reads(scatters[3]), 3u);
  EXPECT_NE(written(scatters[2]), written(scatters[3]));
  EXPECT_EQ(p->buffers[written(scatters[2])].kind, BufferKind::Temporary);
  const std::string &source = p->devices[0].source;
  EXPECT_NE(source.find("out[c0 * 12 + 3 * 3 + c1] = in0[i];"), std::string::npos) << source;
  EXPECT_NE(source.find("out[i] = (c1 == 0) ? in0[c0 * 3 + c2] : in1[i];"), std::string::npos)
      << source;
}

// A position computed from the input's dims (mlirgen's `arange(0, T + 1)[T]`
// for a run-time int next to a tensor) is a size expression: the select is
// planned, and a creation op's size from the dims too.
TEST_F(PartitionTest, PositionsAndSizesFromInputDimsArePlanned) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!x = tensor<?x4xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !x) -> tensor<f32, #mdl.device<cuda:0>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : !x
  %m = arith.addi %n, %c1 : index
  %r = mdl.arange(%m) {start = 0.0 : f64, step = 1.0 : f64} : tensor<?xf32, #mdl.device<cuda:0>>
  %s = mdl.select %r[%n] {dims = array<i64: 0>} : tensor<?xf32, #mdl.device<cuda:0>> -> tensor<f32, #mdl.device<cuda:0>>
  return %s : tensor<f32, #mdl.device<cuda:0>>
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
}

// Any other position known only at run time (here a remainder, which size
// expressions do not have; in a program, the variable of a loop that is not
// unrolled) stays an error naming the op.
TEST_F(PartitionTest, PositionsKnownOnlyAtRunTimeAreAnError) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!x = tensor<?x4xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !x) -> tensor<4xf32, #mdl.device<cuda:0>> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : !x
  %i = arith.remui %n, %c3 : index
  %s = mdl.select %x[%i] {dims = array<i64: 0>} : !x -> tensor<4xf32, #mdl.device<cuda:0>> loc("rnn.mdl":9:5)
  return %s : tensor<4xf32, #mdl.device<cuda:0>>
}
)mlir");
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(llvm::toString(p.takeError()),
            "`mdl.select` at rnn.mdl:9: indexing with a position known only at run time (the "
            "variable of a loop over a run-time range) is not supported on cuda yet; a range of "
            "at most 16 steps known at compile time is unrolled, and then every position is a "
            "constant");
}

TEST_F(PartitionTest, KernelSourceNamesTheMdlLine) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!g = tensor<?x8xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !g) -> !g {
  %e = mdl.gelu %x : !g loc("model.mdl":3:5)
  return %e : !g
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  const std::string &source = p->devices[0].source;
  EXPECT_NE(source.find("// from model.mdl:3\nextern \"C\" __global__ void k0_gelu("),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("erff("), std::string::npos);
  EXPECT_NE(source.find("int64_t B)"), std::string::npos);
}

} // namespace

//===----------------------------------------------------------------------===//
// Matmuls as a GEMM library takes them (LibraryGemm.h)
//===----------------------------------------------------------------------===//

namespace {

TEST_F(PartitionTest, ALinearLayerIsALibraryGemmWithItsBiasAndRelu) {
  llvm::Expected<DevicePlan> p = plan(LinearOnCuda, {"fc.weight", "fc.bias"});
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->gemms.size(), 1u);
  const GemmCall &gemm = p->gemms[0];
  EXPECT_EQ(gemm.label, "k0_matmul_add_relu");
  EXPECT_EQ(gemm.firstStep, 0u);
  EXPECT_EQ(gemm.stepCount, 1u);
  EXPECT_EQ(gemm.m.str(), "B");
  EXPECT_EQ(gemm.n, SizeExpr(4));
  EXPECT_EQ(gemm.k, SizeExpr(3));
  EXPECT_EQ(gemm.batch, SizeExpr(1));
  // x: row-major [B, 3]; the transposed weight read in place.
  EXPECT_EQ(gemm.a.buffer, 2u);
  EXPECT_FALSE(gemm.a.transposed);
  EXPECT_EQ(gemm.a.ld, SizeExpr(3));
  EXPECT_EQ(gemm.b.buffer, 0u);
  EXPECT_TRUE(gemm.b.transposed);
  EXPECT_EQ(gemm.b.ld, SizeExpr(3));
  EXPECT_EQ(gemm.out, 3u);
  EXPECT_EQ(gemm.bias, std::optional<BufferId>(1));
  EXPECT_FALSE(gemm.residual);
  EXPECT_EQ(gemm.activation, GemmActivation::Relu);
  EXPECT_FALSE(gemm.after) << "cuBLASLt applies the whole epilogue";
  EXPECT_FALSE(gemm.tf32);
}

// The residual's dims must be the output's for the planner to fuse its add
// (two `?` of two arguments are two symbols), hence a static batch.
constexpr llvm::StringLiteral BlockOnCuda = R"mlir(
!x = tensor<2x5x3xf32, #mdl.device<cuda:0>>
!w = tensor<3x4xf32, #mdl.device<cuda:0>>
!b = tensor<4xf32, #mdl.device<cuda:0>>
!y = tensor<2x5x4xf32, #mdl.device<cuda:0>>
func.func @forward(%w: !w, %b: !b, %x: !x, %r: !y) -> !y {
  %m = mdl.matmul %x, %w : !x, !w -> !y
  %a = mdl.add %m, %b : !y, !b -> !y
  %s = mdl.add %r, %a : !y, !y -> !y
  %g = mdl.gelu %s : !y
  %t = mdl.add %g, %r : !y, !y -> !y
  return %t : !y
}
)mlir";

TEST_F(PartitionTest, WhatALibraryCannotApplyRunsAfterItInPlace) {
  llvm::Expected<DevicePlan> p = plan(BlockOnCuda, {"w", "b"});
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->gemms.size(), 1u);
  const GemmCall &gemm = p->gemms[0];
  // x[2, 5, 3] @ w[3, 4] with w shared: one 10 x 4 product.
  EXPECT_EQ(gemm.batch, SizeExpr(1));
  EXPECT_EQ(gemm.m, SizeExpr(10));
  EXPECT_EQ(gemm.a.batchStride, SizeExpr(0));
  // bias, then the residual through C; the exact gelu and the second add
  // are left over.
  EXPECT_EQ(gemm.bias, std::optional<BufferId>(1));
  EXPECT_EQ(gemm.residual, std::optional<BufferId>(3));
  EXPECT_EQ(gemm.activation, GemmActivation::None);
  ASSERT_TRUE(gemm.after);
  EXPECT_EQ(gemm.after->kernel, gemm.label + "_after_library");
  const std::string &source = p->devices[0].source;
  size_t at = source.find("void " + gemm.after->kernel + "(");
  ASSERT_NE(at, std::string::npos);
  std::string after = source.substr(at, source.find("\n}\n", at) - at);
  EXPECT_NE(after.find("mdl_gelu(out[i])"), std::string::npos) << after;
  EXPECT_EQ(after.find("in1[c2]"), std::string::npos) << "no bias in it: " << after;
  // The own kernels still do all of it, for when the library is not used.
  EXPECT_EQ(p->steps.size(), 1u);
  EXPECT_EQ(p->kernel(0, gemm.after->kernel)->category, "elementwise");
}

TEST_F(PartitionTest, BatchedOperandsKeepTheirStrides) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!a = tensor<?x5x3xf32, #mdl.device<cuda:0>>
!b = tensor<?x4x3xf32, #mdl.device<cuda:0>>
!y = tensor<?x5x4xf32, #mdl.device<cuda:0>>
func.func @forward(%x: !a, %z: !b) -> !y {
  %t = mdl.transpose %z {dim0 = 1 : i64, dim1 = 2 : i64} : !b -> tensor<?x3x4xf32, #mdl.device<cuda:0>>
  %m = mdl.matmul %x, %t : !a, tensor<?x3x4xf32, #mdl.device<cuda:0>> -> !y
  return %m : !y
}
)mlir");
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->gemms.size(), 1u);
  const GemmCall &gemm = p->gemms[0];
  EXPECT_EQ(gemm.batch.str(), "B");
  EXPECT_EQ(gemm.m, SizeExpr(5));
  EXPECT_EQ(gemm.a.batchStride, SizeExpr(15));
  EXPECT_TRUE(gemm.b.transposed);
  EXPECT_EQ(gemm.b.ld, SizeExpr(3));
  EXPECT_EQ(gemm.b.batchStride, SizeExpr(12));
  EXPECT_FALSE(gemm.after);
}

TEST_F(PartitionTest, AnActivationCublasLtLacksRunsAfterIt) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!x = tensor<?x3xf32, #mdl.device<cuda:0>>
!w = tensor<3x4xf32, #mdl.device<cuda:0>>
!y = tensor<?x4xf32, #mdl.device<cuda:0>>
func.func @forward(%w: !w, %x: !x) -> !y {
  %m = mdl.matmul %x, %w : !x, !w -> !y
  %s = mdl.silu %m : !y
  return %s : !y
}
)mlir",
                                      {"w"});
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->gemms.size(), 1u);
  EXPECT_FALSE(p->gemms[0].bias);
  ASSERT_TRUE(p->gemms[0].after);
  EXPECT_NE(p->devices[0].source.find("mdl_silu(out[i])"), std::string::npos);
}

TEST_F(PartitionTest, Conv2dStaysOnItsOwnImplicitGemm) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!x = tensor<?x2x6x6xf32, #mdl.device<cuda:0>>
!w = tensor<3x2x3x3xf32, #mdl.device<cuda:0>>
!y = tensor<?x3x4x4xf32, #mdl.device<cuda:0>>
func.func @forward(%w: !w, %x: !x) -> !y {
  %c = mdl.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (!x, !w) -> !y
  return %c : !y
}
)mlir",
                                      {"w"});
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  EXPECT_TRUE(p->gemms.empty());
}

} // namespace
