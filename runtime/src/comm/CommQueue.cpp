//===- CommQueue.cpp - A thread that runs collectives in order --*- C++ -*-===//
//
// Handles are issue positions, so "collective h is done" is "at least h
// collectives have completed"; one counter and one condition variable serve
// every wait.
//
//===----------------------------------------------------------------------===//

#include "CommQueue.h"

namespace loom::rt {

CommQueue::CommQueue() {
  thread = std::thread([this] { run(); });
}

CommQueue::~CommQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  workReady.notify_all();
  thread.join();
}

int64_t CommQueue::enqueue(std::function<void()> work) {
  int64_t handle;
  {
    std::lock_guard<std::mutex> lock(mutex);
    pending.push_back(std::move(work));
    handle = ++issuedCount;
  }
  workReady.notify_one();
  return handle;
}

void CommQueue::wait(int64_t handle) {
  std::unique_lock<std::mutex> lock(mutex);
  workDone.wait(lock, [&] { return completedCount >= handle; });
}

int64_t CommQueue::issued() const {
  std::lock_guard<std::mutex> lock(mutex);
  return issuedCount;
}

int64_t CommQueue::completed() const {
  std::lock_guard<std::mutex> lock(mutex);
  return completedCount;
}

void CommQueue::run() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    workReady.wait(lock, [this] { return stopping || !pending.empty(); });
    if (pending.empty())
      return; // stopping, and everything issued has run
    std::function<void()> work = std::move(pending.front());
    pending.pop_front();
    lock.unlock();
    work();
    lock.lock();
    ++completedCount;
    workDone.notify_all();
  }
}

} // namespace loom::rt
