//===- Collective.cpp - The ranks of a data-parallel run ------------------===//
#include "runtime/training/Collective.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <dlfcn.h>
#include <functional>
#include <mutex>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace modelc::runtime::training {

Collective::~Collective() = default;

Error Collective::allReduce(void *data, size_t count, ReduceType type, StringRef what) {
  return wait(postAllReduce(data, count, type, what));
}

namespace {

class SingleProcess final : public Collective {
public:
  std::string description() const override { return "single process"; }
  Error broadcast(void *, size_t, int) override { return Error::success(); }
  Ticket postAllReduce(void *, size_t, ReduceType, StringRef) override { return ++Posted; }
  Error wait(Ticket) override { return Error::success(); }
  std::chrono::duration<double> takeReduceTime() override { return {}; }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }

private:
  Ticket Posted = 0;
};

/// The functions of libmodelc_mpi.so (mpi/MpiModule.cpp).
struct MpiModule {
  int (*init)(int *, int *, int *, int *);
  int (*cudaAware)();
  void (*version)(char *, size_t);
  int (*allreduce)(void *, size_t, int);
  int (*bcast)(void *, size_t, int);
  void (*errorString)(int, char *, size_t);
  void (*abort)(int);
  int (*finalize)();
};

/// Open MPI on one communication thread. Work is a queue of closures run in
/// order; each carries a ticket, and wait(t) blocks until t has run.
class OpenMpi final : public Collective {
public:
  OpenMpi(MpiModule module, std::chrono::seconds timeout) : Mpi(module), Timeout(timeout) {}
  ~OpenMpi() override {
    {
      std::lock_guard<std::mutex> lock(Mutex);
      Stopping = true;
    }
    Wake.notify_all();
    if (Thread.joinable())
      Thread.join();
    if (Watchdog.joinable())
      Watchdog.join();
  }

  Error start() {
    int status = -1;
    std::mutex ready;
    std::condition_variable readyCv;
    bool done = false;
    Thread = std::thread([&] {
      // start()'s locals live only until `done` is seen: keep the status.
      int initialised = Mpi.init(&Rank, &Size, &LocalRank, &LocalSize);
      if (initialised == 0) {
        CudaAware = Mpi.cudaAware() == 1;
        char text[256];
        Mpi.version(text, sizeof text);
        Version = text;
      }
      {
        std::lock_guard<std::mutex> lock(ready);
        status = initialised;
        done = true;
        readyCv.notify_all();
      }
      if (initialised == 0)
        run();
    });
    std::unique_lock<std::mutex> lock(ready);
    readyCv.wait(lock, [&] { return done; });
    if (status != 0)
      return createStringError("MPI_Init_thread failed: " + errorText(status));
    if (Timeout.count() > 0)
      Watchdog = std::thread([this] { watch(); });
    return Error::success();
  }

  std::string description() const override { return Version; }
  bool cudaAware() const override { return CudaAware; }

  Error broadcast(void *data, size_t bytes, int root) override {
    return wait(post(formatv("broadcast of {0} bytes from rank {1}", bytes, root).str(),
                     [=, this] { return Mpi.bcast(data, bytes, root); }));
  }

  Ticket postAllReduce(void *data, size_t count, ReduceType type, StringRef what) override {
    return post(what.str(), [=, this] {
      auto begin = std::chrono::steady_clock::now();
      int status = Mpi.allreduce(data, count, type == ReduceType::F64);
      std::lock_guard<std::mutex> lock(Mutex);
      ReduceTime += std::chrono::steady_clock::now() - begin;
      return status;
    });
  }

  Error wait(Ticket ticket) override {
    std::unique_lock<std::mutex> lock(Mutex);
    Wake.wait(lock, [&] { return Completed >= ticket || !FirstError.empty(); });
    if (!FirstError.empty())
      return createStringError(FirstError);
    return Error::success();
  }

  std::chrono::duration<double> takeReduceTime() override {
    std::lock_guard<std::mutex> lock(Mutex);
    return std::exchange(ReduceTime, {});
  }

  [[noreturn]] void abort(int code) override {
    Mpi.abort(code);
    std::_Exit(code);
  }

private:
  struct Work {
    Ticket ticket;
    std::string what;
    std::function<int()> run;
  };

  Ticket post(std::string what, std::function<int()> run) {
    std::lock_guard<std::mutex> lock(Mutex);
    Ticket ticket = ++Posted;
    Queue.push_back({ticket, std::move(what), std::move(run)});
    Wake.notify_all();
    return ticket;
  }

