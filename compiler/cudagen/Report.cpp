//===- Report.cpp - Per-kernel costs and a roofline estimate --------------===//

#include "cudagen/Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace modelc::cudagen {

namespace {

/// gpu-peaks.json, embedded by CMake.
constexpr const char *DefaultPeaksJson =
#include "cudagen/GpuPeaksJson.inc"
    ;

std::string humanBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? llvm::formatv("{0} B", int64_t(bytes)).str()
                   : llvm::formatv("{0:f1} {1}", bytes, units[unit]).str();
}

std::string humanCount(double n) {
  const char *units[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  while (n >= 1000 && unit < 4) {
    n /= 1000;
    ++unit;
  }
  return unit == 0 ? llvm::formatv("{0}", int64_t(n)).str()
                   : llvm::formatv("{0:f2}{1}", n, units[unit]).str();
}

std::string humanSeconds(double s) {
  if (s < 1e-6)
    return llvm::formatv("{0:f1} ns", s * 1e9).str();
  if (s < 1e-3)
    return llvm::formatv("{0:f2} us", s * 1e6).str();
  return llvm::formatv("{0:f3} ms", s * 1e3).str();
}

} // namespace

llvm::Expected<GpuPeaks> parseGpuPeaks(llvm::StringRef jsonText) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(jsonText);
  if (!value)
    return value.takeError();
  const llvm::json::Object *o = value->getAsObject();
  if (!o)
    return llvm::createStringError("GPU peaks: expected a JSON object");
  GpuPeaks peaks;
  auto number = [&](llvm::StringRef key, double &out, bool required) -> llvm::Error {
    std::optional<double> n = o->getNumber(key);
    if (!n) {
      if (!required)
        return llvm::Error::success();
      return llvm::createStringError(llvm::formatv("GPU peaks: `{0}` must be a number", key).str());
    }
    if (*n <= 0)
      return llvm::createStringError(llvm::formatv("GPU peaks: `{0}` must be positive", key).str());
    out = *n;
    return llvm::Error::success();
  };
  if (llvm::Error err = number("fp32_flops_per_s", peaks.fp32FlopsPerSecond, true))
    return err;
  if (llvm::Error err = number("memory_bytes_per_s", peaks.memoryBytesPerSecond, true))
    return err;
  if (llvm::Error err = number("host_link_bytes_per_s", peaks.hostLinkBytesPerSecond, false))
    return err;
  if (llvm::Error err = number("peer_link_bytes_per_s", peaks.peerLinkBytesPerSecond, false))
    return err;
  if (llvm::Error err = number("kernel_launch_s", peaks.kernelLaunchSeconds, false))
    return err;
  peaks.name = o->getString("name").value_or("unnamed GPU").str();
  peaks.source = o->getString("source").value_or("").str();
  return peaks;
}

const GpuPeaks &defaultGpuPeaks() {
  static const GpuPeaks peaks = [] {
    llvm::Expected<GpuPeaks> parsed = parseGpuPeaks(DefaultPeaksJson);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return GpuPeaks{};
    }
    return *parsed;
  }();
  return peaks;
}

llvm::Expected<GpuPeaks> loadGpuPeaks(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return llvm::createStringError(
        llvm::formatv("cannot read GPU peaks {0}: {1}", path, file.getError().message()).str());
  llvm::Expected<GpuPeaks> peaks = parseGpuPeaks((*file)->getBuffer());
  if (!peaks)
    return llvm::createStringError(
        llvm::formatv("{0}: {1}", path, llvm::toString(peaks.takeError())).str());
  return peaks;
}

llvm::StringMap<KernelResources> parsePtxasVerbose(llvm::StringRef log) {
  llvm::StringMap<KernelResources> result;
  std::string current;
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    size_t entry = line.find("entry function '");
    if (entry != llvm::StringRef::npos) {
      llvm::StringRef rest = line.substr(entry + strlen("entry function '"));
      current = rest.take_until([](char c) { return c == '\''; }).str();
      result[current];
      continue;
    }
    if (current.empty())
      continue;
    KernelResources &r = result[current];
    auto numberBefore = [&](llvm::StringRef what) -> std::optional<unsigned> {
      size_t at = line.find(what);
      if (at == llvm::StringRef::npos)
        return std::nullopt;
      llvm::StringRef head = line.substr(0, at).rtrim();
      size_t start = head.find_last_not_of("0123456789");
      unsigned n = 0;
      if (head.substr(start == llvm::StringRef::npos ? 0 : start + 1).getAsInteger(10, n))
        return std::nullopt;
      return n;
    };
    if (std::optional<unsigned> regs = numberBefore(" registers"))
      r.registers = *regs;
    if (std::optional<unsigned> smem = numberBefore(" bytes smem"))
      r.sharedBytes = *smem;
    if (std::optional<unsigned> spill = numberBefore(" bytes spill stores"))
      r.spillBytes = *spill;
  }
  return result;
}

