//===- CheckScheduler.cpp - Runs document checks on a worker thread -------===//

#include "lsp/CheckScheduler.h"

namespace modelc::lsp {

CheckScheduler::CheckScheduler(CheckFn check)
    : check_(std::move(check)), worker_([this] { workerLoop(); }) {}

CheckScheduler::~CheckScheduler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
    queued_.clear();
  }
  wake_.notify_all();
  worker_.join();
}

void CheckScheduler::schedule(llvm::StringRef key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_ && *running_ == key)
      runningStale_ = true;
    if (!queued_.insert(key).second)
      return; // coalesces with the check already queued
    queue_.push_back(key.str());
  }
  wake_.notify_one();
}

void CheckScheduler::cancel(llvm::StringRef key) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_ && *running_ == key)
    runningStale_ = true;
  if (queued_.erase(key))
    std::erase(queue_, key.str());
  settled_.notify_all();
}

bool CheckScheduler::settled(llvm::StringRef key) const {
  return !queued_.contains(key) && !(running_ && *running_ == key);
}

bool CheckScheduler::waitFor(llvm::StringRef key, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return settled_.wait_for(lock, timeout, [&] { return settled(key); });
}

void CheckScheduler::waitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  settled_.wait(lock, [&] { return queue_.empty() && !running_; });
}

unsigned CheckScheduler::checksRun() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return checksRun_;
}

unsigned CheckScheduler::checksDropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return checksDropped_;
}

void CheckScheduler::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_)
      return;
    std::string key = std::move(queue_.front());
    queue_.pop_front();
    queued_.erase(key);
    running_ = key;
    runningStale_ = false;
    lock.unlock();

    Commit commit = check_(key);

    lock.lock();
    ++checksRun_;
    bool stale = runningStale_ || stopping_;
    if (stale)
      ++checksDropped_;
    lock.unlock();
    // Committing outside the lock lets the message thread keep scheduling;
    // `running_` stays set so waiters see the result only once it is in.
    if (!stale && commit)
      commit();
    lock.lock();
    running_.reset();
    settled_.notify_all();
  }
}

} // namespace modelc::lsp
