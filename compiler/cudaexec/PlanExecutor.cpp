//===- PlanExecutor.cpp - Run a DevicePlan on GPUs and the cpu ------------===//

#include "cudaexec/PlanExecutor.h"

#include "runtime/InputCheck.h"
#include "runtime/MachineLoad.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>

namespace modelc::cudaexec {

using cudagen::Buffer;
using cudagen::BufferId;
using cudagen::BufferKind;
using cudagen::DevicePlan;

namespace {

llvm::Error planError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "device plan: " + message);
}

llvm::Error runError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Prefixes every message of `error` with `context`, keeping CudaError kinds.
llvm::Error withContext(llvm::Error error, const llvm::Twine &context) {
  return llvm::handleErrors(
      std::move(error),
      [&](const cuda::CudaError &cudaError) -> llvm::Error {
        return cuda::makeCudaError(cudaError.getKind(), context + cudaError.getMessage(),
                                   cudaError.getLog());
      },
      [&](const llvm::ErrorInfoBase &other) -> llvm::Error {
        return runError(context + other.message());
      });
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string bufferLabel(const Buffer &buffer, BufferId id) {
  std::string label = "buffer " + std::to_string(id);
  if (!buffer.name.empty())
    label += " (" + buffer.name + ")";
  return label;
}

/// A StridedMemRefType<T, N> descriptor of any rank over a row-major buffer.
struct MemRefDescriptor {
  llvm::SmallVector<int64_t, 12> words;
  MemRefDescriptor(void *data, llvm::ArrayRef<int64_t> shape) {
    auto address = int64_t(reinterpret_cast<intptr_t>(data));
    words = {address, address, 0};
    words.append(shape.begin(), shape.end());
    runtime::Shape strides = runtime::rowMajorStrides(shape);
    words.append(strides.begin(), strides.end());
  }
};

/// Each Step visited with the buffers it touches.
template <typename Fn> void forEachBufferOf(const cudagen::Step &step, Fn &&fn) {
  if (const auto *call = std::get_if<cudagen::CpuCall>(&step)) {
    llvm::for_each(call->arguments, fn);
    llvm::for_each(call->results, fn);
  } else if (const auto *launch = std::get_if<cudagen::Launch>(&step)) {
    for (const cudagen::KernelArg &arg : launch->args)
      if (arg.kind == cudagen::KernelArg::Kind::Buffer)
        fn(arg.buffer);
  } else if (const auto *copy = std::get_if<cudagen::Copy>(&step)) {
    fn(copy->source);
    fn(copy->destination);
  }
}

} // namespace

std::string describeKernelFailure(const DevicePlan &plan, int device, llvm::StringRef kernel,
                                  llvm::StringRef backendMessage) {
  std::string message;
  if (backendMessage.contains(("'" + kernel + "'").str()))
    message = backendMessage.str();
  else
    message =
        ("kernel '" + kernel + "' on cuda:" + llvm::Twine(device) + " failed: " + backendMessage)
            .str();
  if (const cudagen::KernelInfo *info = plan.kernel(device, kernel))
    if (!info->sourceLines.empty())
      message += "; generated from " + llvm::join(info->sourceLines, ", ");
  return message;
}

CpuRegions::~CpuRegions() = default;

std::string formatRunReport(const RunReport &report) {
  if (report.runs == 0)
    return {};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "CUDA graph: "
     << (report.graphCaptured   ? "captured"
         : report.graphReplayed ? "replayed"
                                : "not used (" + report.graphFallback + ")")
     << "\n";
  double kept = double(report.arenaBytes);
  os << (kept < (1 << 20) ? llvm::formatv("device memory kept: {0:f1} KiB\n", kept / 1024)
                          : llvm::formatv("device memory kept: {0:f1} MiB\n", kept / (1 << 20)));
  if (!report.gemmLibrary.empty() || !report.gemms.empty()) {
    os << "GEMMs: " << report.gemmLibrary << "\n";
    for (const GemmRun &gemm : report.gemms)
      os << "  " << gemm.label << (gemm.problem.empty() ? "" : " (" + gemm.problem + ")") << ": "
         << gemm.why << "\n";
  }
  return text;
}

//===----------------------------------------------------------------------===//
// State and per-run storage
//===----------------------------------------------------------------------===//

/// Where one buffer's bytes are during a run (or, for state, while bound).
struct PlanExecutor::StateSlot {
  runtime::Tensor host;            ///< cpu buffers
  cuda::DeviceAddress address = 0; ///< GPU buffers
  bool allocated = false;          ///< `address` is ours to free
};

/// How one GEMM of the plan runs, decided for the shapes of `problem`.
struct PlanExecutor::GemmRoute {
  /// The cuBLASLt problem for the shapes last routed; none: own kernels.
  std::optional<cuda::LtProblem> problem;
  std::unique_ptr<cuda::LtMatmul> matmul;
  cuda::LtAlgorithm algorithm;
  int rank = 0; ///< of `algorithm` in the heuristic's list
  bool library = false;
  std::string why;
};

/// The storage of one run; frees what it allocated on every path.
class PlanExecutor::RunState {
public:
  RunState(PlanExecutor &executor)
      : executor(executor), slots(executor.devicePlan.buffers.size()),
        shapes(executor.devicePlan.buffers.size()) {}
  ~RunState() {
    for (BufferId id = 0; id < slots.size(); ++id)
      llvm::consumeError(release(id));
  }

  llvm::Error release(BufferId id) {
    StateSlot &slot = slots[id];
    slot.host = runtime::Tensor();
    if (!slot.allocated)
      return llvm::Error::success();
    slot.allocated = false;
    int device = executor.devicePlan.buffers[id].device.index;
    return executor.backends[device]->free(device, slot.address);
  }

  size_t bytes(BufferId id) const {
    return size_t(runtime::checkedNumElements(shapes[id]).value_or(0)) *
           runtime::dtypeSize(executor.devicePlan.buffers[id].dtype);
  }

  PlanExecutor &executor;
  std::vector<StateSlot> slots;
  std::vector<runtime::Shape> shapes;
};

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

struct PlanExecutor::OutputBlocks {
  struct Block {
    cuda::CudaBackend *backend;
    int device;
    cuda::DeviceAddress address;
    size_t bytes;
  };
  /// Enough for a few results of each output kept by the caller at once.
  static constexpr size_t maxIdle = 8;

  std::mutex mutex;
  std::vector<Block> idle;
  bool closed = false; ///< the executor is gone: blocks given back are freed

  std::optional<cuda::DeviceAddress> take(int device, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t i = 0; i < idle.size(); ++i)
      if (idle[i].device == device && idle[i].bytes == bytes) {
        cuda::DeviceAddress address = idle[i].address;
        idle.erase(idle.begin() + i);
        return address;
      }
    return std::nullopt;
  }
  void give(const Block &block) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!closed && idle.size() < maxIdle) {
        idle.push_back(block);
        return;
      }
    }
    llvm::consumeError(block.backend->free(block.device, block.address));
  }
  void close() {
    std::vector<Block> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex);
      closed = true;
      blocks.swap(idle);
    }
    for (const Block &block : blocks)
      llvm::consumeError(block.backend->free(block.device, block.address));
  }
};

PlanExecutor::PlanExecutor(DevicePlan plan)
    : devicePlan(std::move(plan)), outputBlocks(std::make_shared<OutputBlocks>()) {}