std::string findPtxas() {
  llvm::SmallVector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.push_back((llvm::Twine(home) + "/bin/ptxas").str());
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string &c : candidates)
    if (llvm::sys::fs::can_execute(c))
      return c;
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  return "";
}

llvm::Expected<std::string> runPtxas(llvm::StringRef ptxas, llvm::StringRef ptx,
                                     llvm::StringRef arch, bool verbose) {
  llvm::SmallString<128> input, output, log;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("modelc-ptxas", "ptx", input))
    return llvm::createStringError(ec, "cannot create a temporary file for ptxas");
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("modelc-ptxas", "cubin", output))
    return llvm::createStringError(ec, "cannot create a temporary file for ptxas");
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("modelc-ptxas", "log", log))
    return llvm::createStringError(ec, "cannot create a temporary file for ptxas");
  auto cleanup = [&] {
    llvm::sys::fs::remove(input);
    llvm::sys::fs::remove(output);
    llvm::sys::fs::remove(log);
  };
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec) {
      cleanup();
      return llvm::createStringError(ec, "cannot write the PTX for ptxas");
    }
    os << ptx;
  }
  std::string archOption = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, archOption};
  if (verbose)
    args.push_back("-v");
  args.append({"-o", output, input});
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         /*SecondsToWait=*/120, 0, &message);
  std::string text;
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> b = llvm::MemoryBuffer::getFile(log))
    text = (*b)->getBuffer().str();
  cleanup();
  if (status != 0)
    return llvm::createStringError(
        llvm::formatv("ptxas {0} failed ({1}): {2}", archOption,
                      message.empty() ? "exit " + std::to_string(status) : message, text)
            .str());
  return text;
}

