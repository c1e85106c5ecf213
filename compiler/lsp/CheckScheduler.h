//===- CheckScheduler.h - Runs document checks on a worker thread -*- C++ -*-===//
//
// The message thread marks documents dirty; one worker thread checks them in
// the order they were first marked. Marking a document again while it is
// queued coalesces with the queued check; marking it while it is being
// checked makes the running check stale, and a stale result is dropped
// instead of committed, so only the newest text is ever published. (A
// Compilation cannot be interrupted, so superseding means "never start an
// old check, never publish an old result".)
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_LSP_CHECKSCHEDULER_H
#define MODELC_LSP_CHECKSCHEDULER_H

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace modelc::lsp {

class CheckScheduler {
public:
  /// Publishes a finished check; runs on the worker, only if not stale.
  using Commit = llvm::unique_function<void()>;
  /// Checks the document `key` (on the worker) and returns how to commit it.
  using CheckFn = llvm::unique_function<Commit(llvm::StringRef key)>;

  explicit CheckScheduler(CheckFn check);
  /// Finishes the running check (dropping the queue) and joins the worker.
  ~CheckScheduler();
  CheckScheduler(const CheckScheduler &) = delete;
  CheckScheduler &operator=(const CheckScheduler &) = delete;

  /// Queues a check of `key`, superseding any queued or running one.
  void schedule(llvm::StringRef key);
  /// Drops a queued check of `key` and makes a running one stale.
  void cancel(llvm::StringRef key);
  /// Waits until `key` is neither queued nor being checked, or `timeout`
  /// passes. Returns true when it is settled.
  bool waitFor(llvm::StringRef key, std::chrono::milliseconds timeout);
  /// Waits until no check is queued or running.
  void waitIdle();

  /// Counters for tests and logs.
  unsigned checksRun() const;
  unsigned checksDropped() const;

private:
  void workerLoop();
  bool settled(llvm::StringRef key) const; // needs mutex_

  CheckFn check_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;    // work queued or stopping
  std::condition_variable settled_; // a check finished
  std::deque<std::string> queue_;
  llvm::StringSet<> queued_;
  std::optional<std::string> running_;
  bool runningStale_ = false;
  bool stopping_ = false;
  unsigned checksRun_ = 0, checksDropped_ = 0;
  std::thread worker_;
};

} // namespace modelc::lsp

#endif // MODELC_LSP_CHECKSCHEDULER_H
