#include "common/call_waits.hpp"

#include <poll.h>

#include <utility>

namespace mcpdb {
namespace {

int pollOne(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  const int n = ::poll(&p, 1, timeout_ms);
  if (n < 0) return -1;
  return n == 0 ? 0 : p.revents;
}

}  // namespace

CallWaits::CallWaits(Suspend suspend, std::function<void()> hand_on)
    : suspend_(std::move(suspend)), hand_on_(std::move(hand_on)) {}

int CallWaits::wait(int fd, short events, int timeout_ms) {
  if (suspends()) return suspend_(fd, events, timeout_ms);
  return pollOne(fd, events, timeout_ms);
}

void CallWaits::handOn() {
  if (handed_on_) return;
  // Done before the hook runs: it may run code that looks at this object again.
  handed_on_ = true;
  const std::function<void()> hook = std::move(hand_on_);
  hand_on_ = nullptr;
  if (hook) hook();
}

int pollTimeout(std::chrono::steady_clock::time_point until, int cap) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      until - std::chrono::steady_clock::now())
                      .count();
  if (us <= 0) return 0;
  const auto ms = (us + 999) / 1000;
  return ms > cap ? cap : static_cast<int>(ms);
}

int waitFor(CallWaits* waits, int fd, short events, int timeout_ms) {
  return waits != nullptr ? waits->wait(fd, events, timeout_ms) : pollOne(fd, events, timeout_ms);
}

}  // namespace mcpdb
