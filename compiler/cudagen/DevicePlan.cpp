//===- DevicePlan.cpp - Plan queries and the plan's JSON form -------------===//

#include "cudagen/DevicePlan.h"

#include "llvm/Support/FormatVariadic.h"

namespace modelc::cudagen {

namespace json = llvm::json;

constexpr int64_t PlanFormatVersion = 1;

SizeExpr Buffer::byteSize() const {
  return SizeExpr(int64_t(runtime::dtypeSize(dtype))) * numElements();
}

llvm::StringRef gemmActivationName(GemmActivation activation) {
  switch (activation) {
  case GemmActivation::None:
    return "none";
  case GemmActivation::Relu:
    return "relu";
  case GemmActivation::GeluTanh:
    return "gelu_tanh";
  }
  return "none";
}

llvm::StringRef bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::State:
    return "state";
  case BufferKind::Input:
    return "input";
  case BufferKind::Output:
    return "output";
  case BufferKind::Temporary:
    return "temporary";
  }
  return "temporary";
}

std::vector<BufferId> DevicePlan::buffersOfKind(BufferKind kind) const {
  std::vector<BufferId> ids;
  for (const Buffer &b : buffers)
    if (b.kind == kind)
      ids.push_back(b.id);
  llvm::stable_sort(ids,
                    [&](BufferId a, BufferId b) { return buffers[a].index < buffers[b].index; });
  return ids;
}

const DeviceCode *DevicePlan::deviceCode(int device) const {
  for (const DeviceCode &code : devices)
    if (code.device == device)
      return &code;
  return nullptr;
}

const KernelInfo *DevicePlan::kernel(int device, llvm::StringRef name) const {
  if (const DeviceCode *code = deviceCode(device))
    for (const KernelInfo &k : code->kernels)
      if (k.name == name)
        return &k;
  return nullptr;
}

llvm::Expected<SymbolValues>
DevicePlan::bindSymbols(llvm::ArrayRef<runtime::Shape> inputShapes) const {
  std::vector<BufferId> inputs = buffersOfKind(BufferKind::Input);
  if (inputShapes.size() != inputs.size())
    return llvm::createStringError(
        llvm::formatv("{0} takes {1} input(s), got {2}", entry, inputs.size(), inputShapes.size())
            .str());
  SymbolValues values;
  for (const Symbol &s : symbols) {
    const Buffer &b = buffer(s.input);
    if (b.kind != BufferKind::Input || b.index >= inputShapes.size() ||
        s.dim >= inputShapes[b.index].size())
      return llvm::createStringError(
          llvm::formatv("symbolic dim `{0}` is bound to dim {1} of input {2}, which it lacks",
                        s.name, s.dim, b.index)
              .str());
    int64_t value = inputShapes[b.index][s.dim];
    auto [it, inserted] = values.try_emplace(s.name, value);
    if (!inserted && it->second != value)
      return llvm::createStringError(
          llvm::formatv("symbolic dim `{0}` is {1} in one input and {2} in another", s.name,
                        it->second, value)
              .str());
  }
  return values;
}

std::vector<int> DevicePlan::lastUses() const {
  std::vector<int> last(buffers.size(), -1);
  auto use = [&](BufferId id, int step) {
    if (id < last.size())
      last[id] = step;
    // A view keeps the bytes it looks at alive.
    if (id < buffers.size() && buffers[id].viewOf && *buffers[id].viewOf < last.size())
      last[*buffers[id].viewOf] = std::max(last[*buffers[id].viewOf], step);
  };
  for (int i = 0; i < int(steps.size()); ++i) {
    if (const auto *call = std::get_if<CpuCall>(&steps[i])) {
      for (BufferId id : call->arguments)
        use(id, i);
      for (BufferId id : call->results)
        use(id, i);
    } else if (const auto *launch = std::get_if<Launch>(&steps[i])) {
      for (const KernelArg &arg : launch->args)
        if (arg.kind == KernelArg::Kind::Buffer)
          use(arg.buffer, i);
    } else if (const auto *copy = std::get_if<Copy>(&steps[i])) {
      use(copy->source, i);
      use(copy->destination, i);
    }
  }
  return last;
}

//===----------------------------------------------------------------------===//
// Writing JSON
//===----------------------------------------------------------------------===//

