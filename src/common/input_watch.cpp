#include "common/input_watch.hpp"

namespace mcpdb::input_watch {
namespace {
thread_local const Watch* t_watch = nullptr;
}  // namespace

const Watch* current() noexcept {
  return t_watch;
}

void release() {
  const Watch* w = t_watch;
  if (w == nullptr) return;
  t_watch = nullptr;  // first: release() may run code that asks current()
  if (w->release) w->release();
}

Scope::Scope(Watch& watch) : previous_(t_watch) {
  t_watch = &watch;
}

Scope::~Scope() {
  t_watch = previous_;
}

}  // namespace mcpdb::input_watch
