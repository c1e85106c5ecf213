//===- PartitionTest.cpp - Splitting hand-written mdl modules by device ---===//

#include "cudagen/Partition.h"
#include "cudagen/KernelSource.h"

#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

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
  // The reshape's `?` is the element count over the static dims.
  const Buffer &reshaped = *llvm::find_if(p->buffers, [](const Buffer &b) { return b.viewOf; });
  EXPECT_EQ(reshaped.shape[0].str(), "floordiv(8 * B, 8)");
}

TEST_F(PartitionTest, UnsupportedCudaOpsAreErrorsWithTheirLine) {
  llvm::Expected<DevicePlan> p = plan(R"mlir(
!g = tensor<?x8xf16, #mdl.device<cuda:0>>
func.func @forward(%x: !g) -> !g {
  %e = mdl.exp %x : !g loc("model.mdl":7:12)
  return %e : !g
}
)mlir");
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(llvm::toString(p.takeError()),
            "`mdl.exp` at model.mdl:7: f16 tensors are not supported on cuda yet");
  llvm::Expected<DevicePlan> none = plan("func.func @other() { return }");
  ASSERT_FALSE(bool(none));
  EXPECT_EQ(llvm::toString(none.takeError()), "the module has no function `forward`");
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
