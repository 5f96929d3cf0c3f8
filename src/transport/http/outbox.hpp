#pragma once
// What a POST's calls are allowed to start (CallBudget) and where their messages go (PostOutbox),
// and the gate that keeps worker threads from reaching I/O contexts that are gone (PostGate).
// No Boost here: the connection hands in its delivery functions.

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <string_view>

#include "auth/rate_limiter.hpp"
#include "protocol/session.hpp"

namespace mcpdb::transport::http {

// Lets worker threads post to the I/O contexts (and write to sockets) only while they exist.
// Shared while a thread answers; exclusive to close it at shutdown.
struct PostGate {
  std::shared_mutex mu;
  bool open = true;
};

// What the tool calls of one POST may start: each call takes a token of the client's rate bucket
// and a slot of its concurrency cap, in the order the calls come, so a batch counts as the calls it
// holds. The request's own token (taken before the body was handled) pays for its first call; a
// single call's slot is reserved before the session sees it (over the cap, the POST is answered
// 429 as before). Slots are held until the POST is answered. Used on the connection's I/O thread
// (Session::handle dispatches calls synchronously); `entered` is read when the POST ends.
struct CallBudget {
  CallBudget(auth::RateLimiter& l, std::string c, auth::RateSettings r, bool reserved)
      : limiter(l),
        client(std::move(c)),
        rate(r),
        prereserved(reserved ? 1 : 0),
        entered(reserved ? 1 : 0) {}

  // nullopt: the call may start (and now holds a slot).
  std::optional<protocol::Outbox::CallRefusal> admit();
  protocol::Outbox::CallRefusal refused(std::string reason, std::string message);

  auth::RateLimiter& limiter;
  std::string client;
  auth::RateSettings rate;
  std::size_t prereserved;
  bool prepaid = true;
  std::atomic<std::size_t> entered;
  std::function<void()> on_started;                  // metrics: one call started
  std::function<void(std::string_view)> on_refused;  // audit and metrics of one refused call
};

// Responses and notifications of one POST. An SSE POST (`stream`) hands every message to its
// connection's I/O thread as it comes (`deliver`) and ends when the last reference goes (every
// call of the POST finished or was cancelled). A JSON POST ends with its one response: `finish`
// gets it at once, on the thread that produced it (before, the response and the end of the POST
// were two hand-offs to the I/O thread); when there is none (every call cancelled), `finish` gets
// nullopt when the last reference goes.
class PostOutbox final : public protocol::Outbox {
 public:
  PostOutbox(bool stream, std::function<void(std::string, bool)> deliver,
             std::function<void(std::optional<std::string>)> finish,
             std::shared_ptr<CallBudget> budget, std::stop_token gone)
      : stream_(stream),
        deliver_(std::move(deliver)),
        finish_(std::move(finish)),
        budget_(std::move(budget)),
        gone_(std::move(gone)) {}
  ~PostOutbox() override;
  void send(const Json& message) override;
  void sendSerialized(std::string text, bool response) override;
  std::optional<CallRefusal> admitCall() override;
  std::stop_token gone() const override;

 private:
  const bool stream_;
  std::atomic<bool> finished_{false};
  std::function<void(std::string, bool)> deliver_;
  std::function<void(std::optional<std::string>)> finish_;
  std::shared_ptr<CallBudget> budget_;
  std::stop_token gone_;
};

// Where the messages of a request that expects no answer go (and the stateless initialize's).
class NullOutbox final : public protocol::Outbox {
 public:
  void send(const Json&) override {}
  void sendSerialized(std::string, bool) override {}  // not parsed back only to be dropped
};

}  // namespace mcpdb::transport::http