namespace {

json::Value sizeToJSON(const SizeExpr &e) {
  if (std::optional<int64_t> c = e.constant())
    return *c;
  return e.str();
}

template <typename Range> json::Array sizesToJSON(const Range &sizes) {
  json::Array a;
  for (const SizeExpr &e : sizes)
    a.push_back(sizeToJSON(e));
  return a;
}

template <typename T> json::Array idsToJSON(const std::vector<T> &ids) {
  json::Array a;
  for (T id : ids)
    a.push_back(int64_t(id));
  return a;
}

json::Value stepToJSON(const Step &step) {
  if (const auto *call = std::get_if<CpuCall>(&step))
    return json::Object{{"op", "cpu_call"},
                        {"function", call->function},
                        {"arguments", idsToJSON(call->arguments)},
                        {"results", idsToJSON(call->results)}};
  if (const auto *copy = std::get_if<Copy>(&step))
    return json::Object{{"op", "copy"},
                        {"source", int64_t(copy->source)},
                        {"destination", int64_t(copy->destination)}};
  const Launch &launch = std::get<Launch>(step);
  json::Array args;
  for (const KernelArg &arg : launch.args) {
    if (arg.kind == KernelArg::Kind::Buffer)
      args.push_back(json::Object{{"buffer", int64_t(arg.buffer)}});
    else
      args.push_back(json::Object{{"size", sizeToJSON(arg.size)}});
  }
  return json::Object{{"op", "launch"},
                      {"device", launch.device},
                      {"kernel", launch.kernel},
                      {"grid", sizesToJSON(launch.grid)},
                      {"block", sizesToJSON(launch.block)},
                      {"dynamic_shared_bytes", sizeToJSON(launch.dynamicSharedBytes)},
                      {"args", std::move(args)}};
}

json::Value operandToJSON(const GemmOperand &operand) {
  return json::Object{{"buffer", int64_t(operand.buffer)},
                      {"transposed", operand.transposed},
                      {"ld", sizeToJSON(operand.ld)},
                      {"batch_stride", sizeToJSON(operand.batchStride)}};
}

json::Value gemmToJSON(const GemmCall &gemm) {
  json::Object o{{"device", gemm.device},
                 {"first_step", int64_t(gemm.firstStep)},
                 {"step_count", int64_t(gemm.stepCount)},
                 {"input_dtype", runtime::dtypeName(gemm.inputType)},
                 {"output_dtype", runtime::dtypeName(gemm.outputType)},
                 {"m", sizeToJSON(gemm.m)},
                 {"n", sizeToJSON(gemm.n)},
                 {"k", sizeToJSON(gemm.k)},
                 {"batch", sizeToJSON(gemm.batch)},
                 {"a", operandToJSON(gemm.a)},
                 {"b", operandToJSON(gemm.b)},
                 {"out", int64_t(gemm.out)},
                 {"activation", gemmActivationName(gemm.activation)},
                 {"tf32", gemm.tf32},
                 {"label", gemm.label}};
  if (gemm.bias)
    o["bias"] = int64_t(*gemm.bias);
  if (gemm.residual)
    o["residual"] = int64_t(*gemm.residual);
  if (gemm.after)
    o["after"] = stepToJSON(*gemm.after);
  return o;
}

} // namespace

