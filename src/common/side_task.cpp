#include "common/side_task.hpp"

#include <system_error>

namespace mcpdb {

void SideTask::start(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_.exchange(true)) return;
  auto run = [this, work] {
    work();
    done_ = true;
  };
  try {
    thread_ = std::thread(run);  // a copy: the thread's constructor may consume it and fail
  } catch (const std::system_error&) {
    run();  // no thread to be had
  }
}

void SideTask::join() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable()) thread_.join();
}

}  // namespace mcpdb
