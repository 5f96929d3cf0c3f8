#pragma once
// Work that a stop callback starts on a thread of its own: a cancellation that must reach the
// database (PostgreSQL's PQcancel, a MySQL KILL over a side connection) connects and waits for the
// server, and a stop callback runs on whichever thread requests the stop — the stdio reader that
// read notifications/cancelled, the HTTP I/O thread that saw its client go. That thread must never
// wait for a database (SECURITY.md, "Bounded results"). The owner's destructor joins the work, so
// it never outlives the scope that started it (a cancel sent after its statement ended could hit
// the next one). Written by hand: a std::thread and a lock.
#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

namespace mcpdb {

class SideTask {
 public:
  SideTask() = default;
  ~SideTask() { join(); }
  SideTask(const SideTask&) = delete;
  SideTask& operator=(const SideTask&) = delete;

  // Starts `work` on a thread of its own and returns at once; the first call only (later ones do
  // nothing). Without a thread to be had, runs it here.
  void start(std::function<void()> work);
  // Waits for the work, when it was started.
  void join();
  // Started and not yet over: join() would wait (a call on a fiber hands on first).
  bool running() const { return started_.load() && !done_.load(); }

 private:
  std::mutex mu_;  // start() and join()
  std::atomic<bool> started_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace mcpdb
