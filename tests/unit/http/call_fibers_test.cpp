// Run to completion over HTTP (issue #32): calls dispatched on an I/O thread run on fibers of that
// thread, sleep through Asio waits on its io_context while the thread runs other work, move to a
// worker when they must block, and never outnumber the worker pool's slots. A real io_context
// run by a thread of its own, real pipes; the jobs stand in for engine calls.
#include "transport/http/call_fibers.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "common/call_waits.hpp"

namespace mcpdb::transport::http {
namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fd), 0); }
  ~Pipe() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  void open() const { ASSERT_EQ(::write(fd[1], "x", 1), 1); }
  int in() const { return fd[0]; }
};

// The thread running the caller now, asked of the kernel: a fiber moves between threads, and
// pthread_self() (std::this_thread::get_id()) is declared const, so the compiler may reuse a value
// it read before the move.
pid_t threadNow() {
  return static_cast<pid_t>(::syscall(SYS_gettid));
}

// An io_context run by one thread, as the HTTP server's I/O threads run theirs.
class IoThread {
 public:
  IoThread() : guard_(ioc_.get_executor()) {
    thread_ = std::thread([this] {
      CallFibers::enterThread(ioc_);
      ioc_.run();
      CallFibers::leaveThread();
    });
    std::promise<pid_t> id;
    net::post(ioc_, [&id] { id.set_value(threadNow()); });
    id_ = id.get_future().get();
  }
  ~IoThread() {
    // Every test ends its calls first (a call still suspended would be left unfinished).
    ioc_.stop();
    thread_.join();
  }
  // Runs `fn` on the I/O thread and returns its result.
  template <class F>
  auto run(F fn) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto done = task.get_future();
    net::post(ioc_, [&task] { task(); });
    return done.get();
  }
  pid_t id() const { return id_; }

 private:
  net::io_context ioc_{1};
  net::executor_work_guard<net::io_context::executor_type> guard_;
  std::thread thread_;
  pid_t id_ = 0;
};

// What one call saw.
struct Seen {
  std::atomic<bool> had_waits{false};
  std::atomic<bool> ended{false};
  std::atomic<int> revents{-2};
  std::atomic<bool> handed_on{false};
  pid_t started_on = 0;
  pid_t ended_on = 0;
};

// A call that sleeps through its waits until `fd` is readable (in slices of `slice_ms`, as the
// engines wait), at most `slices` times.
protocol::CallJob waitingCall(Seen& seen, int fd, int slice_ms = -1, int slices = 1) {
  return [&seen, fd, slice_ms, slices](CallWaits* w) {
    seen.had_waits = w != nullptr;
    seen.started_on = threadNow();
    int r = 0;
    for (int i = 0; i < slices && r == 0; ++i) r = waitFor(w, fd, POLLIN, slice_ms);
    seen.revents = r;
    seen.handed_on = w != nullptr && w->handedOn();
    seen.ended_on = threadNow();
    seen.ended = true;
  };
}

bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds limit = 10s) {
  const auto until = Clock::now() + limit;
  while (!cond()) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

class CallFibersTest : public ::testing::Test {
 protected:
  protocol::WorkerPool pool_{8, 16};
  std::shared_ptr<CallFibers> fibers_ = std::make_shared<CallFibers>(pool_);
  // Dispatched as the session does: on the I/O thread, from inside a handler.
  bool dispatchOn(IoThread& io, protocol::CallJob job, bool honours = true) {
    return io.run([&] { return fibers_->dispatch(job, honours); });
  }
};

TEST_F(CallFibersTest, ACallSleepingThroughItsWaitsLeavesItsThreadRunning) {
  IoThread io;
  Pipe p;
  Seen seen;
  ASSERT_TRUE(dispatchOn(io, waitingCall(seen, p.in())));
  ASSERT_TRUE(eventually([&] { return seen.had_waits.load(); }));
  // Suspended: the thread runs other handlers meanwhile, and the call holds a slot.
  EXPECT_EQ(io.run([] { return 42; }), 42);
  EXPECT_FALSE(seen.ended);
  EXPECT_EQ(fibers_->live(), 1u);
  EXPECT_EQ(pool_.busy(), 1u);
  p.open();
  ASSERT_TRUE(eventually([&] { return seen.ended.load(); }));
  EXPECT_EQ(seen.revents, POLLIN);
  EXPECT_FALSE(seen.handed_on);
  EXPECT_EQ(seen.started_on, io.id());
  EXPECT_EQ(seen.ended_on, io.id());
  ASSERT_TRUE(fibers_->waitIdle(Clock::now() + 5s));
  EXPECT_TRUE(eventually([&] { return pool_.busy() == 0; }));
}

TEST_F(CallFibersTest, ManyCallsShareOneThreadAndEachWakesOnItsOwnDescriptor) {
  IoThread io;
  constexpr int kCalls = 8;  // the pool's slots
  std::vector<std::unique_ptr<Pipe>> pipes;
  std::vector<std::unique_ptr<Seen>> seen;
  for (int i = 0; i < kCalls; ++i) {
    pipes.push_back(std::make_unique<Pipe>());
    seen.push_back(std::make_unique<Seen>());
    ASSERT_TRUE(dispatchOn(io, waitingCall(*seen.back(), pipes.back()->in())));
  }
  ASSERT_TRUE(eventually([&] { return fibers_->live() == kCalls; }));
  // Woken last first: each ends when its own descriptor is ready, none before.
  for (int i = kCalls - 1; i >= 0; --i) {
    pipes[i]->open();
    ASSERT_TRUE(eventually([&] { return seen[i]->ended.load(); })) << i;
    for (int j = 0; j < i; ++j) EXPECT_FALSE(seen[j]->ended) << j << " ended before its turn";
    EXPECT_EQ(seen[i]->ended_on, io.id());
  }
  EXPECT_TRUE(fibers_->waitIdle(Clock::now() + 5s));
}

TEST_F(CallFibersTest, AWaitEndsWhenItsTimePasses) {
  IoThread io;
  Pipe p;  // never written
  Seen seen;
  const auto start = Clock::now();
  ASSERT_TRUE(dispatchOn(io, waitingCall(seen, p.in(), 30, 3)));
  ASSERT_TRUE(eventually([&] { return seen.ended.load(); }));
  EXPECT_GE(Clock::now() - start, 90ms);
  EXPECT_EQ(seen.revents, 0);
  EXPECT_EQ(seen.ended_on, io.id());
  EXPECT_FALSE(seen.handed_on);
}

// Calls parked on one descriptor (the PostgreSQL pool's wake descriptor) on one thread: epoll
// takes one registration per file and number, so the second is watched under a duplicate.
TEST_F(CallFibersTest, TwoCallsWaitOnTheSameDescriptor) {
  IoThread io;
  Pipe p;
  Seen a;
  Seen b;
  ASSERT_TRUE(dispatchOn(io, waitingCall(a, p.in())));
  ASSERT_TRUE(dispatchOn(io, waitingCall(b, p.in())));
  ASSERT_TRUE(eventually([&] { return a.had_waits && b.had_waits; }));
  EXPECT_EQ(io.run([] { return 1; }), 1);
  EXPECT_FALSE(a.ended);
  EXPECT_FALSE(b.ended);
  p.open();  // level: both see it
  ASSERT_TRUE(eventually([&] { return a.ended && b.ended; }));
  EXPECT_EQ(a.revents, POLLIN);
  EXPECT_EQ(b.revents, POLLIN);
  EXPECT_FALSE(a.handed_on);
  EXPECT_FALSE(b.handed_on);
  EXPECT_EQ(b.ended_on, io.id());
}

TEST_F(CallFibersTest, ACallThatMustBlockMovesToAWorkerWhileTheThreadRunsOn) {
  IoThread io;
  std::atomic<bool> may_return{false};
  Seen seen;
  protocol::CallJob blocking = [&](CallWaits* w) {
    seen.started_on = threadNow();
    handOn(w);
    seen.handed_on = w != nullptr && w->handedOn();
    while (!may_return) std::this_thread::sleep_for(1ms);  // a wait nobody can watch
    seen.ended_on = threadNow();
    seen.ended = true;
  };
  ASSERT_TRUE(dispatchOn(io, std::move(blocking)));
  ASSERT_TRUE(eventually([&] { return seen.handed_on.load(); }));
  // The I/O thread is free, and the call no longer counts as on a fiber; it keeps its slot.
  EXPECT_EQ(io.run([] { return 7; }), 7);
  EXPECT_EQ(fibers_->live(), 0u);
  EXPECT_EQ(pool_.busy(), 1u);
  may_return = true;
  ASSERT_TRUE(eventually([&] { return seen.ended.load(); }));
  EXPECT_EQ(seen.started_on, io.id());
  EXPECT_NE(seen.ended_on, io.id());
  EXPECT_TRUE(eventually([&] { return pool_.busy() == 0; }));
}

TEST_F(CallFibersTest, ADescriptorThatCannotBeWatchedMovesTheCallToAWorker) {
  IoThread io;
  int closed[2];
  ASSERT_EQ(::pipe(closed), 0);
  ::close(closed[0]);
  ::close(closed[1]);
  Seen seen;
  ASSERT_TRUE(dispatchOn(io, waitingCall(seen, closed[0], 50)));
  ASSERT_TRUE(eventually([&] { return seen.ended.load(); }));
  EXPECT_TRUE(seen.handed_on);
  EXPECT_NE(seen.ended_on, io.id());
  EXPECT_EQ(seen.revents, POLLNVAL);  // poll()'s own answer, on the worker
}

TEST_F(CallFibersTest, CallsOfOtherToolsAndFromOtherThreadsGoToThePool) {
  IoThread io;
  Pipe p;
  p.open();
  Seen plain;
  ASSERT_TRUE(dispatchOn(io, waitingCall(plain, p.in()), /*honours=*/false));
  Seen elsewhere;
  protocol::CallJob job = waitingCall(elsewhere, p.in());
  ASSERT_TRUE(fibers_->dispatch(job, true));  // from this thread: not an I/O thread
  ASSERT_TRUE(eventually([&] { return plain.ended && elsewhere.ended; }));
  EXPECT_FALSE(plain.had_waits);
  EXPECT_FALSE(elsewhere.had_waits);
  EXPECT_NE(plain.ended_on, io.id());
  EXPECT_NE(elsewhere.ended_on, io.id());
  EXPECT_EQ(fibers_->live(), 0u);
}

// Calls on fibers take the pool's slots: with every slot held, the next call waits in the pool's
// queue rather than starting beside them.
TEST_F(CallFibersTest, CallsOnFibersNeverOutnumberThePoolsSlots) {
  protocol::WorkerPool one(1, 4);
  auto fibers = std::make_shared<CallFibers>(one);
  IoThread io;
  Pipe first_gate;
  Pipe second_gate;
  second_gate.open();
  Seen first;
  Seen second;
  ASSERT_TRUE(io.run([&] {
    protocol::CallJob job = waitingCall(first, first_gate.in());
    return fibers->dispatch(job, true);
  }));
  ASSERT_TRUE(eventually([&] { return first.had_waits.load(); }));
  ASSERT_TRUE(io.run([&] {
    protocol::CallJob job = waitingCall(second, second_gate.in());
    return fibers->dispatch(job, true);
  }));
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(second.ended) << "a second call ran beside the first with one slot";
  EXPECT_EQ(one.queued(), 1u);
  first_gate.open();
  ASSERT_TRUE(eventually([&] { return first.ended && second.ended; }));
  EXPECT_FALSE(second.had_waits);  // it ran on the worker
  EXPECT_TRUE(fibers->waitIdle(Clock::now() + 5s));
}

TEST_F(CallFibersTest, WaitIdleSeesCallsStillSuspended) {
  IoThread io;
  Pipe p;
  Seen seen;
  ASSERT_TRUE(dispatchOn(io, waitingCall(seen, p.in())));
  EXPECT_FALSE(fibers_->waitIdle(Clock::now() + 30ms));
  p.open();
  EXPECT_TRUE(fibers_->waitIdle(Clock::now() + 5s));
  EXPECT_TRUE(seen.ended);
}

}  // namespace
}  // namespace mcpdb::transport::http
