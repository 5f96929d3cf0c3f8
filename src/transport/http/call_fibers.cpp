#include "transport/http/call_fibers.hpp"

#include <poll.h>

#include <sys/epoll.h>

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

#include "common/call_waits.hpp"
#include "protocol/fiber_call.hpp"

namespace mcpdb::transport::http {

namespace net = boost::asio;
using Clock = std::chrono::steady_clock;

// A call on a fiber (protocol::FiberCall), and the wait it is suspended in. Touched only by the
// thread running the fiber's I/O context (until the call moves to a worker, after which it touches
// neither).
struct CallFibers::Task : protocol::FiberCall, std::enable_shared_from_this<CallFibers::Task> {
  Task(std::shared_ptr<CallFibers> o, ThreadLoop& l, protocol::CallJob job)
      : FiberCall(
            std::move(job),
            [this](int f, short e, int timeout_ms) { return suspendOn(f, e, timeout_ms); },
            o->pool_),
        owner(std::move(o)),
        loop(l) {}

  int suspendOn(int on, short wanted, int timeout_ms);

  std::shared_ptr<CallFibers> owner;
  ThreadLoop& loop;
  bool ready = false;  // the current wait (FiberCall::wait) is over
};

// What an I/O thread adds to its io_context for the calls it holds on fibers, written by hand (no
// Debian library waits for descriptors Asio does not own without registering each one anew; with
// Asio's own descriptors every wait cost an epoll_ctl to add, an ioctl and an epoll_ctl to
// remove, and a timer). An epoll instance of its own holds the calls' descriptors, each
// registered once per thread and re-armed one-shot for each wait (one epoll_ctl); Asio watches
// that instance as one descriptor, and one timer stands for the nearest deadline.
class CallFibers::ThreadLoop {
 public:
  explicit ThreadLoop(net::io_context& ioc) : ioc_(ioc), inner_(ioc), timer_(ioc) {
    const int epfd = ::epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) throw std::system_error(errno, std::generic_category(), "epoll_create1");
    inner_.assign(epfd);  // closed with it
  }

  net::io_context& context() { return ioc_; }

  // Suspends `task` until `fd` has one of `events` or `timeout_ms` passed (see CallWaits). False:
  // the descriptor cannot be watched here.
  bool wait(const std::shared_ptr<Task>& task, int fd, short events, int timeout_ms) {
    task->beginWait(fd, static_cast<short>(events & (POLLIN | POLLOUT)), timeout_ms);
    task->ready = false;
    // Calls of this thread waiting on the same descriptor (the pool's wake descriptor) share its
    // registration: it is armed for what any of them waits for.
    auto armed = static_cast<std::uint32_t>(task->wait.events);
    for (const auto& t : waiting_) {
      if (t->wait.fd == fd) armed |= static_cast<std::uint32_t>(t->wait.events);
    }
    epoll_event ev{};
    ev.events = armed | EPOLLONESHOT;
    ev.data.fd = fd;
    // Usually registered by an earlier wait (then re-armed); a descriptor closed since was
    // dropped from the set by the kernel, and its number may now name another file.
    if (::epoll_ctl(inner_.native_handle(), EPOLL_CTL_MOD, fd, &ev) != 0) {
      if (errno != ENOENT || ::epoll_ctl(inner_.native_handle(), EPOLL_CTL_ADD, fd, &ev) != 0) {
        return false;
      }
    }
    waiting_.push_back(task);
    watchInner();
    if (task->wait.until != Clock::time_point::max()) armTimer(task->wait.until);
    return true;
  }

 private:
  // One wait on the epoll instance at a time, kept while calls wait (and left pending after: a
  // late event only finds nobody to resume).
  void watchInner() {
    if (inner_pending_) return;
    inner_pending_ = true;
    inner_.async_wait(net::posix::stream_descriptor::wait_read,
                      [this](boost::system::error_code ec) { onInner(ec); });
  }