llvm::Expected<std::string> formatReport(const DevicePlan &plan, const ReportOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const GpuPeaks &peaks = options.peaks;
  std::vector<std::string> bindings;
  for (const auto &entry : options.symbols)
    bindings.push_back(llvm::formatv("{0}={1}", entry.getKey(), entry.getValue()).str());
  llvm::sort(bindings);
  os << llvm::formatv("reference GPU: {0} ({1}FLOP/s FP32, {2}B/s memory)\n", peaks.name,
                      humanCount(peaks.fp32FlopsPerSecond), humanCount(peaks.memoryBytesPerSecond));
  os << "symbolic dims: " << (bindings.empty() ? "none" : llvm::join(bindings, ", ")) << "\n";

  auto eval = [&](const SizeExpr &e) -> llvm::Expected<double> {
    llvm::Expected<int64_t> v = e.evaluate(options.symbols);
    if (!v)
      return v.takeError();
    return double(*v);
  };
  // Launch counts per kernel (a kernel may run more than once).
  std::map<std::pair<int, std::string>, unsigned> launches;
  unsigned launchCount = 0;
  double hostBytes = 0, peerBytes = 0;
  for (const Step &step : plan.steps) {
    if (const auto *l = std::get_if<Launch>(&step)) {
      // A grid with no blocks is skipped (a GEMM kernel of another size
      // class, a split-K sum with one slice).
      bool runs = true;
      for (const SizeExpr &extent : l->grid) {
        llvm::Expected<double> blocks = eval(extent);
        if (!blocks)
          return blocks.takeError();
        runs &= *blocks > 0;
      }
      if (!runs)
        continue;
      ++launches[{l->device, l->kernel}];
      ++launchCount;
    } else if (const auto *c = std::get_if<Copy>(&step)) {
      const Buffer &src = plan.buffer(c->source), &dst = plan.buffer(c->destination);
      llvm::Expected<double> bytes = eval(src.byteSize());
      if (!bytes)
        return bytes.takeError();
      (src.device.isCPU() || dst.device.isCPU() ? hostBytes : peerBytes) += *bytes;
    }
  }

  double totalSeconds = 0;
  for (const DeviceCode &code : plan.devices) {
    os << llvm::formatv("\ncuda:{0}: {1} kernel(s)\n", code.device, code.kernels.size());
    os << llvm::formatv("{0,-28} {1,-12} {2,10} {3,10} {4,10} {5,8} {6,6} {7,8} {8,11} {9}\n",
                        "kernel", "kind", "FLOPs", "read", "written", "FLOP/B", "regs", "smem",
                        "roofline", "bound");
    auto resources = options.resources.find(code.device);
    for (const KernelInfo &k : code.kernels) {
      llvm::Expected<double> flops = eval(k.flops), read = eval(k.bytesRead),
                             written = eval(k.bytesWritten);
      if (!flops)
        return flops.takeError();
      if (!read)
        return read.takeError();
      if (!written)
        return written.takeError();
      double bytes = *read + *written;
      double intensity = bytes > 0 ? *flops / bytes : 0;
      double computeTime = *flops / peaks.fp32FlopsPerSecond;
      double memoryTime = bytes / peaks.memoryBytesPerSecond;
      double seconds = std::max(computeTime, memoryTime) + peaks.kernelLaunchSeconds;
      unsigned runs = launches[{code.device, k.name}];
      totalSeconds += seconds * runs;
      std::string regs = "n/a", smem = "n/a";
      if (resources != options.resources.end()) {
        auto r = resources->second.find(k.name);
        if (r != resources->second.end()) {
          regs = std::to_string(r->second.registers);
          smem = humanBytes(r->second.sharedBytes);
        }
      }
      os << llvm::formatv("{0,-28} {1,-12} {2,10} {3,10} {4,10} {5,8:f2} {6,6} {7,8} {8,11} {9}\n",
                          k.name, k.category, humanCount(*flops), humanBytes(*read),
                          humanBytes(*written), intensity, regs, smem, humanSeconds(seconds),
                          computeTime > memoryTime ? "compute" : "memory");
      bool afterLibrary = llvm::any_of(plan.gemms, [&](const GemmCall &g) {
        return g.device == code.device && g.after && g.after->kernel == k.name;
      });
      os << llvm::formatv("  from {0}{1}\n", llvm::join(k.sourceLines, ", "),
                          afterLibrary ? " (runs only after cuBLASLt, in place of the GEMM's own "
                                         "kernels; not counted below)"
                                       : "");
    }
  }
  if (!plan.gemms.empty()) {
    os << "\nGEMMs cuBLASLt can run instead of their own kernels (the faster is measured on the "
          "GPU that runs the plan; MODELC_CUDA_GEMM=own|cublaslt forces one):\n";
    for (const GemmCall &gemm : plan.gemms) {
      llvm::Expected<double> m = eval(gemm.m), n = eval(gemm.n), k = eval(gemm.k),
                             batch = eval(gemm.batch);
      for (llvm::Expected<double> *size : {&m, &n, &k, &batch})
        if (!*size)
          return size->takeError();
      std::string shape = llvm::formatv("{0}x{1}x{2}", int64_t(*m), int64_t(*n), int64_t(*k));
      if (*batch != 1)
        shape += llvm::formatv(" batch {0}", int64_t(*batch)).str();
      std::vector<std::string> epilogue;
      if (gemm.bias)
        epilogue.push_back("bias");
      if (gemm.residual)
        epilogue.push_back("residual");
      if (gemm.activation != GemmActivation::None)
        epilogue.push_back(gemmActivationName(gemm.activation).str());
      os << llvm::formatv(
          "  {0}: {1} {2}{3}{4}{5}{6}\n", gemm.label, runtime::dtypeName(gemm.inputType), shape,
          gemm.a.transposed ? ", a transposed" : "", gemm.b.transposed ? ", b transposed" : "",
          epilogue.empty() ? "" : ", epilogue " + llvm::join(epilogue, " + "),
          gemm.after ? "; then " + gemm.after->kernel + " applies the rest" : "");
    }
    if (!options.gemmLibrary.empty())
      os << "  on this machine: " << options.gemmLibrary << "\n";
  }

  double copySeconds = 0;
  if (hostBytes > 0 && peaks.hostLinkBytesPerSecond > 0)
    copySeconds += hostBytes / peaks.hostLinkBytesPerSecond;
  if (peerBytes > 0 && peaks.peerLinkBytesPerSecond > 0)
    copySeconds += peerBytes / peaks.peerLinkBytesPerSecond;
  unsigned cpuCalls =
      llvm::count_if(plan.steps, [](const Step &s) { return std::holds_alternative<CpuCall>(s); });
  os << "\nper forward:\n";
  os << llvm::formatv("  kernel launches:         {0}\n", launchCount);
  os << llvm::formatv("  cpu calls:               {0}\n", cpuCalls);
  os << llvm::formatv("  host<->device by .to:    {0}\n", humanBytes(hostBytes));
  os << llvm::formatv("  device<->device by .to:  {0}\n", humanBytes(peerBytes));
  os << llvm::formatv("  estimated kernel time:   {0}\n", humanSeconds(totalSeconds));
  os << llvm::formatv("  estimated copy time:     {0}\n", humanSeconds(copySeconds));
  os << llvm::formatv("  estimated total:         {0} (cpu calls not included)\n",
                      humanSeconds(totalSeconds + copySeconds));
  os << "registers and shared memory: "
     << (options.resources.empty() ? options.resourcesMissing
                                   : "ptxas -v -arch=" + options.resourcesArch)
     << "\n";
  return text;
}

} // namespace modelc::cudagen