  void run() {
    for (;;) {
      Work work;
      {
        std::unique_lock<std::mutex> lock(Mutex);
        Wake.wait(lock, [&] { return Stopping || !Queue.empty(); });
        if (Queue.empty())
          break;
        work = std::move(Queue.front());
        Queue.pop_front();
        Current = work.what;
        CurrentSince = std::chrono::steady_clock::now();
        Busy = true;
      }
      int status = work.run();
      {
        std::lock_guard<std::mutex> lock(Mutex);
        Busy = false;
        Completed = work.ticket;
        if (status != 0 && FirstError.empty())
          FirstError = formatv("rank {0}: {1} failed: {2}", Rank, work.what, errorText(status));
      }
      Wake.notify_all();
    }
    Mpi.finalize();
  }

  /// Ends the process when one collective outlasts the timeout: the other
  /// ranks are then stopped by mpirun, which sees this one exit.
  void watch() {
    std::unique_lock<std::mutex> lock(Mutex);
    while (!Stopping) {
      Wake.wait_for(lock, std::chrono::milliseconds(200));
      if (Busy && std::chrono::steady_clock::now() - CurrentSince > Timeout) {
        errs() << formatv("error: rank {0}: {1} did not complete within {2} s: another rank "
                          "stopped answering (it hung, or died without mpirun noticing); "
                          "stopping the run. Resume from the last checkpoint with --resume.\n",
                          Rank, Current, Timeout.count());
        errs().flush();
        std::_Exit(3);
      }
    }
  }

  std::string errorText(int code) const {
    char text[512];
    Mpi.errorString(code, text, sizeof text);
    return text;
  }

  MpiModule Mpi;
  std::chrono::seconds Timeout;
  std::string Version;
  bool CudaAware = false;
  std::thread Thread, Watchdog;
  std::mutex Mutex;
  std::condition_variable Wake;
  std::deque<Work> Queue;
  Ticket Posted = 0, Completed = 0;
  std::string FirstError;
  bool Stopping = false, Busy = false;
  std::string Current;
  std::chrono::steady_clock::time_point CurrentSince;
  std::chrono::duration<double> ReduceTime{};
};

std::string defaultModuleDir() {
  static int anchor;
  std::string exe = sys::fs::getMainExecutable(nullptr, &anchor);
  SmallString<256> dir(sys::path::parent_path(sys::path::parent_path(exe)));
  sys::path::append(dir, "lib");
  return dir.str().str();
}

} // namespace

std::unique_ptr<Collective> makeSingleProcess() { return std::make_unique<SingleProcess>(); }

bool startedByMpirun() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

Expected<std::unique_ptr<Collective>> openMpi(StringRef moduleDir, std::chrono::seconds timeout) {
  std::string dir = moduleDir.empty() ? defaultModuleDir() : moduleDir.str();
  std::string tried;
  void *handle = nullptr;
  for (const char *sub : {"", "modelc"}) {
    SmallString<256> path(dir);
    sys::path::append(path, sub, "libmodelc_mpi.so");
    // RTLD_GLOBAL: Open MPI's components resolve libmpi's symbols globally.
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle)
      break;
    tried += "\n  " + path.str().str() + ": " + dlerror();
  }
  if (!handle)
    return createStringError("cannot open modelc's Open MPI module (install Open MPI: "
                             "`apt-get install libopenmpi-dev openmpi-bin`, then rebuild):" +
                             tried);
  MpiModule module;
  bool complete = true;
  auto bind = [&](auto &field, const char *name) {
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(handle, name));
    complete &= field != nullptr;
  };
  bind(module.init, "modelc_mpi_init");
  bind(module.cudaAware, "modelc_mpi_cuda_aware");
  bind(module.version, "modelc_mpi_version");
  bind(module.allreduce, "modelc_mpi_allreduce");
  bind(module.bcast, "modelc_mpi_bcast");
  bind(module.errorString, "modelc_mpi_error_string");
  bind(module.abort, "modelc_mpi_abort");
  bind(module.finalize, "modelc_mpi_finalize");
  if (!complete)
    return createStringError("libmodelc_mpi.so lacks a function modelc needs: rebuild it");
  auto mpi = std::make_unique<OpenMpi>(module, timeout);
  if (Error err = mpi->start())
    return err;
  return std::unique_ptr<Collective>(std::move(mpi));
}

} // namespace modelc::runtime::training
