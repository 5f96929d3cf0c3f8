#include "common/call_waits.hpp"

#include <utility>

namespace mcpdb {

CallWaits::CallWaits(std::array<int, 2> fds, std::function<void()> hand_on)
    : hand_on_(std::move(hand_on)) {
  for (const int fd : fds) {
    if (fd >= 0) fds_[count_++] = fd;
  }
}

void CallWaits::handOn() {
  if (handed_on_) return;
  // Done before the hook runs: it may run code that looks at this object again.
  handed_on_ = true;
  count_ = 0;
  const std::function<void()> hook = std::move(hand_on_);
  hand_on_ = nullptr;
  if (hook) hook();
}

}  // namespace mcpdb
