#pragma once
// Run to completion over HTTP (issue #32): a tools/call of a tool that honours its runner's
// waits (Tool::honours_waits) runs on a fiber (common/fiber.hpp) of the I/O thread that read its
// request. It runs until it would wait for its database, where it suspends (CallWaits::wait): the
// wait becomes part of that thread's event loop (below), and the thread goes on with its other
// connections and calls until the descriptor is ready or the time has passed. The answer is written
// by the same thread (PostOutbox's answerInPlace): from reading the request to writing its answer,
// a call never leaves its thread, and that thread sleeps only in epoll_wait when nothing it holds
// can run.
//
// A call that must block in another way (opening a connection, the proof, the guard's parser
// thread) hands on first (CallWaits::handOn): its fiber is suspended and resumed on a worker of
// the pool (WorkerPool::submitHolding, with its slot), where it blocks and ends while the I/O
// thread serves its other connections. Calls of other tools, and calls dispatched from a thread
// that is not an I/O thread (a bulkhead slot given back by a worker), go to the worker pool as
// before. Either way the pool's thread count bounds concurrent calls (WorkerPool::tryAcquireSlot).
//
// The calls' descriptors are not Asio's: each I/O thread keeps an epoll instance of its own for
// them, registered once per descriptor and re-armed one-shot per wait, which Asio watches as one
// descriptor, and one timer for the nearest deadline (call_fibers.cpp, ThreadLoop).

// Boost 1.74 Asio under g++ 12 -std=c++20 needs <utility> before any Boost header (std::exchange).
#include <utility>

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include "protocol/worker_pool.hpp"

namespace mcpdb::transport::http {

class CallFibers : public std::enable_shared_from_this<CallFibers> {
 public:
  explicit CallFibers(protocol::WorkerPool& pool) : pool_(pool) {}
  CallFibers(const CallFibers&) = delete;
  CallFibers& operator=(const CallFibers&) = delete;

  // The I/O thread about to run `ioc` (and nothing else) runs the calls it dispatches on fibers.
  static void enterThread(boost::asio::io_context& ioc);
  static void leaveThread();

  // protocol::Session::Dispatch: takes the job (and returns true) or returns false (busy).
  bool dispatch(protocol::CallJob& job, bool honours_waits);

  // Calls on fibers that still use an I/O context (started, suspended or about to start; not those
  // moved to a worker).
  std::size_t live() const { return live_.load(); }
  // Waits until no call is on a fiber or `until` has passed; true when none is left. The I/O
  // threads must still run (they resume the calls). A call still suspended when its I/O context
  // is destroyed (one that outlived every bound at shutdown) is left as it is, its stack and
  // wait never freed, rather than destroyed mid-call: the process is exiting.
  bool waitIdle(std::chrono::steady_clock::time_point until) const;

  struct Task;       // a call on a fiber
  class ThreadLoop;  // what an I/O thread adds to its io_context for them

 private:
  static void step(const std::shared_ptr<Task>& task);

  protocol::WorkerPool& pool_;
  std::atomic<std::size_t> live_{0};
};

}  // namespace mcpdb::transport::http