PlanExecutor::~PlanExecutor() {
  outputBlocks->close();
  graph.reset();
  releaseArenas();
  releaseState();
}

llvm::Error PlanExecutor::validate() const {
  const DevicePlan &plan = devicePlan;
  size_t count = plan.buffers.size();
  auto checkId = [&](BufferId id, const llvm::Twine &where) -> llvm::Error {
    if (id >= count)
      return planError(where + " names buffer " + llvm::Twine(id) + " of " + llvm::Twine(count));
    return llvm::Error::success();
  };
  for (BufferId id = 0; id < count; ++id) {
    const Buffer &buffer = plan.buffers[id];
    if (buffer.id != id)
      return planError("buffer " + llvm::Twine(id) + " carries id " + llvm::Twine(buffer.id));
    if (!buffer.device.isCPU() && (buffer.device.index < 0 || buffer.device.index > 127))
      return planError(bufferLabel(buffer, id) + " is on " + buffer.device.str());
    if (!buffer.viewOf)
      continue;
    // Views of views are fine; a cycle is not.
    BufferId base = id;
    for (size_t hops = 0; plan.buffers[base].viewOf; ++hops) {
      if (hops > count)
        return planError(bufferLabel(buffer, id) + " is a view of itself");
      if (llvm::Error error = checkId(*plan.buffers[base].viewOf, bufferLabel(buffer, id)))
        return error;
      base = *plan.buffers[base].viewOf;
    }
    if (plan.buffers[base].device != buffer.device || plan.buffers[base].dtype != buffer.dtype)
      return planError(bufferLabel(buffer, id) + " views " + bufferLabel(plan.buffers[base], base) +
                       " of another device or dtype");
    if (buffer.kind == BufferKind::State || buffer.kind == BufferKind::Input)
      return planError(bufferLabel(buffer, id) + " is a view but bound from outside");
  }
  for (BufferKind kind : {BufferKind::State, BufferKind::Input, BufferKind::Output}) {
    std::vector<BufferId> ids = plan.buffersOfKind(kind);
    for (unsigned i = 0; i < ids.size(); ++i)
      if (plan.buffers[ids[i]].index != i)
        return planError("the " + cudagen::bufferKindName(kind) + " buffers are not numbered 0.." +
                         llvm::Twine(ids.size() - 1));
  }
  for (const cudagen::Symbol &symbol : plan.symbols) {
    if (llvm::Error error = checkId(symbol.input, "symbol `" + symbol.name + "`"))
      return error;
    const Buffer &input = plan.buffers[symbol.input];
    if (input.kind != BufferKind::Input || symbol.dim >= input.shape.size())
      return planError("symbol `" + symbol.name + "` is bound from no dim of an input");
  }
  for (size_t index = 0; index < plan.steps.size(); ++index) {
    const cudagen::Step &step = plan.steps[index];
    std::string where = "step " + std::to_string(index);
    llvm::Error error = llvm::Error::success();
    forEachBufferOf(step, [&](BufferId id) {
      if (!error)
        error = checkId(id, where);
    });
    if (error)
      return error;
    if (const auto *call = std::get_if<cudagen::CpuCall>(&step)) {
      if (plan.cpuModule.empty())
        return planError(where + " calls `" + call->function + "` but the plan has no cpu module");
      std::optional<BufferId> offDevice;
      forEachBufferOf(step, [&](BufferId id) {
        if (!plan.buffers[id].device.isCPU())
          offDevice = id;
      });
      if (offDevice)
        return planError(where + " passes " + bufferLabel(plan.buffers[*offDevice], *offDevice) +
                         " on " + plan.buffers[*offDevice].device.str() + " to the cpu");
    } else if (const auto *launch = std::get_if<cudagen::Launch>(&step)) {
      if (!plan.deviceCode(launch->device))
        return planError(where + " launches `" + launch->kernel +
                         "` on cuda:" + llvm::Twine(launch->device) + ", which has no code");
      for (const cudagen::KernelArg &arg : launch->args) {
        if (arg.kind != cudagen::KernelArg::Kind::Buffer)
          continue;
        const Buffer &buffer = plan.buffers[arg.buffer];
        if (buffer.device != runtime::Device::cuda(launch->device))
          return planError(where + " passes " + bufferLabel(buffer, arg.buffer) + " on " +
                           buffer.device.str() + " to kernel `" + launch->kernel +
                           "` on cuda:" + llvm::Twine(launch->device));
      }
    } else if (const auto *copy = std::get_if<cudagen::Copy>(&step)) {
      if (plan.buffers[copy->source].dtype != plan.buffers[copy->destination].dtype)
        return planError(where + " copies between buffers of different dtypes");
    }
  }
  return llvm::Error::success();
}

llvm::Expected<cuda::CudaKernel>
PlanExecutor::loadKernel(int device, const std::string &name,
                         llvm::ArrayRef<cuda::PrebuiltModule> prebuilt) {
  llvm::Expected<cuda::CudaKernel> found = cuda::CudaKernel();
  if (!prebuilt.empty()) {
    if (size_t(device) >= prebuilt.size())
      return planError("no prebuilt kernels for cuda:" + llvm::Twine(device));
    cuda::PrebuiltImage used;
    found = backends[device]->loadPrebuiltKernel(device, prebuilt[device], name, &used);
    if (found) {
      images.resize(std::max(images.size(), size_t(device) + 1));
      images[device] = used;
    }
  } else {
    const cudagen::DeviceCode *code = devicePlan.deviceCode(device);
    std::string sourceName = devicePlan.entry + ".cuda" + std::to_string(device) + ".cu";
    found = backends[device]->loadKernel(device, code->source, sourceName, name);
  }
  if (!found)
    return withContext(found.takeError(), "cuda:" + llvm::Twine(device) + ": ");
  return found;
}

