#include "common/fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/fiber.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

// GCC says __SANITIZE_ADDRESS__; Clang (the fuzz build) says __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define MCPDB_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MCPDB_FIBER_ASAN 1
#endif
#endif
#if defined(MCPDB_FIBER_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace mcpdb {
namespace {

// A fiber's stack: kStackBytes usable above one inaccessible guard page (an overflow faults
// instead of writing into whatever lies below).
struct Stack {
  void* base = nullptr;  // the mapping, guard page first
  std::size_t mapped = 0;
  void* top() const { return static_cast<char*>(base) + mapped; }
  void* bottom() const { return static_cast<char*>(top()) - Fiber::kStackBytes; }
};

// Stacks are mapped once and kept for the next call: a map, a protect and an unmap per call
// would be three system calls on the hot path. At most kKeep are kept (the most calls a server
// runs at once is its worker count, 8 by default).
class StackPool {
 public:
  static StackPool& instance() {
    static StackPool* pool = new StackPool;  // never destroyed: fibers may end during exit
    return *pool;
  }

  Stack take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        Stack s = free_.back();
        free_.pop_back();
        return s;
      }
    }
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    Stack s;
    s.mapped = Fiber::kStackBytes + page;
    s.base = ::mmap(nullptr, s.mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (s.base == MAP_FAILED) throw std::bad_alloc();
    if (::mprotect(s.base, page, PROT_NONE) != 0) {
      ::munmap(s.base, s.mapped);
      throw std::bad_alloc();
    }
    return s;
  }

  void give(Stack s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (free_.size() < kKeep) {
        free_.push_back(s);
        return;
      }
    }
    ::munmap(s.base, s.mapped);
  }

 private:
  static constexpr std::size_t kKeep = 64;
  std::mutex mu_;
  std::vector<Stack> free_;
};

// The stack is ours (preallocated): Boost.Context frees nothing.
struct KeepStack {
  boost::context::stack_context allocate() { return {}; }
  void deallocate(boost::context::stack_context& /*unused*/) noexcept {}
};

// AddressSanitizer's view of the switch (a no-op in other builds). `save` null: the stack being
// left ends (its fake frames are freed).
inline void startSwitch([[maybe_unused]] void** save, [[maybe_unused]] const void* bottom,
                        [[maybe_unused]] std::size_t size) {
#if defined(MCPDB_FIBER_ASAN)
  __sanitizer_start_switch_fiber(save, bottom, size);
#endif
}

inline void finishSwitch([[maybe_unused]] void* save, [[maybe_unused]] const void** old_bottom,
                         [[maybe_unused]] std::size_t* old_size) {
#if defined(MCPDB_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(save, old_bottom, old_size);
#endif
}

}  // namespace

struct Fiber::State {
  std::function<void()> body;
  Stack stack;
  boost::context::fiber self;    // the suspended fiber, as its resumer holds it
  boost::context::fiber caller;  // inside the fiber: the resumer, to switch back to
  // The resumer's stack (for ASan): the thread that resumed last.
  const void* caller_bottom = nullptr;
  std::size_t caller_size = 0;
  bool started = false;
};

Fiber::Fiber(std::function<void()> body) : state_(std::make_unique<State>()) {
  State* s = state_.get();
  s->body = std::move(body);
  s->stack = StackPool::instance().take();
  boost::context::stack_context sctx;
  sctx.size = Fiber::kStackBytes;
  sctx.sp = s->stack.top();
  s->self = boost::context::fiber(
      std::allocator_arg, boost::context::preallocated(sctx.sp, sctx.size, sctx), KeepStack{},
      [s](boost::context::fiber&& caller) {
        finishSwitch(nullptr, &s->caller_bottom, &s->caller_size);
        s->caller = std::move(caller);
        try {
          s->body();
        } catch (...) {
          // As an exception escaping a thread's function would: the body's contract is broken.
          std::fputs("mcp-dbserver: an exception escaped a fiber\n", stderr);
          std::terminate();
        }
        s->body = nullptr;  // what it holds goes while the fiber's stack is still live
        startSwitch(nullptr, s->caller_bottom, s->caller_size);
        return std::move(s->caller);
      });
}

Fiber::~Fiber() {
  if (state_->started && !done_) {
    std::fputs("mcp-dbserver: a suspended fiber was destroyed\n", stderr);
    std::abort();
  }
  state_->self = {};  // never started: unwound here, before its stack goes
  StackPool::instance().give(state_->stack);
}

void Fiber::resume() {
  State* s = state_.get();
  s->started = true;
  void* save = nullptr;
  startSwitch(&save, s->stack.bottom(), Fiber::kStackBytes);
  s->self = std::move(s->self).resume();
  finishSwitch(save, nullptr, nullptr);
  if (!s->self) done_ = true;
}

void Fiber::suspend() {
  State* s = state_.get();
  void* save = nullptr;
  startSwitch(&save, s->caller_bottom, s->caller_size);
  s->caller = std::move(s->caller).resume();
  finishSwitch(save, &s->caller_bottom, &s->caller_size);
}

}  // namespace mcpdb
