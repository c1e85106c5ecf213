//===- ImportTest.cpp - Imports from files, overlays and the stdlib -------===//

#include "SemaTestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace modelc;
using namespace modelc::test;

namespace {

/// A temporary folder with .mdl files, removed afterwards.
class ImportTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("modelc-import", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  std::string write(llvm::StringRef relative, llvm::StringRef text) {
    llvm::SmallString<256> path(dir_);
    llvm::sys::path::append(path, relative);
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(path));
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    EXPECT_FALSE(ec);
    os << text;
    return std::string(path);
  }

  llvm::SmallString<256> dir_;
};

TEST_F(ImportTest, RelativeImportsAndUseOfTheirModels) {
  write("lib/blocks.mdl", R"(import std.nn
/// A residual block.
model Residual<D: device>(d: int) {
  fc = nn.Linear(d, d)
  fn forward(x: f32[B, d] @ D) -> f32[B, d] @ D { return x + fc(x) }
})");
  std::string main = write("main.mdl", R"(import lib.blocks
model Net<D: device>(d: int) {
  a = blocks.Residual(d)
  b = blocks.Residual<cuda:1>(d)
  fn forward(x: f32[B, d] @ D) -> f32[B, d] @ cuda:1 { return b(a(x).to(cuda:1)) }
})");
  Checked c = checkFile(main);
  EXPECT_TRUE(c.ok) << c.dump();
  EXPECT_EQ(c.compilation->modules().size(), 3u); // main, lib.blocks, std.nn
  std::string error;
  auto inst =
      c.program().instantiate(*c.program().findModel("Net"), {sema::Device::cuda(0)}, {16}, error);
  ASSERT_TRUE(inst) << error;
  ASSERT_EQ(inst->state.size(), 4u);
  EXPECT_EQ(inst->state[2].name, "b.fc.weight");
  EXPECT_EQ(inst->state[2].type.str(), "f32[16, 16] @ cuda:1");
}

TEST_F(ImportTest, ImportPathsAreSearchedAfterTheFilesFolder) {
  llvm::SmallString<256> other(dir_);
  llvm::sys::path::append(other, "other");
  write("other/util.mdl", "model U<D: device>(n: int) { param w: f32[n] }");
  std::string main = write("main.mdl", "import util\nmodel M<D: device> { u = util.U(3) }");
  Checked without = checkFile(main);
  EXPECT_EQ(without.codes(), std::vector<std::string>{"E0103"}) << without.dump();
  CompileOptions options = testOptions();
  options.importPaths.push_back(std::string(other));
  Compilation c(options);
  ASSERT_TRUE(c.addFile(main));
  EXPECT_TRUE(c.check());
}

TEST_F(ImportTest, CyclesAreReported) {
  write("a.mdl", "import b\nmodel A<D: device> { }");
  write("b.mdl", "import a\nmodel B<D: device> { }");
  Checked c = checkFile(write("main.mdl", "import a\nmodel M<D: device> { }"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0109"}) << c.dump();
  EXPECT_EQ(c.find("E0109")->message, "module `a` imports itself");
  EXPECT_EQ(c.find("E0109")->primaryRange().text(), "import a");
}

TEST_F(ImportTest, EachFileIsParsedOnce) {
  write("shared.mdl", "model S<D: device>(n: int) { param w: f32[n] }");
  write("x.mdl", "import shared\nmodel X<D: device> { s = shared.S(2) }");
  write("y.mdl", "import shared\nmodel Y<D: device> { s = shared.S(3) }");
  Checked c = checkFile(
      write("main.mdl", "import x\nimport y\nmodel M<D: device> { a = x.X()\n b = y.Y() }"));
  EXPECT_TRUE(c.ok) << c.dump();
  EXPECT_EQ(c.compilation->modules().size(), 4u);
}

TEST_F(ImportTest, ErrorsInImportedFilesAreReportedThere) {
  std::string lib = write("bad.mdl", "model Bad<D: device>(n: int) {\n  param w: f32[n] @ cpu\n  "
                                     "fn f(x: f32[n]) -> f32[n] { return x + w }\n}");
  Checked c = checkFile(write("main.mdl", "import bad\nmodel M<D: device> { }"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  unsigned buffer =
      c.compilation->sourceMgr().FindBufferContainingLoc(c.find("E0301")->primaryRange().begin);
  EXPECT_EQ(buffer, *c.compilation->bufferForPath(lib));
}

TEST_F(ImportTest, OverlaysReplaceTheDisk) {
  std::string lib = write("lib.mdl", "model L<D: device>(n: int) { param w: f32[n] }");
  std::string main = write("main.mdl", "import lib\nmodel M<D: device> { l = lib.L(2) }");
  CompileOptions options = testOptions();
  options.overlays.push_back({lib, "model L<D: device>(n: int, m: int) { param w: f32[n] }"});
  Compilation c(options);
  ASSERT_TRUE(c.addFile(main));
  EXPECT_FALSE(c.check()); // the overlay's L needs two arguments
  ASSERT_EQ(c.diagnostics().diagnostics().size(), 1u);
  EXPECT_EQ(c.diagnostics().diagnostics()[0].code(), "E0107");
}

TEST_F(ImportTest, StdlibFromTheEnvironment) {
  write("std/nn.mdl", "model Tiny<D: device> { }");
  CompileOptions options; // no stdlibDir: the environment decides
  ::setenv("MODELC_STDLIB", (std::string(dir_) + "/std").c_str(), 1);
  Compilation c(options);
  c.addBuffer("main.mdl", "import std.nn\nmodel M<D: device> { t = nn.Tiny() }");
  bool ok = c.check();
  ::unsetenv("MODELC_STDLIB");
  EXPECT_TRUE(ok);
}

TEST_F(ImportTest, MissingMainFileIsReported) {
  Compilation c(testOptions());
  EXPECT_FALSE(c.addFile(std::string(dir_) + "/nope.mdl"));
  EXPECT_EQ(c.diagnostics().errorCount(), 1u);
  EXPECT_FALSE(c.check());
}

} // namespace
