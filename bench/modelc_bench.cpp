//===- modelc_bench.cpp - time compiled forwards of one model -------------===//
//
// The modelc side of bench/cpu_vs_pytorch.py. Compiles one entry fn once
// (parse + check + mdl + lowering + JIT, timed as the cold compile), binds
// the weights and one input, warms up, then answers commands on stdin so
// the driver can interleave it with PyTorch:
//
//   time N      -> one line: N per-forward times in nanoseconds (raw entry)
//   time-run N  -> the same through `modelc run`'s executor
//   quit
//
// On start it prints one JSON line: compile time, the output file it wrote
// (for the driver's parity check) and the thread count in use.
//
// Timed regions: `time` calls the compiled function itself through its
// packed entry point with prebuilt descriptors and a preallocated output;
// `time-run` calls exec::CompiledModel::call, the executor `modelc run`
// uses (batch specialised to the input, as run does), with its input checks,
// descriptors and output allocation. The embedding API's Function::call is
// timed by modelc-api-bench.
//
//===----------------------------------------------------------------------===//

#include "exec/CompiledModel.h"
#include "exec/Executor.h"
#include "jit/Jit.h"
#include "mlirgen/MlirGen.h"
#include "runtime/Npy.h"
#include "sema/Compilation.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <iostream>
#include <string>
#include <vector>

using namespace modelc;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory toolOptions("modelc-bench options");
cl::opt<std::string> fileOpt(cl::cat(toolOptions), cl::Positional, cl::Required,
                             cl::desc("FILE.mdl"));
cl::opt<std::string> modelOpt(cl::cat(toolOptions), "model", cl::Required,
                              cl::desc("Model to instantiate"));
cl::opt<std::string> argsOpt(cl::cat(toolOptions), "args",
                             cl::desc("Model arguments, e.g. in=784,hidden=256,out=10"));
cl::opt<std::string> weightsOpt(cl::cat(toolOptions), "weights", cl::Required,
                                cl::desc("Weights (.safetensors)"));
cl::opt<std::string> inputOpt(cl::cat(toolOptions), "input", cl::Required,
                              cl::desc("Input (.npy)"));
cl::opt<std::string> outputOpt(cl::cat(toolOptions), "output",
                               cl::desc("Write the output here (.npy)"));
cl::opt<int> threadsOpt(cl::cat(toolOptions), "blas-threads", cl::init(1),
                        cl::desc("oneDNN (OpenMP) and OpenBLAS threads"));
cl::opt<int> warmupOpt(cl::cat(toolOptions), "warmup", cl::init(20),
                       cl::desc("Untimed forwards after compiling"));
cl::opt<bool> noBlasOpt(cl::cat(toolOptions), "no-blas",
                        cl::desc("Lower f32 matmul and conv to loops instead of library calls"));
cl::opt<bool> dumpLoweredOpt(cl::cat(toolOptions), "dump-lowered",
                             cl::desc("Print the module after the cpu pipeline to stderr"));
cl::opt<bool> dynamicBatchOpt(cl::cat(toolOptions), "dynamic-batch",
                              cl::desc("Keep the batch dim dynamic (default: specialise)"));

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "modelc-bench: " << message << "\n";
  std::exit(1);
}

/// OpenBLAS reads its thread count once, oneDNN takes OpenMP's: set both
/// through their own APIs (found at run time, so the harness does not depend
/// on which libraries are loaded), as torch.set_num_threads does for PyTorch.
void setBlasThreads(int threads) {
  // modelc loads OpenBLAS on first use (jit/OpenBlasLibrary.h), which then
  // reads its thread count from here; one loaded already takes the call below.
  setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
  using SetThreads = void (*)(int);
  for (const char *name : {"openblas_set_num_threads", "omp_set_num_threads"})
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, name)))
      set(threads);
}

