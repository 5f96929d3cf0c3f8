// libFuzzer target: JSON-RPC batches through Session::handle, with a transport that refuses every
// other call (Outbox::admitCall). Checks the answer-slot rule (issue #18): a batch is answered
// once, with exactly one answer per element that protocol::getsAnswer says gets one, never early.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>

#include "../../unit/protocol/fake_tools.hpp"
#include "protocol/session.hpp"

namespace {

using mcpdb::Json;
namespace protocol = mcpdb::protocol;

class CountingOutbox : public protocol::Outbox {
 public:
  void send(const Json& message) override {
    if (message.is_array()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++arrays_;
      answers_ += message.size();
    } else if (message.contains("id")) {
      std::lock_guard<std::mutex> lock(mu_);
      ++answers_;
    }
  }
  std::optional<CallRefusal> admitCall() override {
    if (calls_++ % 2 == 1) return CallRefusal{"concurrency_limited", "limit"};
    return std::nullopt;
  }
  std::size_t answers() {
    std::lock_guard<std::mutex> lock(mu_);
    return answers_;
  }
  std::size_t arrays() {
    std::lock_guard<std::mutex> lock(mu_);
    return arrays_;
  }

 private:
  std::mutex mu_;
  std::size_t answers_ = 0;
  std::size_t arrays_ = 0;
  std::atomic<std::size_t> calls_{0};
};

protocol::ServerCore& core() {
  static protocol::ServerCore instance(
      [] {
        protocol::ServerOptions o;
        o.workers = 2;
        o.parse.max_bytes = 64 * 1024;
        return o;
      }(),
      protocol::testing::makeFakeRegistry(1));
  return instance;
}

// A call of the fake `slow` tool is cancelled at the end of a run, so it may go unanswered.
bool callsSlow(const Json& m) {
  return protocol::isToolCall(m) && m.contains("params") && m["params"].is_object() &&
         m["params"].value("name", Json()) == "slow";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Json message =
      Json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (message.is_discarded()) return 0;
  auto session = std::make_shared<protocol::Session>(core(), protocol::Principal{});
  auto init_out = std::make_shared<CountingOutbox>();
  session->handle(
      Json::parse(
          R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})"),
      init_out);
  auto out = std::make_shared<CountingOutbox>();
  std::size_t expected = 0;
  bool may_cancel = false;
  if (message.is_array()) {
    for (const auto& m : message) {
      expected += protocol::getsAnswer(m) ? 1 : 0;
      may_cancel = may_cancel || callsSlow(m);
    }
    if (message.empty()) expected = 1;  // one error for the empty batch
  } else {
    expected = protocol::getsAnswer(message) ? 1 : 0;
    may_cancel = callsSlow(message);
  }
  session->handle(message, out);
  // Up to 6 s: a `slow` call of an earlier input (5 s at most, on another session) may still hold
  // one of the two workers, and this input's calls queue behind it; an answer that comes late is
  // not a lost one (2 s was once too short in the full run, a resource read waiting for a worker).
  session->drain(std::chrono::milliseconds(may_cancel ? 0 : 6000));
  const std::size_t answers = out->answers();
  if (answers > expected || (!may_cancel && answers != expected) || out->arrays() > 1) std::abort();
  return 0;
}