llvm::Error PlanExecutor::loadKernels(const BackendProvider &provider,
                                      llvm::ArrayRef<cuda::PrebuiltModule> prebuilt) {
  // Every GPU first, so a missing driver is reported before any compiling.
  for (const Buffer &buffer : devicePlan.buffers)
    if (!buffer.device.isCPU() && size_t(buffer.device.index) >= backends.size())
      backends.resize(buffer.device.index + 1, nullptr);
  for (const cudagen::DeviceCode &code : devicePlan.devices)
    if (code.device >= 0 && size_t(code.device) >= backends.size())
      backends.resize(code.device + 1, nullptr);
  for (int device = 0; device < int(backends.size()); ++device) {
    bool used = llvm::any_of(devicePlan.buffers, [&](const Buffer &buffer) {
      return buffer.device == runtime::Device::cuda(device);
    });
    if (!used && !devicePlan.deviceCode(device))
      continue;
    llvm::Expected<cuda::CudaBackend &> backend = provider(device);
    if (!backend)
      return backend.takeError();
    backends[device] = &*backend;
  }

  auto start = std::chrono::steady_clock::now();
  llvm::StringMap<std::shared_ptr<const cuda::CudaKernel>> loaded;
  kernels.assign(devicePlan.steps.size(), nullptr);
  for (size_t index = 0; index < devicePlan.steps.size(); ++index) {
    const auto *launch = std::get_if<cudagen::Launch>(&devicePlan.steps[index]);
    if (!launch)
      continue;
    std::string key = std::to_string(launch->device) + ":" + launch->kernel;
    std::shared_ptr<const cuda::CudaKernel> &kernel = loaded[key];
    if (!kernel) {
      llvm::Expected<cuda::CudaKernel> found = loadKernel(launch->device, launch->kernel, prebuilt);
      if (!found)
        return found.takeError();
      kernel = std::make_shared<const cuda::CudaKernel>(std::move(*found));
    }
    kernels[index] = kernel;
  }
  times.kernelLoadSeconds = secondsSince(start);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<PlanExecutor>> PlanExecutor::compile(DevicePlan plan,
                                                                    PlanOptions options) {
  std::unique_ptr<PlanExecutor> executor(new PlanExecutor(std::move(plan)));
  if (llvm::Error error = executor->validate())
    return error;
  const DevicePlan &checked = executor->devicePlan;

  size_t count = checked.buffers.size();
  executor->storageOf.resize(count);
  for (BufferId id = 0; id < count; ++id) {
    BufferId base = id;
    while (checked.buffers[base].viewOf)
      base = *checked.buffers[base].viewOf;
    executor->storageOf[id] = base;
  }
  // A storage buffer lives until the last step touching it or any of its
  // views; one that holds an output or comes from outside lives to the end.
  std::vector<int> uses = checked.lastUses();
  uses.resize(count, -1);
  executor->lastUse.assign(count, -1);
  for (BufferId id = 0; id < count; ++id) {
    int &last = executor->lastUse[executor->storageOf[id]];
    last = std::max(last, uses[id]);
    if (checked.buffers[id].kind != BufferKind::Temporary)
      last = INT_MAX;
  }
  // ... and from the first step touching it (inputs: from before the steps).
  executor->firstUse.assign(count, INT_MAX);
  for (int index = 0; index < int(checked.steps.size()); ++index)
    forEachBufferOf(checked.steps[index], [&](BufferId id) {
      int &first = executor->firstUse[executor->storageOf[id]];
      first = std::min(first, index);
    });
  for (BufferId id = 0; id < count; ++id)
    if (checked.buffers[id].kind != BufferKind::Temporary)
      executor->firstUse[executor->storageOf[id]] = -1;

  // A graph can hold the whole plan when it runs on one GPU and never on
  // the cpu: kernels and copies within that GPU only.
  std::optional<int> only;
  bool graphable = !checked.steps.empty();
  for (const cudagen::Step &step : checked.steps) {
    int device = -1;
    if (const auto *launch = std::get_if<cudagen::Launch>(&step)) {
      device = launch->device;
    } else if (const auto *copy = std::get_if<cudagen::Copy>(&step)) {
      const Buffer &from = checked.buffers[copy->source];
      const Buffer &to = checked.buffers[copy->destination];
      if (!from.device.isCPU() && from.device == to.device)
        device = from.device.index;
    }
    if (device < 0 || (only && *only != device))
      graphable = false;
    only = device;
  }
  executor->graphDevice = graphable ? *only : -1;

  if (!options.backends)
    options.backends = backendProvider(cudaModeFromEnvironment());
  if (llvm::Error error = executor->loadKernels(options.backends, options.prebuilt))
    return error;
  if (llvm::Error error = executor->prepareGemms(options, options.prebuilt))
    return error;

  if (!checked.cpuModule.empty()) {
    if (!options.cpuRegions)
      return planError("the plan has a cpu module but nothing to compile it with");
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<std::unique_ptr<CpuRegions>> cpu = options.cpuRegions(checked);
    if (!cpu)
      return withContext(cpu.takeError(), "the plan's cpu module: ");
    executor->cpuCode = std::move(*cpu);
    executor->times.cpuJitSeconds = secondsSince(start);
  }
  return executor;
}

std::optional<cuda::PrebuiltImage> PlanExecutor::prebuiltImage(int device) const {
  if (device < 0 || size_t(device) >= images.size())
    return std::nullopt;
  return images[device];
}

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

void PlanExecutor::releaseState() {
  for (BufferId id = 0; id < state.size(); ++id) {
    StateSlot &slot = state[id];
    if (slot.allocated) {
      int device = devicePlan.buffers[id].device.index;
      llvm::consumeError(backends[device]->free(device, slot.address));
    }
  }
  state.clear();
}

void PlanExecutor::releaseArenas() {
  for (int device = 0; device < int(arenas.size()); ++device)
    if (arenas[device].capacity)
      llvm::consumeError(backends[device]->free(device, arenas[device].base));
  arenas.clear();
  for (BufferId id = 0; id < kept.size(); ++id)
    if (kept[id].allocated) {
      int device = devicePlan.buffers[id].device.index;
      llvm::consumeError(backends[device]->free(device, kept[id].address));
    }
  kept.clear();
  keptBytes.clear();
}

llvm::Error PlanExecutor::bindState(llvm::ArrayRef<runtime::Tensor> tensors) {
  std::lock_guard<std::mutex> lock(mutex);
  releaseState();
  std::vector<BufferId> ids = devicePlan.buffersOfKind(BufferKind::State);
  if (tensors.size() != ids.size())
    return runError("the plan has " + llvm::Twine(ids.size()) + " state buffer(s), " +
                    llvm::Twine(tensors.size()) + " given");
  state.resize(devicePlan.buffers.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const Buffer &buffer = devicePlan.buffers[ids[i]];
    const runtime::Tensor &given = tensors[i];
    runtime::Shape shape;
    for (const cudagen::SizeExpr &dim : buffer.shape) {
      llvm::Expected<int64_t> extent = dim.evaluate({});
      if (!extent) {
        releaseState();
        return withContext(extent.takeError(), "state `" + buffer.name + "`: ");
      }
      shape.push_back(*extent);
    }
    if (given.dtype() != buffer.dtype || given.shape() != llvm::ArrayRef<int64_t>(shape)) {
      std::string want = runtime::formatTensorType(buffer.dtype, shape, buffer.device);
      std::string have = given.str();
      releaseState();
      return runError("state `" + buffer.name + "` is " + want + ", given " + have);
    }
    runtime::Tensor contiguous = given.isContiguous() ? given : given.contiguous();
    StateSlot &slot = state[ids[i]];
    if (buffer.device.isCPU()) {
      // An owning copy: compiled code must never see memory-mapped weights
      // it could be tempted to write.
      slot.host = runtime::Tensor::copyOf(buffer.dtype, shape, contiguous.data());
      continue;
    }
    int device = buffer.device.index;
    llvm::Expected<cuda::DeviceAddress> address =
        backends[device]->allocate(device, std::max<size_t>(contiguous.nbytes(), 1));
    if (!address) {
      releaseState();
      return withContext(address.takeError(), "state `" + buffer.name + "`: ");
    }
    slot.address = *address;
    slot.allocated = true;
    if (llvm::Error error = backends[device]->copyHostToDevice(device, *address, contiguous.data(),
                                                               contiguous.nbytes())) {
      releaseState();
      return withContext(std::move(error), "state `" + buffer.name + "`: ");
    }
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {

/// The inputs against the plan's input buffers (runtime/InputCheck.h).
llvm::Error checkInputs(const DevicePlan &plan, llvm::ArrayRef<runtime::Tensor> inputs) {
  std::vector<BufferId> inputIds = plan.buffersOfKind(BufferKind::Input);
  // Host bytes carry any device label: the plan copies them where they go.
  std::vector<runtime::DeclaredInput> wants;
  for (BufferId id : inputIds) {
    runtime::DeclaredInput want;
    want.dtype = plan.buffers[id].dtype;
    for (const cudagen::SizeExpr &dim : plan.buffers[id].shape) {
      if (std::optional<int64_t> k = dim.constant())
        want.shape.push_back(runtime::DeclaredDim::ofConstant(*k));
      else if (dim.kind() == cudagen::SizeExpr::Kind::Symbol)
        want.shape.push_back(runtime::DeclaredDim::ofSymbol(dim.symbolName()));
      else {
        llvm::SmallVector<std::string, 2> symbols;
        dim.collectSymbols(symbols);
        want.shape.push_back(runtime::DeclaredDim::ofExpression(
            [dim](const llvm::StringMap<int64_t> &bound) -> std::optional<int64_t> {
              llvm::Expected<int64_t> value = dim.evaluate(bound);
              if (!value) {
                llvm::consumeError(value.takeError());
                return std::nullopt;
              }
              return *value;
            },
            std::vector<std::string>(symbols.begin(), symbols.end())));
      }
    }
    wants.push_back(std::move(want));
  }
  std::vector<runtime::GivenInput> haves;
  for (const runtime::Tensor &input : inputs)
    haves.push_back({input.dtype(), input.device(), input.shape()});

  runtime::InputBindings bindings;
  std::optional<std::string> problem;
  auto report = [&](const runtime::InputMismatch &m) {
    using Kind = runtime::InputMismatch::Kind;
    if (m.kind == Kind::Count) {
      problem = ("the plan takes " + llvm::Twine(inputIds.size()) + " input(s), " +
                 llvm::Twine(inputs.size()) + " given")
                    .str();
      return false;
    }
    const Buffer &buffer = plan.buffers[inputIds[m.input]];
    std::string given = "input " + std::to_string(m.input + 1) + " is " + inputs[m.input].str();
    if (m.kind == Kind::SymbolConflict) {
      problem = "symbolic dim `" + m.symbol + "` is " + std::to_string(m.expected) +
                " in one input and " + std::to_string(m.actual) + " in another";
    } else if (m.kind == Kind::Dim) {
      // The shape the plan wants for the dims bound so far.
      std::vector<std::string> dims;
      for (const cudagen::SizeExpr &dim : buffer.shape) {
        llvm::Expected<int64_t> value = dim.evaluate(bindings.symbols);
        dims.push_back(value ? std::to_string(*value) : dim.str());
        if (!value)
          llvm::consumeError(value.takeError());
      }
      problem = given + ", the plan wants " + runtime::dtypeName(buffer.dtype).str() + "[" +
                llvm::join(dims, ", ") + "] @ " + buffer.device.str();
    } else {
      problem = given + ", the plan wants " + runtime::dtypeName(buffer.dtype).str() + " of rank " +
                std::to_string(buffer.shape.size());
    }
    return false;
  };
  if (!runtime::bindInputs(wants, haves, bindings, report) ||
      !runtime::checkCompoundDims(wants, haves, bindings, report))
    return runError(*problem);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<runtime::Tensor>>
PlanExecutor::run(llvm::ArrayRef<runtime::Tensor> inputs, Residency residency) {
  std::lock_guard<std::mutex> lock(mutex);
  const DevicePlan &plan = devicePlan;
  std::vector<BufferId> stateIds = plan.buffersOfKind(BufferKind::State);
  if (!stateIds.empty() && state.empty())
    return runError("the plan's state is not bound");
  if (llvm::Error error = checkInputs(plan, inputs))
    return error;
  std::vector<runtime::Shape> inputShapes;
  for (const runtime::Tensor &input : inputs)
    inputShapes.emplace_back(input.shape().begin(), input.shape().end());
  llvm::Expected<cudagen::SymbolValues> symbols = plan.bindSymbols(inputShapes);
  if (!symbols)
    return symbols.takeError();
  auto evaluate = [&](const cudagen::SizeExpr &expr,
                      const llvm::Twine &what) -> llvm::Expected<int64_t> {
    llvm::Expected<int64_t> value = expr.evaluate(*symbols);
    if (!value)
      return withContext(value.takeError(), what + ": ");
    if (*value < 0)
      return runError(what + " is " + expr.str() + " = " + llvm::Twine(*value));
    return *value;
  };

  RunState run(*this);
  for (BufferId id = 0; id < plan.buffers.size(); ++id)
    for (const cudagen::SizeExpr &dim : plan.buffers[id].shape) {
      llvm::Expected<int64_t> extent =
          evaluate(dim, "a dim of " + bufferLabel(plan.buffers[id], id));
      if (!extent)
        return extent.takeError();
      run.shapes[id].push_back(*extent);
    }
  // Storage: state as bound, GPU buffers in the kept device memory, inputs
  // copied in (in place when the caller's device memory already holds them).
  report.graphCaptured = report.graphReplayed = false;
  for (BufferId id : plan.buffersOfKind(BufferKind::Input)) {
    const Buffer &buffer = plan.buffers[id];
    const runtime::Tensor &input = inputs[buffer.index];
    if (residency != Residency::OnDevice || buffer.device.isCPU() || storageOf[id] != id)
      continue;
    // The caller's device memory, used in place (kernels never write inputs).
    if (input.device() != buffer.device || !input.isContiguous())
      return runError("input " + llvm::Twine(buffer.index + 1) + " is " + input.str() +
                      ", the plan wants a dense tensor on " + buffer.device.str());
    run.slots[id].address = cuda::DeviceAddress(reinterpret_cast<uintptr_t>(input.data()));
  }
  if (llvm::Error error = placeBuffers(run, residency))
    return error;
  for (BufferId id = 0; id < plan.buffers.size(); ++id) {
    const Buffer &buffer = plan.buffers[id];
    if (storageOf[id] != id)
      continue;
    StateSlot &slot = run.slots[id];
    if (buffer.kind == BufferKind::State) {
      slot.host = state[id].host;
      slot.address = state[id].address;
      continue;
    }
    const runtime::Tensor *input =
        buffer.kind == BufferKind::Input ? &inputs[buffer.index] : nullptr;
    if (input && residency == Residency::OnDevice && !buffer.device.isCPU())
      continue; // the caller's address, taken above
    runtime::Tensor contiguous;
    if (input)
      contiguous = input->isContiguous() ? *input : input->contiguous();
    if (buffer.device.isCPU()) {
      slot.host = input ? contiguous : runtime::Tensor::zeros(buffer.dtype, run.shapes[id]);
      continue;
    }
    int device = buffer.device.index;
    if (input && run.bytes(id))
      if (llvm::Error error = backends[device]->copyHostToDeviceAsync(
              device, slot.address, contiguous.data(), run.bytes(id)))
        return withContext(std::move(error), "input " + llvm::Twine(buffer.index + 1) + ": ");
  }
  for (BufferId id = 0; id < plan.buffers.size(); ++id) {
    BufferId base = storageOf[id];
    if (base == id)
      continue;
    if (run.bytes(id) > run.bytes(base))
      return runError(bufferLabel(plan.buffers[id], id) + " views " +
                      bufferLabel(plan.buffers[base], base) + " but is larger");
    const StateSlot &storage = run.slots[base];
    if (plan.buffers[id].device.isCPU())
      run.slots[id].host = runtime::Tensor::borrowMutable(plan.buffers[id].dtype, run.shapes[id],
                                                          const_cast<void *>(storage.host.data()));
    else
      run.slots[id].address = storage.address;
  }

  ++report.runs;
  // Which GEMMs cuBLASLt runs, measured where not known: before any step,
  // so timing runs write only bytes the steps write again.
  if (llvm::Error error = routeGemms(run, *symbols))
    return error;
  if (llvm::Error error = runOnStreams(run, *symbols))
    return error;

  // Read the results back: the host waits for each GPU once, here.
  std::vector<runtime::Tensor> outputs;
  for (BufferId id : plan.buffersOfKind(BufferKind::Output)) {
    const Buffer &buffer = plan.buffers[id];
    const StateSlot &slot = run.slots[id];
    if (buffer.device.isCPU()) {
      outputs.push_back(runtime::Tensor::copyOf(buffer.dtype, run.shapes[id], slot.host.data()));
      continue;
    }
    int device = buffer.device.index;
    cuda::CudaBackend *backend = backends[device];
    if (residency == Residency::OnDevice) {
      // A copy of its own, given back with the tensor's last copy: the kept
      // memory is the next run's.
      size_t bytes = std::max<size_t>(run.bytes(id), 1);
      std::optional<cuda::DeviceAddress> reused = outputBlocks->take(device, bytes);
      llvm::Expected<cuda::DeviceAddress> address =
          reused ? llvm::Expected<cuda::DeviceAddress>(*reused) : backend->allocate(device, bytes);
      if (!address)
        return withContext(address.takeError(), "output " + llvm::Twine(buffer.index + 1) + ": ");
      std::shared_ptr<const void> release(
          reinterpret_cast<const void *>(uintptr_t(*address)),
          [blocks = outputBlocks, block = OutputBlocks::Block{backend, device, *address, bytes}](
              const void *) { blocks->give(block); });
      if (run.bytes(id))
        if (llvm::Error error =
                backend->copyDeviceToDeviceAsync(device, *address, slot.address, run.bytes(id)))
          return withContext(std::move(error), "output " + llvm::Twine(buffer.index + 1) + ": ");
      outputs.push_back(runtime::Tensor::borrowMutable(
          buffer.dtype, run.shapes[id], reinterpret_cast<void *>(uintptr_t(*address)), release,
          buffer.device));
      continue;
    }
    runtime::Tensor host = runtime::Tensor::zeros(buffer.dtype, run.shapes[id]);
    if (run.bytes(id))
      if (llvm::Error error = backend->copyDeviceToHostAsync(device, host.mutableData(),
                                                             slot.address, run.bytes(id)))
        return withContext(std::move(error), "output " + llvm::Twine(buffer.index + 1) + ": ");
    outputs.push_back(std::move(host));
  }
  // Results left on a GPU are read through its stream, which waits then.
  if (residency == Residency::HostBytes)
    if (llvm::Error error = synchronizeAll())
      return error;
  return outputs;
}

llvm::Error PlanExecutor::synchronizeAll() {
  for (int device = 0; device < int(backends.size()); ++device)
    if (backends[device])
      if (llvm::Error error = backends[device]->synchronize(device))
        return withContext(std::move(error),
                           "cuda:" + llvm::Twine(device) + ": the plan's work failed: ");
  return llvm::Error::success();
}

namespace {

size_t alignUp(size_t bytes) { return (bytes + 255) / 256 * 256; }

} // namespace

llvm::Error PlanExecutor::placeBuffers(RunState &run, Residency residency) {
  const DevicePlan &plan = devicePlan;
  size_t count = plan.buffers.size();
  kept.resize(count);
  keptBytes.resize(count, 0);
  arenas.resize(backends.size());
  report.arenaBytes = 0;
  for (int device = 0; device < int(backends.size()); ++device) {
    if (!backends[device])
      continue;
    cuda::CudaBackend &backend = *backends[device];
    // The buffers this run needs memory for on `device`, with when they live.
    struct Item {
      BufferId id;
      size_t bytes;
      size_t offset = 0;
    };
    std::vector<Item> items;
    for (BufferId id = 0; id < count; ++id) {
      const Buffer &buffer = plan.buffers[id];
      if (storageOf[id] != id || buffer.device != runtime::Device::cuda(device))
        continue;
      if (buffer.kind == BufferKind::State) {
        run.slots[id].address = state[id].address;
        continue;
      }
      if (buffer.kind == BufferKind::Input && residency == Residency::OnDevice)
        continue; // the caller's memory, used in place

      items.push_back({id, std::max<size_t>(run.bytes(id), 1)});
    }
    if (backend.separateAllocations()) {
      // One allocation per buffer, kept while its size stays the same.
      for (const Item &item : items) {
        StateSlot &slot = kept[item.id];
        if (slot.allocated && keptBytes[item.id] != item.bytes) {
          slot.allocated = false;
          if (llvm::Error error = backend.free(device, slot.address))
            return error;
        }
        if (!slot.allocated) {
          llvm::Expected<cuda::DeviceAddress> address = backend.allocate(device, item.bytes);
          if (!address)
            return withContext(address.takeError(),
                               bufferLabel(plan.buffers[item.id], item.id) + ": ");
          slot.address = *address;
          slot.allocated = true;
          keptBytes[item.id] = item.bytes;
        }
        run.slots[item.id].address = slot.address;
        report.arenaBytes += item.bytes;
      }
      continue;
    }
    // One arena: buffers whose lifetimes do not overlap share bytes.
    std::vector<const Item *> placed;
    size_t total = 0;
    for (Item &item : items) {
      auto overlapsInTime = [&](BufferId a, BufferId b) {
        return firstUse[a] <= lastUse[b] && firstUse[b] <= lastUse[a];
      };
      for (bool moved = true; moved;) {
        moved = false;
        for (const Item *other : placed)
          if (overlapsInTime(item.id, other->id) && item.offset < other->offset + other->bytes &&
              other->offset < item.offset + item.bytes) {
            item.offset = alignUp(other->offset + other->bytes);
            moved = true;
          }
      }
      placed.push_back(&item);
      total = std::max(total, item.offset + item.bytes);
    }
    // cuBLASLt's workspace: bytes of their own at the end, for the whole run.
    bool libraryWorkspace =
        size_t(device) < ltDevices.size() && ltDevices[device] &&
        llvm::any_of(plan.gemms, [&](const cudagen::GemmCall &g) { return g.device == device; });
    size_t workspaceOffset = alignUp(total);
    if (libraryWorkspace)
      total = workspaceOffset + ltWorkspaceBytes;
    Arena &arena = arenas[device];
    if (total > arena.capacity) {
      if (arena.capacity) {
        arena.capacity = 0;
        graph.reset(); // its kernels point into the old arena
        if (llvm::Error error = backend.free(device, arena.base))
          return error;
      }
      llvm::Expected<cuda::DeviceAddress> base = backend.allocate(device, total);
      if (!base) {
        std::string dims;
        for (const cudagen::Symbol &symbol : plan.symbols)
          dims += (dims.empty() ? "" : ", ") + symbol.name + " = " +
                  std::to_string(run.shapes[symbol.input][symbol.dim]);
        return withContext(
            base.takeError(),
            "cuda:" + llvm::Twine(device) + ": the plan's " + llvm::Twine(items.size()) +
                " buffer(s) need " + llvm::Twine(uint64_t(total)) + " bytes of device memory" +
                (dims.empty() ? "" : " for " + dims) + ", more than the device could allocate: ");
      }
      arena.base = *base;
      arena.capacity = total;
    }
    for (const Item &item : items)
      run.slots[item.id].address = arena.base + item.offset;
    if (libraryWorkspace)
      ltWorkspaces[device] = arena.base + workspaceOffset;
    report.arenaBytes += arena.capacity;
  }
  return llvm::Error::success();
}

llvm::Error PlanExecutor::runOnStreams(RunState &run, const cudagen::SymbolValues &symbols) {
  int device = graphDevice;
  if (device < 0)
    report.graphFallback = "the plan calls the cpu or spans GPUs";
  else if (!backends[device]->supportsGraphs())
    report.graphFallback = "the " + backends[device]->name().str() + " has no CUDA graphs";
  if (!report.graphFallback.empty())
    return runSteps(run, symbols);

  // A graph holds the kernels' arguments: it is valid for these dims and
  // these addresses only.
  std::vector<uint64_t> key;
  for (const cudagen::Symbol &symbol : devicePlan.symbols)
    key.push_back(uint64_t(symbols.lookup(symbol.name)));
  for (BufferId id = 0; id < devicePlan.buffers.size(); ++id)
    key.push_back(run.slots[id].address);
  // ... and for the way each GEMM runs.
  for (const GemmRoute &route : gemmRoutes)
    key.push_back(route.library ? uint64_t(1 + route.rank) : 0);
  key.insert(key.end(), ltWorkspaces.begin(), ltWorkspaces.end());
  cuda::CudaBackend &backend = *backends[device];
  if (graph && key == graphKey) {
    report.graphReplayed = true;
    return backend.launchGraph(device, *graph);
  }
  graph.reset();
  if (llvm::Error error = backend.beginCapture(device)) {
    // Documented fallback: run on the stream, and do not try again.
    report.graphFallback = "capturing a CUDA graph failed: " + llvm::toString(std::move(error));
    return runSteps(run, symbols);
  }
  llvm::Error stepsError = runSteps(run, symbols);
  llvm::Expected<std::unique_ptr<cuda::CudaGraph>> captured = backend.endCapture(device);
  if (stepsError) {
    if (!captured)
      llvm::consumeError(captured.takeError());
    return stepsError;
  }
  if (!captured) {
    report.graphFallback = "capturing a CUDA graph failed: " + llvm::toString(captured.takeError());
    return runSteps(run, symbols);
  }
  graph = std::move(*captured);
  graphKey = std::move(key);
  report.graphCaptured = true;
  return backend.launchGraph(device, *graph);
}

//===----------------------------------------------------------------------===//
// GEMMs a library can run
//===----------------------------------------------------------------------===//

namespace {

/// cuBLASLt's algorithms a measurement times (the heuristic's first ones).
constexpr int MeasuredAlgorithms = 4;

} // namespace

llvm::Error PlanExecutor::prepareGemms(const PlanOptions &options,
                                       llvm::ArrayRef<cuda::PrebuiltModule> prebuilt) {
  const DevicePlan &plan = devicePlan;
  gemmBackend = options.gemm ? *options.gemm : gemmBackendFromEnvironment();
  ltWorkspaceBytes = options.cublasLtWorkspaceBytes;
  gemmRoutes.clear();
  gemmRoutes.resize(plan.gemms.size());
  gemmStartingAt.assign(plan.steps.size(), -1);
  afterKernels.assign(plan.gemms.size(), nullptr);
  ltDevices.assign(backends.size(), std::nullopt);
  ltWorkspaces.assign(backends.size(), 0);
  if (plan.gemms.empty())
    return llvm::Error::success();

  auto start = std::chrono::steady_clock::now();
  std::set<int> devices;
  std::vector<bool> claimed(plan.steps.size(), false);
  for (size_t index = 0; index < plan.gemms.size(); ++index) {
    const cudagen::GemmCall &gemm = plan.gemms[index];
    std::string where = "gemm " + std::to_string(index) + " (" + gemm.label + ")";
    if (gemm.device < 0 || size_t(gemm.device) >= backends.size() || !backends[gemm.device])
      return planError(where + " is on cuda:" + llvm::Twine(gemm.device) + ", which has no code");
    if (size_t(gemm.firstStep) + gemm.stepCount > plan.steps.size() || gemm.stepCount == 0)
      return planError(where + " names steps beyond the plan's");
    for (size_t step = gemm.firstStep; step < gemm.firstStep + gemm.stepCount; ++step) {
      const auto *launch = std::get_if<cudagen::Launch>(&plan.steps[step]);
      if (!launch || launch->device != gemm.device || claimed[step])
        return planError(where + ": step " + llvm::Twine(step) +
                         " is no launch of its own on its GPU");
      claimed[step] = true;
    }
    llvm::SmallVector<BufferId, 5> operands = {gemm.a.buffer, gemm.b.buffer, gemm.out};
    for (const std::optional<BufferId> &extra : {gemm.bias, gemm.residual})
      if (extra)
        operands.push_back(*extra);
    for (BufferId id : operands)
      if (id >= plan.buffers.size() ||
          plan.buffers[id].device != runtime::Device::cuda(gemm.device))
        return planError(where + " reads or writes a buffer that is not on its GPU");
    gemmStartingAt[gemm.firstStep] = int(index);
    if (gemm.after) {
      if (gemm.after->device != gemm.device)
        return planError(where + ": its after kernel is on another GPU");
      for (const cudagen::KernelArg &arg : gemm.after->args)
        if (arg.kind == cudagen::KernelArg::Kind::Buffer &&
            (arg.buffer >= plan.buffers.size() ||
             plan.buffers[arg.buffer].device != runtime::Device::cuda(gemm.device)))
          return planError(where + ": its after kernel takes a buffer that is not on its GPU");
      llvm::Expected<cuda::CudaKernel> kernel =
          loadKernel(gemm.device, gemm.after->kernel, prebuilt);
      if (!kernel)
        return kernel.takeError();
      afterKernels[index] = std::make_shared<const cuda::CudaKernel>(std::move(*kernel));
    }
    devices.insert(gemm.device);
  }
  times.kernelLoadSeconds += secondsSince(start);

  // cuBLASLt on each GPU with GEMMs; where it is not, the own kernels run.
  std::vector<std::string> status;
  for (int device : devices) {
    cuda::CudaBackend &backend = *backends[device];
    if (gemmBackend == GemmBackend::Own) {
      status.push_back(std::string("cuBLASLt is not used: own kernels asked for (") +
                       (options.gemm ? "PlanOptions::gemm" : "MODELC_CUDA_GEMM=own") + ")");
      break;
    }
    llvm::Expected<cuda::LtDevice> lt = backend.cublasLt(device);
    if (!lt) {
      std::string why;
      cuda::consumeCudaErrorKind(lt.takeError(), &why);
      status.push_back(why);
      continue;
    }
    if (backend.separateAllocations()) {
      status.push_back("cuBLASLt is not used: the " + backend.name().str() +
                       " keeps every buffer apart");
      continue;
    }
    ltDevices[device] = *lt;
    status.push_back(llvm::formatv("cuBLASLt {0} ({1}) on cuda:{2}", lt->library->versionString(),
                                   lt->library->path(), device)
                         .str());
  }
  ltStatus = llvm::join(status, "; ");
  return llvm::Error::success();
}

llvm::Error PlanExecutor::routeGemms(RunState &run, const cudagen::SymbolValues &symbols) {
  const DevicePlan &plan = devicePlan;
  report.gemmLibrary = ltStatus;
  report.gemms.clear();
  for (size_t index = 0; index < plan.gemms.size(); ++index) {
    const cudagen::GemmCall &gemm = plan.gemms[index];
    GemmRoute &route = gemmRoutes[index];
    auto own = [&](const llvm::Twine &why) {
      route.library = false;
      route.matmul.reset();
      route.why = why.str();
    };
    llvm::Expected<cuda::LtProblem> problem = ltProblemOf(gemm, symbols);
    const std::optional<cuda::LtDevice> &lt = ltDevices[gemm.device];
    if (!problem) {
      route.problem.reset();
      own("own kernels: " + llvm::toString(problem.takeError()));
    } else if (route.problem && *route.problem == *problem) {
      // Decided for these shapes already.
    } else if (route.problem = *problem; !lt) {
      own(ltStatus);
    } else {
      llvm::Expected<std::unique_ptr<cuda::LtMatmul>> matmul = lt->library->prepare(*problem);
      llvm::Expected<std::vector<cuda::LtAlgorithm>> algorithms =
          matmul
              ? lt->library->algorithms(lt->handle, **matmul, ltWorkspaceBytes, MeasuredAlgorithms)
              : llvm::Expected<std::vector<cuda::LtAlgorithm>>(matmul.takeError());
      if (!algorithms) {
        own("own kernels: cuBLASLt cannot run it: " + llvm::toString(algorithms.takeError()));
      } else {
        route.matmul = std::move(*matmul);
        std::optional<GemmChoice> choice;
        std::string why;
        if (gemmBackend == GemmBackend::CublasLt) {
          choice = GemmChoice{true, 0};
          why = "cuBLASLt asked for (MODELC_CUDA_GEMM=cublaslt)";
        } else {
          std::string key = gemmClassKey(*problem, gemm.after.has_value());
          choice = GemmChoiceTable::global().lookup(lt->identity, key);
          why = "chosen before on this GPU for shape class " + key;
          if (!choice) {
            llvm::Expected<GemmChoice> measured =
                measureGemm(index, run, symbols, *algorithms, why);
            if (!measured)
              return measured.takeError();
            choice = *measured;
            GemmChoiceTable::global().record(lt->identity, key, *choice,
                                             runtime::machineBusyForMeasuring());
          }
        }
        route.library = choice->library;
        route.rank = std::min(choice->algorithm, int(algorithms->size()) - 1);
        route.algorithm = (*algorithms)[size_t(route.rank)];
        route.why = (route.library ? "cuBLASLt: " : "own kernels: ") + why;
      }
    }
    report.gemms.push_back({gemm.label, route.problem ? route.problem->str() : std::string(),
                            route.library, route.why});
  }
  return llvm::Error::success();
}

llvm::Expected<GemmChoice> PlanExecutor::measureGemm(size_t index, RunState &run,
                                                     const cudagen::SymbolValues &symbols,
                                                     llvm::ArrayRef<cuda::LtAlgorithm> algorithms,
                                                     std::string &why) {
  const cudagen::GemmCall &gemm = devicePlan.gemms[index];
  int device = gemm.device;
  cuda::CudaBackend &backend = *backends[device];
  // Milliseconds per run: one run to warm up and size the batch, then
  // enough back-to-back runs for about a millisecond (3 to 20).
  auto timeOf = [&](llvm::function_ref<llvm::Error()> once) -> llvm::Expected<double> {
    llvm::Expected<double> first = backend.timeOnStream(device, once);
    if (!first)
      return first.takeError();
    int runs = int(std::clamp(1.0 / std::max(*first, 1e-3), 3.0, 20.0));
    llvm::Expected<double> total = backend.timeOnStream(device, [&]() -> llvm::Error {
      for (int r = 0; r < runs; ++r)
        if (llvm::Error error = once())
          return error;
      return llvm::Error::success();
    });
    if (!total)
      return total.takeError();
    return *total / runs;
  };
  llvm::Expected<double> own = timeOf([&] {
    return runSteps(run, symbols, gemm.firstStep, gemm.firstStep + gemm.stepCount,
                    /*ownGemms=*/true);
  });
  if (!own)
    return withContext(own.takeError(), "measuring " + gemm.label + ": ");
  GemmChoice best;
  double libraryMs = INFINITY;
  std::string failures;
  for (size_t rank = 0; rank < algorithms.size(); ++rank) {
    llvm::Expected<double> ms =
        timeOf([&] { return runLibraryGemm(index, run, symbols, algorithms[rank]); });
    if (!ms) {
      // An algorithm that fails is not chosen; the others still compete.
      failures +=
          "; algorithm " + std::to_string(rank + 1) + " failed: " + llvm::toString(ms.takeError());
      continue;
    }
    if (*ms < libraryMs) {
      libraryMs = *ms;
      best.algorithm = int(rank);
    }
  }
  best.library = libraryMs < *own;
  why = llvm::formatv("measured: cuBLASLt {0} (algorithm {1} of {2}), own kernels {3:f3} ms",
                      std::isinf(libraryMs) ? std::string("failed")
                                            : llvm::formatv("{0:f3} ms", libraryMs).str(),
                      best.algorithm + 1, algorithms.size(), *own)
            .str();
  why += failures;
  return best;
}

llvm::Error PlanExecutor::runLibraryGemm(size_t index, RunState &run,
                                         const cudagen::SymbolValues &symbols,
                                         const cuda::LtAlgorithm &algorithm) {
  const cudagen::GemmCall &gemm = devicePlan.gemms[index];
  const GemmRoute &route = gemmRoutes[index];
  int device = gemm.device;
  // Column-major out^T = b^T a^T: cuBLASLt's A is the plan's b (ltProblemOf).
  cuda::LtOperands operands;
  operands.a = run.slots[gemm.b.buffer].address;
  operands.b = run.slots[gemm.a.buffer].address;
  operands.d = run.slots[gemm.out].address;
  if (gemm.residual)
    operands.c = run.slots[*gemm.residual].address;
  if (gemm.bias)
    operands.bias = run.slots[*gemm.bias].address;
  operands.workspace = ltWorkspaces[device];
  operands.workspaceBytes = ltWorkspaceBytes;
  if (llvm::Error error =
          backends[device]->cublasLtMatmulAsync(device, *route.matmul, algorithm, operands))
    return withContext(std::move(error), gemm.label + ": ");
  if (gemm.after)
    return launchStep(*gemm.after, *afterKernels[index], run, symbols);
  return llvm::Error::success();
}

llvm::Error PlanExecutor::launchStep(const cudagen::Launch &launch, const cuda::CudaKernel &kernel,
                                     RunState &run, const cudagen::SymbolValues &symbols) {
  const DevicePlan &plan = devicePlan;
  auto evaluate = [&](const cudagen::SizeExpr &expr,
                      const llvm::Twine &what) -> llvm::Expected<int64_t> {
    llvm::Expected<int64_t> value = expr.evaluate(symbols);
    if (!value)
      return withContext(value.takeError(), what + ": ");
    if (*value < 0)
      return runError(what + " is " + expr.str() + " = " + llvm::Twine(*value));
    return *value;
  };
  std::string what = "kernel `" + launch.kernel + "`";
  cuda::Dim3 grid, block;
  unsigned *gridDims[3] = {&grid.x, &grid.y, &grid.z};
  unsigned *blockDims[3] = {&block.x, &block.y, &block.z};
  bool empty = false;
  for (int d = 0; d < 3; ++d) {
    llvm::Expected<int64_t> g = evaluate(launch.grid[d], "the grid of " + what);
    if (!g)
      return g.takeError();
    llvm::Expected<int64_t> b = evaluate(launch.block[d], "the block of " + what);
    if (!b)
      return b.takeError();
    if (*g > UINT_MAX || *b > UINT_MAX)
      return runError("the launch of " + what + " is too large");
    empty |= *g == 0;
    *gridDims[d] = unsigned(*g);
    *blockDims[d] = unsigned(*b);
  }
  if (empty)
    return llvm::Error::success();
  llvm::Expected<int64_t> shared =
      evaluate(launch.dynamicSharedBytes, "the shared memory of " + what);
  if (!shared)
    return shared.takeError();
  // One 8-byte slot per parameter: a device pointer or an int64_t.
  llvm::SmallVector<uint64_t, 16> values;
  for (const cudagen::KernelArg &arg : launch.args) {
    if (arg.kind == cudagen::KernelArg::Kind::Buffer) {
      values.push_back(run.slots[arg.buffer].address);
      continue;
    }
    llvm::Expected<int64_t> size = arg.size.evaluate(symbols);
    if (!size)
      return withContext(size.takeError(), "an argument of " + what + ": ");
    values.push_back(uint64_t(*size));
  }
  llvm::SmallVector<void *, 16> args;
  for (uint64_t &value : values)
    args.push_back(&value);
  if (llvm::Error error =
          backends[launch.device]->launchAsync(kernel, grid, block, args.data(), size_t(*shared))) {
    int device = launch.device;
    return llvm::handleErrors(
        std::move(error),
        [&](const cuda::CudaError &failure) -> llvm::Error {
          return cuda::makeCudaError(
              failure.getKind(),
              describeKernelFailure(plan, device, launch.kernel, failure.getMessage()),
              failure.getLog());
        },
        [&](const llvm::ErrorInfoBase &failure) -> llvm::Error {
          return runError(describeKernelFailure(plan, device, launch.kernel, failure.message()));
        });
  }
  return llvm::Error::success();
}

llvm::Error PlanExecutor::runSteps(RunState &run, const cudagen::SymbolValues &symbols,
                                   size_t begin, size_t end, bool ownGemms) {
  const DevicePlan &plan = devicePlan;
  for (size_t index = begin; index < end; ++index) {
    if (int gemm = ownGemms ? -1 : gemmStartingAt[index]; gemm >= 0 && gemmRoutes[gemm].library) {
      GemmRoute &route = gemmRoutes[gemm];
      llvm::Error error = runLibraryGemm(size_t(gemm), run, symbols, route.algorithm);
      if (!error) {
        index += plan.gemms[gemm].stepCount - 1;
        continue;
      }
      // Documented fallback: a cuBLASLt call that fails (nothing was
      // enqueued) leaves this GEMM to its own kernels from now on.
      std::string why;
      error = llvm::handleErrors(std::move(error),
                                 [&](std::unique_ptr<cuda::CudaError> failure) -> llvm::Error {
                                   if (failure->getKind() != cuda::CudaErrorKind::LibraryCallFailed)
                                     return llvm::Error(std::move(failure));
                                   why = failure->getMessage().str();
                                   return llvm::Error::success();
                                 });
      if (error)
        return error;
      route.library = false;
      route.why = "own kernels: cuBLASLt failed: " + why;
      if (size_t(gemm) < report.gemms.size()) {
        report.gemms[gemm].library = false;
        report.gemms[gemm].why = route.why;
      }
    }
    const cudagen::Step &step = plan.steps[index];
    if (const auto *call = std::get_if<cudagen::CpuCall>(&step)) {
      std::vector<MemRefDescriptor> descriptors;
      for (BufferId id : llvm::concat<const BufferId>(call->arguments, call->results))
        descriptors.emplace_back(const_cast<void *>(run.slots[id].host.data()), run.shapes[id]);
      llvm::SmallVector<void *> pointers;
      for (MemRefDescriptor &descriptor : descriptors)
        pointers.push_back(descriptor.words.data());
      if (llvm::Error error = cpuCode->call(call->function, pointers))
        return withContext(std::move(error), "cpu function `" + call->function + "`: ");
    } else if (const auto *launch = std::get_if<cudagen::Launch>(&step)) {
      if (llvm::Error error = launchStep(*launch, *kernels[index], run, symbols))
        return error;
    } else if (const auto *copy = std::get_if<cudagen::Copy>(&step)) {
      const Buffer &from = plan.buffers[copy->source];
      const Buffer &to = plan.buffers[copy->destination];
      size_t bytes = run.bytes(copy->source);
      std::string what = "copy of " + bufferLabel(from, copy->source) + " from " +
                         from.device.str() + " to " + to.device.str() + ": ";
      if (bytes != run.bytes(copy->destination))
        return runError(what + "the destination has " + llvm::Twine(run.bytes(copy->destination)) +
                        " bytes, the source " + llvm::Twine(bytes));
      const StateSlot &source = run.slots[copy->source];
      const StateSlot &destination = run.slots[copy->destination];
      auto transfer = [&]() -> llvm::Error {
        if (bytes == 0)
          return llvm::Error::success();
        if (from.device.isCPU() && to.device.isCPU()) {
          std::memcpy(const_cast<void *>(destination.host.data()), source.host.data(), bytes);
          return llvm::Error::success();
        }
        if (from.device.isCPU())
          return backends[to.device.index]->copyHostToDeviceAsync(
              to.device.index, destination.address, source.host.data(), bytes);
        if (to.device.isCPU()) {
          // The cpu reads these bytes next: wait for them.
          cuda::CudaBackend &backend = *backends[from.device.index];
          if (llvm::Error error = backend.copyDeviceToHostAsync(
                  from.device.index, const_cast<void *>(destination.host.data()), source.address,
                  bytes))
            return error;
          return backend.synchronize(from.device.index);
        }
        if (from.device == to.device)
          return backends[to.device.index]->copyDeviceToDeviceAsync(
              to.device.index, destination.address, source.address, bytes);
        // Between GPUs: the source's work first, then a copy that the
        // destination's later work follows.
        if (llvm::Error error = backends[from.device.index]->synchronize(from.device.index))
          return error;
        if (llvm::Error error = backends[to.device.index]->synchronize(to.device.index))
          return error;
        return backends[to.device.index]->copyPeer(to.device.index, destination.address,
                                                   from.device.index, source.address, bytes);
      };
      if (llvm::Error error = transfer())
        return withContext(std::move(error), what);
    }
  }

  return llvm::Error::success();
}

} // namespace modelc::cudaexec
