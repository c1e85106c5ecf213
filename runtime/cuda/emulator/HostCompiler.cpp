//===- HostCompiler.cpp - Build emulated kernels with c++ -----------------===//

#include "runtime/cuda/emulator/HostCompiler.h"

#include "runtime/cuda/CudaError.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc::cuda {

namespace {

const char EmbeddedHeader[] =
#include "CudaEmulationHeader.inc"
    ;
const char EmbeddedWarpMatrixHeader[] =
#include "WarpMatrixEmulationHeader.inc"
    ;

/// A kernel that compiles for minutes is a bug, not a workload.
constexpr unsigned CompileTimeoutSeconds = 300;

/// `source` with comments blanked out (string literals kept), so commented
/// kernels are not exported.
std::string stripComments(llvm::StringRef source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '"') {
      size_t end = i + 1;
      while (end < source.size() && source[end] != '"' && source[end] != '\n')
        end += source[end] == '\\' ? 2 : 1;
      end = std::min(end, source.size() - 1);
      out.append(source.data() + i, end - i + 1);
      i = end;
    } else if (source.substr(i).starts_with("//")) {
      while (i < source.size() && source[i] != '\n')
        ++i;
      out += '\n';
    } else if (source.substr(i).starts_with("/*")) {
      size_t end = source.find("*/", i + 2);
      i = end == llvm::StringRef::npos ? source.size() : end + 1;
      out += ' ';
    } else {
      out += source[i];
    }
  }
  return out;
}

llvm::Expected<std::string> readFile(const llvm::Twine &path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    return makeCudaError(CudaErrorKind::HostCompileFailed,
                         "cannot read '" + path + "': " + file.getError().message());
  return (*file)->getBuffer().str();
}

llvm::Error writeFile(const llvm::Twine &path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path.str(), ec);
  if (!ec) {
    out << text;
    out.close();
    if (out.has_error()) {
      ec = out.error();
      out.clear_error();
    }
  }
  if (ec)
    return makeCudaError(CudaErrorKind::HostCompileFailed,
                         "cannot write '" + path + "': " + ec.message());
  return llvm::Error::success();
}

} // namespace

llvm::StringRef cudaEmulationHeader() { return EmbeddedHeader; }
llvm::StringRef warpMatrixEmulationHeader() { return EmbeddedWarpMatrixHeader; }

std::vector<std::string> findKernelNames(llvm::StringRef source) {
  static const llvm::Regex kernel(
      "__global__[[:space:]]+void[[:space:]]+(__launch_bounds__[[:space:]]*\\([^)]*\\)[[:space:]]*"
      ")?([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*\\(");
  std::string text = stripComments(source);
  std::vector<std::string> names;
  llvm::StringRef rest = text;
  llvm::SmallVector<llvm::StringRef, 3> groups;
  while (kernel.match(rest, &groups)) {
    std::string name = groups[2].str();
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
    rest = rest.drop_front(groups[0].data() - rest.data() + groups[0].size());
  }
  return names;
}

std::string rewriteDynamicShared(llvm::StringRef source) {
  static const llvm::Regex declaration(
      "extern[[:space:]]+__shared__[[:space:]]+((__align__|alignas)[[:space:]]*\\([^)]*\\)["
      "[:space:]]*)?([A-Za-z_][A-Za-z0-9_: ]*[A-Za-z0-9_])[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)["
      "[:space:]]*\\[[[:space:]]*\\][[:space:]]*;");
  std::string out;
  llvm::StringRef rest = source;
  llvm::SmallVector<llvm::StringRef, 5> groups;
  while (declaration.match(rest, &groups)) {
    size_t at = groups[0].data() - rest.data();
    llvm::StringRef before = rest.take_front(at);
    out += before.str();
    std::string type = groups[3].str(), name = groups[4].str();
    std::string pointer = "reinterpret_cast<" + type + " *>(::modelc_emu::dynamicShared())";
    llvm::StringRef done(out);
    if (done.count('{') > done.count('}')) {
      out += type + " *const " + name + " = " + pointer + ";";
    } else {
      // File scope: a macro, so each use reads the running block's buffer.
      size_t end = groups[0].data() + groups[0].size() - source.data();
      size_t line = source.take_front(end).count('\n') + 1;
      out += "\n#undef " + name + "\n#define " + name + " (" + pointer + ")\n#line " +
             std::to_string(line) + "\n";
    }
    rest = rest.drop_front(at + groups[0].size());
  }
  out += rest.str();
  return out;
}