  void onInner(boost::system::error_code ec) {
    inner_pending_ = false;
    if (ec) return;  // the context is going away
    // Watched again before the harvest: an event that comes after it is a new edge.
    if (!waiting_.empty()) watchInner();
    std::array<epoll_event, 64> evs{};
    for (;;) {
      const int n = ::epoll_wait(inner_.native_handle(), evs.data(), evs.size(), 0);
      for (int i = 0; i < n; ++i) {
        for (const auto& t : waiting_) {
          if (t->wait.fd != evs[i].data.fd) continue;
          const auto wanted = static_cast<std::uint32_t>(t->wait.events) | EPOLLERR | EPOLLHUP;
          t->wait.revents |= static_cast<int>(evs[i].events & wanted);
          t->ready = t->ready || t->wait.revents != 0;
        }
      }
      if (n < static_cast<int>(evs.size())) break;
    }
    resumeReady();
  }

  void armTimer(Clock::time_point until) {
    if (timer_armed_ && timer_at_ <= until) return;
    timer_armed_ = true;
    timer_at_ = until;
    timer_.expires_at(until);
    timer_.async_wait([this, gen = ++timer_gen_](boost::system::error_code ec) {
      if (ec || gen != timer_gen_) return;  // re-armed earlier meanwhile, or going away
      timer_armed_ = false;
      const Clock::time_point now = Clock::now();
      for (const auto& t : waiting_) t->ready = t->ready || now >= t->wait.until;
      resumeReady();
    });
  }

  // Resumes the calls whose wait is over, in the order they suspended (out of the list first: a
  // call resumed may wait again), then arms the timer for the nearest deadline left.
  void resumeReady() {
    protocol::takeOver(waiting_, ready_, [](const Task& t) { return t.ready; });
    if (!timer_armed_) {
      Clock::time_point next = Clock::time_point::max();
      for (const auto& t : waiting_) next = std::min(next, t->wait.until);
      if (next != Clock::time_point::max()) armTimer(next);
    }
    // step() may suspend calls again (into waiting_), never touch ready_ (not re-entered: a
    // handler of this loop runs only from the context's own run()).
    std::vector<std::shared_ptr<Task>> run;
    run.swap(ready_);
    for (auto& t : run) CallFibers::step(t);
    run.clear();
    if (ready_.empty()) ready_.swap(run);  // keep the capacity
  }

  net::io_context& ioc_;
  net::posix::stream_descriptor inner_;  // the epoll instance of the calls' descriptors
  bool inner_pending_ = false;
  net::steady_timer timer_;
  bool timer_armed_ = false;
  Clock::time_point timer_at_{};
  std::uint64_t timer_gen_ = 0;
  std::vector<std::shared_ptr<Task>> waiting_;  // suspended calls
  std::vector<std::shared_ptr<Task>> ready_;    // resumeReady's scratch
};

namespace {

// This I/O thread's loop (one io_context per thread: server_impl.hpp), null on other threads.
thread_local CallFibers::ThreadLoop* t_loop = nullptr;

}  // namespace

int CallFibers::Task::suspendOn(int on, short wanted, int timeout_ms) {
  if (!loop.wait(shared_from_this(), on, wanted, timeout_ms)) {
    // Cannot be watched here: the call goes on on a worker and sleeps in poll() there.
    waits().handOn();
    return waits().wait(on, wanted, timeout_ms);  // handed on: poll() on the worker
  }
  suspend();
  return wait.revents;
}

void CallFibers::enterThread(net::io_context& ioc) {
  delete t_loop;
  t_loop = new ThreadLoop(ioc);
}

void CallFibers::leaveThread() {
  delete t_loop;
  t_loop = nullptr;
}

bool CallFibers::dispatch(protocol::CallJob& job, bool honours_waits) {
  ThreadLoop* loop = t_loop;
  if (!honours_waits || loop == nullptr || !pool_.tryAcquireSlot()) {
    return pool_.trySubmit(std::move(job));
  }
  auto task = std::make_shared<Task>(shared_from_this(), *loop, std::move(job));
  ++live_;
  // Started once the handler that dispatched it returns (the session is in the middle of
  // handling the request): a post from the thread running the context wakes nobody.
  net::post(loop->context(), [task] { step(task); });
  return true;
}

// Runs the call on its fiber until it suspends or ends, on its I/O thread.
void CallFibers::step(const std::shared_ptr<Task>& task) {
  // A call that moved to a worker no longer uses this thread's context.
  if (protocol::FiberCall::run(task) != protocol::FiberCall::After::Waiting) --task->owner->live_;
}

bool CallFibers::waitIdle(std::chrono::steady_clock::time_point until) const {
  while (live_.load() > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return live_.load() == 0;
}

}  // namespace mcpdb::transport::http