json::Value toJSON(const DevicePlan &plan) {
  json::Array symbols;
  for (const Symbol &s : plan.symbols)
    symbols.push_back(
        json::Object{{"name", s.name}, {"input", int64_t(s.input)}, {"dim", int64_t(s.dim)}});
  json::Array buffers;
  for (const Buffer &b : plan.buffers) {
    json::Object o{{"id", int64_t(b.id)},
                   {"device", b.device.str()},
                   {"dtype", runtime::dtypeName(b.dtype)},
                   {"shape", sizesToJSON(b.shape)},
                   {"kind", bufferKindName(b.kind)}};
    if (b.kind != BufferKind::Temporary) {
      o["name"] = b.name;
      o["index"] = int64_t(b.index);
    }
    if (b.viewOf)
      o["view_of"] = int64_t(*b.viewOf);
    buffers.push_back(std::move(o));
  }
  json::Array steps;
  for (const Step &s : plan.steps)
    steps.push_back(stepToJSON(s));
  json::Array devices;
  for (const DeviceCode &code : plan.devices) {
    json::Array kernels;
    for (const KernelInfo &k : code.kernels) {
      json::Array lines;
      for (const std::string &l : k.sourceLines)
        lines.push_back(l);
      kernels.push_back(json::Object{{"name", k.name},
                                     {"category", k.category},
                                     {"source_lines", std::move(lines)},
                                     {"flops", sizeToJSON(k.flops)},
                                     {"bytes_read", sizeToJSON(k.bytesRead)},
                                     {"bytes_written", sizeToJSON(k.bytesWritten)}});
    }
    devices.push_back(json::Object{
        {"device", code.device}, {"source", code.source}, {"kernels", std::move(kernels)}});
  }
  json::Object result{{"format", "modelc-device-plan"},
                      {"version", PlanFormatVersion},
                      {"entry", plan.entry},
                      {"symbols", std::move(symbols)},
                      {"buffers", std::move(buffers)},
                      {"steps", std::move(steps)},
                      {"cpu_module", plan.cpuModule},
                      {"devices", std::move(devices)}};
  // Optional, so plans written before GEMM calls existed still read.
  if (!plan.gemms.empty()) {
    json::Array gemms;
    for (const GemmCall &gemm : plan.gemms)
      gemms.push_back(gemmToJSON(gemm));
    result["gemms"] = std::move(gemms);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Reading JSON
//===----------------------------------------------------------------------===//

namespace {

/// Reads a plan, failing with the JSON path of the first problem.
class PlanReader {
public:
  llvm::Expected<DevicePlan> read(const json::Value &value) {
    json::Path::Root root("plan");
    DevicePlan plan;
    if (!readPlan(value, plan, json::Path(root)))
      return root.getError();
    return plan;
  }

private:
  bool fail(json::Path path, llvm::StringLiteral message) {
    path.report(message);
    return false;
  }

  const json::Object *object(const json::Value &v, json::Path path) {
    const json::Object *o = v.getAsObject();
    if (!o)
      path.report("expected an object");
    return o;
  }

  const json::Array *array(const json::Object &o, llvm::StringRef key, json::Path path) {
    const json::Value *v = o.get(key);
    const json::Array *a = v ? v->getAsArray() : nullptr;
    if (!a)
      path.field(key).report("expected an array");
    return a;
  }

  bool string(const json::Object &o, llvm::StringRef key, std::string &out, json::Path path) {
    std::optional<llvm::StringRef> s = o.getString(key);
    if (!s)
      return fail(path.field(key), "expected a string");
    out = s->str();
    return true;
  }

  bool integer(const json::Value &v, int64_t &out, json::Path path, int64_t lo = 0,
               int64_t hi = INT64_MAX) {
    std::optional<int64_t> i = v.getAsInteger();
    if (!i || *i < lo || *i > hi)
      return fail(path, "expected an integer in range");
    out = *i;
    return true;
  }

  bool integer(const json::Object &o, llvm::StringRef key, int64_t &out, json::Path path,
               int64_t lo = 0, int64_t hi = INT64_MAX) {
    const json::Value *v = o.get(key);
    if (!v)
      return fail(path.field(key), "missing");
    return integer(*v, out, path.field(key), lo, hi);
  }

  bool bufferId(const json::Value &v, BufferId &out, json::Path path) {
    int64_t i;
    if (!integer(v, i, path, 0, int64_t(bufferCount) - 1))
      return fail(path, "expected a buffer id");
    out = BufferId(i);
    return true;
  }

  bool size(const json::Value &v, SizeExpr &out, json::Path path) {
    if (std::optional<int64_t> i = v.getAsInteger()) {
      out = *i;
      return true;
    }
    std::optional<llvm::StringRef> s = v.getAsString();
    if (!s)
      return fail(path, "expected a size (an integer or an expression)");
    llvm::Expected<SizeExpr> e = SizeExpr::parse(*s);
    if (!e) {
      llvm::consumeError(e.takeError());
      return fail(path, "unparsable size expression");
    }
    out = *e;
    return true;
  }

  bool size(const json::Object &o, llvm::StringRef key, SizeExpr &out, json::Path path) {
    const json::Value *v = o.get(key);
    if (!v)
      return fail(path.field(key), "missing");
    return size(*v, out, path.field(key));
  }

  template <size_t N>
  bool sizes3(const json::Object &o, llvm::StringRef key, std::array<SizeExpr, N> &out,
              json::Path path) {
    const json::Array *a = array(o, key, path);
    if (!a)
      return false;
    if (a->size() != N)
      return fail(path.field(key), "expected three sizes");
    for (size_t i = 0; i < N; ++i)
      if (!size((*a)[i], out[i], path.field(key).index(i)))
        return false;
    return true;
  }

  bool ids(const json::Object &o, llvm::StringRef key, std::vector<BufferId> &out,
           json::Path path) {
    const json::Array *a = array(o, key, path);
    if (!a)
      return false;
    for (size_t i = 0; i < a->size(); ++i) {
      BufferId id;
      if (!bufferId((*a)[i], id, path.field(key).index(i)))
        return false;
      out.push_back(id);
    }
    return true;
  }

  bool device(const json::Object &o, runtime::Device &out, json::Path path) {
    std::string text;
    if (!string(o, "device", text, path))
      return false;
    llvm::Expected<runtime::Device> d = runtime::parseDevice(text);
    if (!d) {
      llvm::consumeError(d.takeError());
      return fail(path.field("device"), "expected cpu or cuda:N");
    }
    out = *d;
    return true;
  }

  bool readBuffer(const json::Value &v, size_t position, Buffer &b, json::Path path) {
    const json::Object *o = object(v, path);
    if (!o)
      return false;
    int64_t id;
    if (!integer(*o, "id", id, path) || id != int64_t(position))
      return fail(path.field("id"), "buffer ids must be 0, 1, 2... in order");
    b.id = BufferId(id);
    if (!device(*o, b.device, path))
      return false;
    std::string text;
    if (!string(*o, "dtype", text, path))
      return false;
    std::optional<runtime::DType> dtype = runtime::dtypeFromName(text);
    if (!dtype)
      return fail(path.field("dtype"), "unknown dtype");
    b.dtype = *dtype;
    const json::Array *shape = array(*o, "shape", path);
    if (!shape)
      return false;
    for (size_t i = 0; i < shape->size(); ++i) {
      SizeExpr dim;
      if (!size((*shape)[i], dim, path.field("shape").index(i)))
        return false;
      b.shape.push_back(dim);
    }
    if (!string(*o, "kind", text, path))
      return false;
    static constexpr BufferKind kinds[] = {BufferKind::State, BufferKind::Input, BufferKind::Output,
                                           BufferKind::Temporary};
    auto kind = llvm::find_if(kinds, [&](BufferKind k) { return bufferKindName(k) == text; });
    if (kind == std::end(kinds))
      return fail(path.field("kind"), "expected state, input, output or temporary");
    b.kind = *kind;
    if (b.kind != BufferKind::Temporary) {
      int64_t index;
      if (!string(*o, "name", b.name, path) || !integer(*o, "index", index, path, 0, UINT32_MAX))
        return false;
      b.index = unsigned(index);
    }
    if (const json::Value *view = o->get("view_of")) {
      BufferId of;
      if (!bufferId(*view, of, path.field("view_of")))
        return false;
      b.viewOf = of;
    }
    return true;
  }

  bool readStep(const json::Value &v, Step &step, json::Path path) {
    const json::Object *o = object(v, path);
    if (!o)
      return false;
    std::string op;
    if (!string(*o, "op", op, path))
      return false;
    if (op == "cpu_call") {
      CpuCall call;
      if (!string(*o, "function", call.function, path) ||
          !ids(*o, "arguments", call.arguments, path) || !ids(*o, "results", call.results, path))
        return false;
      step = std::move(call);
      return true;
    }
    if (op == "copy") {
      Copy copy;
      const json::Value *source = o->get("source"), *destination = o->get("destination");
      if (!source || !destination)
        return fail(path, "a copy needs source and destination");
      if (!bufferId(*source, copy.source, path.field("source")) ||
          !bufferId(*destination, copy.destination, path.field("destination")))
        return false;
      step = copy;
      return true;
    }
    if (op != "launch")
      return fail(path.field("op"), "expected cpu_call, launch or copy");
    Launch launch;
    int64_t dev;
    if (!integer(*o, "device", dev, path, 0, INT32_MAX) ||
        !string(*o, "kernel", launch.kernel, path) || !sizes3(*o, "grid", launch.grid, path) ||
        !sizes3(*o, "block", launch.block, path) ||
        !size(*o, "dynamic_shared_bytes", launch.dynamicSharedBytes, path))
      return false;
    launch.device = int(dev);
    const json::Array *args = array(*o, "args", path);
    if (!args)
      return false;
    for (size_t i = 0; i < args->size(); ++i) {
      json::Path argPath = path.field("args").index(i);
      const json::Object *arg = object((*args)[i], argPath);
      if (!arg)
        return false;
      if (const json::Value *buffer = arg->get("buffer")) {
        BufferId id;
        if (!bufferId(*buffer, id, argPath.field("buffer")))
          return false;
        launch.args.push_back(KernelArg::ofBuffer(id));
      } else if (const json::Value *s = arg->get("size")) {
        SizeExpr e;
        if (!size(*s, e, argPath.field("size")))
          return false;
        launch.args.push_back(KernelArg::ofSize(e));
      } else {
        return fail(argPath, "expected {\"buffer\": id} or {\"size\": expression}");
      }
    }
    step = std::move(launch);
    return true;
  }

  bool dtype(const json::Object &o, llvm::StringRef key, runtime::DType &out, json::Path path) {
    std::string text;
    if (!string(o, key, text, path))
      return false;
    std::optional<runtime::DType> parsed = runtime::dtypeFromName(text);
    if (!parsed)
      return fail(path.field(key), "unknown dtype");
    out = *parsed;
    return true;
  }

  bool readOperand(const json::Object &gemm, llvm::StringRef key, GemmOperand &operand,
                   json::Path path) {
    const json::Value *v = gemm.get(key);
    if (!v)
      return fail(path.field(key), "missing");
    json::Path p = path.field(key);
    const json::Object *o = object(*v, p);
    if (!o)
      return false;
    const json::Value *buffer = o->get("buffer");
    std::optional<bool> transposed = o->getBoolean("transposed");
    if (!buffer || !transposed)
      return fail(p, "an operand needs buffer and transposed");
    operand.transposed = *transposed;
    return bufferId(*buffer, operand.buffer, p.field("buffer")) && size(*o, "ld", operand.ld, p) &&
           size(*o, "batch_stride", operand.batchStride, p);
  }

  bool readGemm(const json::Value &v, size_t stepCount, GemmCall &gemm, json::Path path) {
    const json::Object *o = object(v, path);
    if (!o)
      return false;
    int64_t dev, first, count;
    if (!integer(*o, "device", dev, path, 0, INT32_MAX) ||
        !integer(*o, "first_step", first, path, 0, int64_t(stepCount)) ||
        !integer(*o, "step_count", count, path, 1, int64_t(stepCount) - first))
      return false;
    gemm.device = int(dev);
    gemm.firstStep = unsigned(first);
    gemm.stepCount = unsigned(count);
    const json::Value *out = o->get("out");
    std::optional<bool> tf32 = o->getBoolean("tf32");
    if (!out || !tf32)
      return fail(path, "a gemm needs out and tf32");
    gemm.tf32 = *tf32;
    if (!dtype(*o, "input_dtype", gemm.inputType, path) ||
        !dtype(*o, "output_dtype", gemm.outputType, path) || !size(*o, "m", gemm.m, path) ||
        !size(*o, "n", gemm.n, path) || !size(*o, "k", gemm.k, path) ||
        !size(*o, "batch", gemm.batch, path) || !readOperand(*o, "a", gemm.a, path) ||
        !readOperand(*o, "b", gemm.b, path) || !bufferId(*out, gemm.out, path.field("out")) ||
        !string(*o, "label", gemm.label, path))
      return false;
    for (auto [key, field] : {std::pair{"bias", &gemm.bias}, {"residual", &gemm.residual}})
      if (const json::Value *id = o->get(key)) {
        BufferId buffer;
        if (!bufferId(*id, buffer, path.field(key)))
          return false;
        *field = buffer;
      }
    std::string activation;
    if (!string(*o, "activation", activation, path))
      return false;
    static constexpr GemmActivation activations[] = {GemmActivation::None, GemmActivation::Relu,
                                                     GemmActivation::GeluTanh};
    auto found = llvm::find_if(
        activations, [&](GemmActivation a) { return gemmActivationName(a) == activation; });
    if (found == std::end(activations))
      return fail(path.field("activation"), "expected none, relu or gelu_tanh");
    gemm.activation = *found;
    if (const json::Value *after = o->get("after")) {
      Step step;
      if (!readStep(*after, step, path.field("after")))
        return false;
      if (!std::holds_alternative<Launch>(step))
        return fail(path.field("after"), "expected a launch");
      gemm.after = std::get<Launch>(std::move(step));
    }
    return true;
  }

  bool readKernel(const json::Value &v, KernelInfo &k, json::Path path) {
    const json::Object *o = object(v, path);
    if (!o)
      return false;
    if (!string(*o, "name", k.name, path) || !string(*o, "category", k.category, path) ||
        !size(*o, "flops", k.flops, path) || !size(*o, "bytes_read", k.bytesRead, path) ||
        !size(*o, "bytes_written", k.bytesWritten, path))
      return false;
    const json::Array *lines = array(*o, "source_lines", path);
    if (!lines)
      return false;
    for (size_t i = 0; i < lines->size(); ++i) {
      std::optional<llvm::StringRef> l = (*lines)[i].getAsString();
      if (!l)
        return fail(path.field("source_lines").index(i), "expected a string");
      k.sourceLines.push_back(l->str());
    }
    return true;
  }

  bool readPlan(const json::Value &value, DevicePlan &plan, json::Path path) {
    const json::Object *o = object(value, path);
    if (!o)
      return false;
    if (o->getString("format") != "modelc-device-plan")
      return fail(path.field("format"), "not a modelc device plan");
    if (o->getInteger("version") != PlanFormatVersion)
      return fail(path.field("version"), "unsupported plan version (this modelc reads 1)");
    if (!string(*o, "entry", plan.entry, path) || !string(*o, "cpu_module", plan.cpuModule, path))
      return false;
    const json::Array *buffers = array(*o, "buffers", path);
    if (!buffers)
      return false;
    bufferCount = buffers->size();
    plan.buffers.resize(bufferCount);
    for (size_t i = 0; i < bufferCount; ++i)
      if (!readBuffer((*buffers)[i], i, plan.buffers[i], path.field("buffers").index(i)))
        return false;
    const json::Array *symbols = array(*o, "symbols", path);
    if (!symbols)
      return false;
    for (size_t i = 0; i < symbols->size(); ++i) {
      json::Path p = path.field("symbols").index(i);
      const json::Object *s = object((*symbols)[i], p);
      if (!s)
        return false;
      Symbol sym;
      int64_t dim;
      const json::Value *input = s->get("input");
      if (!string(*s, "name", sym.name, p) || !input ||
          !bufferId(*input, sym.input, p.field("input")) ||
          !integer(*s, "dim", dim, p, 0, UINT32_MAX))
        return false;
      sym.dim = unsigned(dim);
      plan.symbols.push_back(std::move(sym));
    }
    const json::Array *steps = array(*o, "steps", path);
    if (!steps)
      return false;
    plan.steps.resize(steps->size());
    for (size_t i = 0; i < steps->size(); ++i)
      if (!readStep((*steps)[i], plan.steps[i], path.field("steps").index(i)))
        return false;
    const json::Array *devices = array(*o, "devices", path);
    if (!devices)
      return false;
    for (size_t i = 0; i < devices->size(); ++i) {
      json::Path p = path.field("devices").index(i);
      const json::Object *d = object((*devices)[i], p);
      if (!d)
        return false;
      DeviceCode code;
      int64_t dev;
      if (!integer(*d, "device", dev, p, 0, INT32_MAX) || !string(*d, "source", code.source, p))
        return false;
      code.device = int(dev);
      const json::Array *kernels = array(*d, "kernels", p);
      if (!kernels)
        return false;
      code.kernels.resize(kernels->size());
      for (size_t k = 0; k < kernels->size(); ++k)
        if (!readKernel((*kernels)[k], code.kernels[k], p.field("kernels").index(k)))
          return false;
      plan.devices.push_back(std::move(code));
    }
    if (o->get("gemms")) {
      const json::Array *gemms = array(*o, "gemms", path);
      if (!gemms)
        return false;
      plan.gemms.resize(gemms->size());
      for (size_t i = 0; i < gemms->size(); ++i)
        if (!readGemm((*gemms)[i], plan.steps.size(), plan.gemms[i], path.field("gemms").index(i)))
          return false;
    }
    return true;
  }

  size_t bufferCount = 0;
};

} // namespace

llvm::Expected<DevicePlan> planFromJSON(const json::Value &value) {
  return PlanReader().read(value);
}

llvm::Expected<DevicePlan> parsePlan(llvm::StringRef jsonText) {
  llvm::Expected<json::Value> value = json::parse(jsonText);
  if (!value)
    return value.takeError();
  return planFromJSON(*value);
}

} // namespace modelc::cudagen