llvm::Expected<HostCompiler> HostCompiler::find() {
  llvm::SmallVector<std::string, 5> candidates;
  for (const char *variable : {"MODELC_HOST_CXX", "CXX"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(variable))
      if (!value->empty())
        candidates.push_back(*value);
  candidates.append({"c++", "g++", "clang++"});
  for (const std::string &candidate : candidates) {
    llvm::ErrorOr<std::string> path = llvm::sys::path::is_absolute(candidate)
                                          ? llvm::ErrorOr<std::string>(candidate)
                                          : llvm::sys::findProgramByName(candidate);
    if (!path || !llvm::sys::fs::can_execute(*path))
      continue;
    HostCompiler compiler{*path, ""};
    llvm::SmallString<128> versionFile;
    if (!llvm::sys::fs::createTemporaryFile("modelc-cxx-version", "txt", versionFile)) {
      llvm::scope_exit remove([&] { llvm::sys::fs::remove(versionFile); });
      std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(versionFile),
                                                    llvm::StringRef("")};
      llvm::sys::ExecuteAndWait(*path, {*path, "--version"}, std::nullopt, redirects, 30);
      if (llvm::Expected<std::string> text = readFile(versionFile))
        compiler.version = llvm::StringRef(*text).split('\n').first.str();
      else
        llvm::consumeError(text.takeError());
    }
    return compiler;
  }
  return makeCudaError(CudaErrorKind::HostCompilerMissing,
                       "the CUDA emulator needs a C++ compiler: none of $MODELC_HOST_CXX, $CXX, "
                       "c++, g++, clang++ was found");
}

std::vector<std::string> HostCompiler::baseFlags() {
  // -fwrapv: signed integer overflow wraps, as on the GPU and in the cpu back end.
  return {"-std=c++20", "-O2", "-fPIC", "-shared", "-w", "-fno-strict-aliasing", "-fwrapv"};
}

std::vector<std::string> HostCompiler::hostAccessCheckFlags() const {
  if (llvm::StringRef(version).contains("clang"))
    return {"-fsanitize=kernel-address",
            "-mllvm",
            "-asan-instrumentation-with-call-threshold=0",
            "-mllvm",
            "-asan-stack=0",
            "-mllvm",
            "-asan-globals=0"};
  return {"-fsanitize=kernel-address", "--param=asan-instrumentation-with-call-threshold=0",
          "--param=asan-stack=0", "--param=asan-globals=0"};
}

llvm::Expected<std::string>
HostCompiler::compileKernels(llvm::StringRef source, llvm::StringRef name,
                             llvm::ArrayRef<std::string> extraFlags) const {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("modelc-emu", dir))
    return makeCudaError(CudaErrorKind::HostCompileFailed,
                         "cannot create a temporary directory: " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });

  std::string fileName = llvm::sys::path::filename(name).str();
  if (fileName.empty() || fileName == "." || fileName == "..")
    fileName = "kernel.cu";
  llvm::SmallString<128> header(dir), sourcePath(dir), output(dir), log(dir);
  llvm::sys::path::append(header, "cuda_emulation.h");
  llvm::sys::path::append(sourcePath, fileName);
  llvm::sys::path::append(output, "kernels.so");
  llvm::sys::path::append(log, "compile.log");

  std::string text = rewriteDynamicShared(source);
  text += "\n// Exports for the emulator.\n";
  for (const std::string &kernel : findKernelNames(source))
    text += "MODELC_EMU_EXPORT_KERNEL(" + kernel + ")\n";
  if (llvm::Error error = writeFile(header, cudaEmulationHeader()))
    return error;
  llvm::SmallString<128> warpMatrixHeader(dir);
  llvm::sys::path::append(warpMatrixHeader, "warp_matrix_emulation.h");
  if (llvm::Error error = writeFile(warpMatrixHeader, warpMatrixEmulationHeader()))
    return error;
  if (llvm::Error error = writeFile(sourcePath, text))
    return error;

  std::vector<std::string> args = {path};
  for (const std::string &flag : baseFlags())
    args.push_back(flag);
  args.insert(args.end(), extraFlags.begin(), extraFlags.end());
  args.insert(args.end(), {"-include", std::string(header), "-x", "c++", std::string(sourcePath),
                           "-o", std::string(output)});
  llvm::SmallVector<llvm::StringRef, 16> argRefs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string launchError;
  int status = llvm::sys::ExecuteAndWait(path, argRefs, std::nullopt, redirects,
                                         CompileTimeoutSeconds, 0, &launchError);
  if (status != 0) {
    llvm::Expected<std::string> output = readFile(log);
    std::string logText = output ? *output : llvm::toString(output.takeError());
    if (!launchError.empty())
      logText += launchError;
    // Show the user's file name, not our temporary directory.
    std::string shown;
    llvm::StringRef rest = logText;
    std::string prefix = std::string(dir) + "/";
    for (size_t at; (at = rest.find(prefix)) != llvm::StringRef::npos;) {
      shown += rest.take_front(at).str();
      rest = rest.drop_front(at + prefix.size());
    }
    shown += rest.str();
    return makeCudaError(CudaErrorKind::HostCompileFailed,
                         "the host compiler rejected the emulated kernels of '" + name + "'",
                         shown);
  }
  return readFile(output);
}

} // namespace modelc::cuda