int blasThreads() {
  using GetThreads = int (*)();
  if (auto get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")))
    return get();
  return -1;
}

/// StridedMemRefType words for a contiguous tensor of any rank.
std::vector<int64_t> descriptorWords(const void *data, llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> words = {int64_t(reinterpret_cast<intptr_t>(data)),
                                int64_t(reinterpret_cast<intptr_t>(data)), 0};
  words.insert(words.end(), shape.begin(), shape.end());
  runtime::Shape strides = runtime::rowMajorStrides(shape);
  words.insert(words.end(), strides.begin(), strides.end());
  return words;
}

void printDiagnosticsAndFail(DiagnosticEngine &diags, const llvm::Twine &what) {
  for (const Diagnostic &d : diags.diagnostics())
    llvm::errs() << d.message << "\n";
  fail(what);
}

} // namespace

int main(int argc, char **argv) {
  // Only this tool's options in --help, not every LLVM option linked in.
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv, "modelc-bench: time compiled forwards\n");
  setBlasThreads(threadsOpt);

  llvm::Expected<runtime::Tensor> input = runtime::readNpy(inputOpt);
  if (!input)
    fail(llvm::toString(input.takeError()));
  llvm::Expected<runtime::SafeTensorsFile> weightsFile = runtime::SafeTensorsFile::open(weightsOpt);
  if (!weightsFile)
    fail(llvm::toString(weightsFile.takeError()));

  // Cold compile: parse + check + instantiate + mdl + lowering + JIT.
  auto compileStart = std::chrono::steady_clock::now();
  Compilation compilation;
  if (!compilation.addFile(fileOpt))
    fail("cannot read " + fileOpt);
  if (!compilation.check())
    printDiagnosticsAndFail(compilation.diagnostics(), "the model does not check");
  llvm::Expected<sema::Device> cpu = mlirgen::parseDevice("cpu");
  if (!cpu)
    fail(llvm::toString(cpu.takeError()));
  llvm::Expected<mlirgen::ConcreteModel> model =
      mlirgen::instantiateModel(*compilation.program(), modelOpt, argsOpt, *cpu);
  if (!model)
    fail(llvm::toString(model.takeError()));
  DiagnosticEngine &diags = compilation.diagnostics();
  std::vector<exec::EntryInput> inputs(1);
  inputs[0].tensor = *input;
  inputs[0].device = runtime::Device::cpu();
  inputs[0].source = inputOpt;
  std::optional<exec::BoundSignature> sig = exec::checkInputs(*model, "forward", inputs, diags);
  if (!sig)
    printDiagnosticsAndFail(diags, "the input does not fit the signature");
  mlir::DialectRegistry registry;
  jit::registerJitDialects(registry);
  mlir::MLIRContext context(registry);
  mlirgen::DimBindings bindings;
  if (!dynamicBatchOpt)
    bindings = sig->dims;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlirgen::buildModule(
      context, *compilation.program(), compilation.sourceMgr(), *model, "forward", diags, bindings);
  if (!module)
    printDiagnosticsAndFail(diags, "cannot build the module");
  // As CompiledModel does: the weight-only work runs once, below.
  llvm::Expected<std::vector<exec::ResultSpec>> preparedSpecs =
      exec::hoistStatePreparation(*module, "forward", unsigned(model->concrete.state.size()));
  if (!preparedSpecs)
    fail(llvm::toString(preparedSpecs.takeError()));
  jit::JitOptions jitOptions;
  jitOptions.useBlas = !noBlasOpt;
  llvm::Expected<std::unique_ptr<jit::JitModule>> compiled =
      jit::JitModule::compile(*module, jitOptions);
  if (!compiled)
    fail(llvm::toString(compiled.takeError()));
  if (dumpLoweredOpt)
    module->print(llvm::errs());
  llvm::Expected<jit::JitModule::PackedFunction> entry = (*compiled)->lookupPacked("forward");
  if (!entry)
    fail(llvm::toString(entry.takeError()));
  double compileMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compileStart)
          .count();

  std::optional<runtime::LoadedWeights> weights =
      exec::bindModelWeights(*model, *weightsFile, diags);
  if (!weights)
    printDiagnosticsAndFail(diags, "the weights do not fit the model");

  // Arguments: state (state_dict order), the input, the output buffer.
  std::vector<runtime::Tensor> keepAlive;
  std::vector<std::vector<int64_t>> descriptors;
  for (const sema::InstantiatedState &s : model->concrete.state) {
    runtime::Tensor t = weights->find(s.name)->tensor.contiguous();
    descriptors.push_back(descriptorWords(t.data(), t.shape()));
    keepAlive.push_back(t);
  }
  llvm::Expected<std::vector<runtime::Tensor>> prepared =
      exec::runStatePreparation(**compiled, "forward", *preparedSpecs, descriptors);
  if (!prepared)
    fail(llvm::toString(prepared.takeError()));
  for (const runtime::Tensor &t : *prepared) {
    descriptors.push_back(descriptorWords(t.data(), t.shape()));
    keepAlive.push_back(t);
  }
  runtime::Tensor in = input->contiguous();
  descriptors.push_back(descriptorWords(in.data(), in.shape()));
  if (sig->results.size() != 1)
    fail("modelc-bench times entry fns with one result");
  runtime::Tensor output = runtime::Tensor::zeros(sig->results[0].dtype, sig->results[0].shape);
  descriptors.push_back(descriptorWords(output.mutableData(), output.shape()));
  std::vector<void *> pointers, packed;
  for (std::vector<int64_t> &d : descriptors)
    pointers.push_back(d.data());
  for (void *&p : pointers)
    packed.push_back(&p);
  auto forward = [&] { (*entry)(packed.data()); };

  // The executor `modelc run` uses, compiled the same way (its own JIT).
  exec::CompileModelOptions runOptions;
  runOptions.useBlas = !noBlasOpt;
  if (!dynamicBatchOpt)
    runOptions.staticDims = sig->dims;
  llvm::Expected<std::unique_ptr<exec::CompiledModel>> executor = exec::CompiledModel::create(
      *compilation.program(), compilation.sourceMgr(), *model, *weights, runOptions, diags);
  if (!executor)
    fail(llvm::toString(executor.takeError()));
  if (!*executor)
    printDiagnosticsAndFail(diags, "the executor did not compile");
  auto runForward = [&] {
    llvm::Expected<std::optional<runtime::Tensor>> result = (*executor)->call(inputs, diags);
    if (!result)
      fail(llvm::toString(result.takeError()));
    if (!*result)
      printDiagnosticsAndFail(diags, "the executor's call failed");
  };

  for (int i = 0; i < warmupOpt; ++i) {
    forward();
    runForward();
  }
  if (!outputOpt.empty())
    if (llvm::Error err = runtime::writeNpy(outputOpt, output))
      fail(llvm::toString(std::move(err)));
  llvm::outs() << llvm::format("{\"compile_ms\": %.3f, \"blas_threads\": %d}\n", compileMs,
                               blasThreads());
  llvm::outs().flush();

  std::string command;
  std::vector<int64_t> times;
  while (std::cin >> command) {
    if (command == "quit")
      break;
    if (command != "time" && command != "time-run")
      fail("unknown command '" + command + "'");
    bool throughExecutor = command == "time-run";
    int count = 0;
    std::cin >> count;
    times.assign(size_t(std::max(count, 0)), 0);
    for (int64_t &t : times) {
      auto start = std::chrono::steady_clock::now();
      if (throughExecutor)
        runForward();
      else
        forward();
      t = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                               start)
              .count();
    }
    for (size_t i = 0; i < times.size(); ++i)
      llvm::outs() << (i ? " " : "") << times[i];
    llvm::outs() << "\n";
    llvm::outs().flush();
  }
  return 0;
}
