#include "transport/http/outbox.hpp"

#include <algorithm>

#include "protocol/jsonrpc.hpp"

namespace mcpdb::transport::http {

std::optional<protocol::Outbox::CallRefusal> CallBudget::admit() {
  if (prereserved > 0) {
    --prereserved;
    prepaid = false;
    return std::nullopt;
  }
  if (prepaid) {
    prepaid = false;
  } else if (auto refusal = limiter.admit(client, rate)) {
    if (refusal->store_down) {
      return refused("limits_unavailable",
                     "the server cannot check its limits now: retry in a moment");
    }
    const long secs =
        std::max<long>(1, static_cast<long>((refusal->retry_after.count() + 999) / 1000));
    return refused("rate_limited",
                   "rate limit exceeded: retry after " + std::to_string(secs) + " s");
  }
  switch (limiter.enterCalls(client, 1, rate.max_concurrent)) {
    case auth::RateLimiter::Slots::Entered: break;
    case auth::RateLimiter::Slots::OverCap:
      return refused("concurrency_limited", "too many concurrent tool calls for this client");
    case auth::RateLimiter::Slots::Unavailable:
      return refused("limits_unavailable",
                     "the server cannot check its limits now: retry in a moment");
  }
  entered.fetch_add(1);
  if (on_started) on_started();
  return std::nullopt;
}

protocol::Outbox::CallRefusal CallBudget::refused(std::string reason, std::string message) {
  if (on_refused) on_refused(reason);
  return {std::move(reason), std::move(message)};
}

PostOutbox::~PostOutbox() {
  if (!finished_.exchange(true)) finish_(std::nullopt);
}

void PostOutbox::send(const Json& message) {
  const bool response = message.is_array() || message.contains("id");
  // JSON mode: notifications without a stream to carry them are dropped, unserialised.
  if (!stream_ && !response) return;
  sendSerialized(protocol::serialize(message), response);
}

void PostOutbox::sendSerialized(std::string text, bool response) {
  if (stream_) return deliver_(std::move(text), response);
  if (response && !finished_.exchange(true)) finish_(std::move(text));
}

std::optional<protocol::Outbox::CallRefusal> PostOutbox::admitCall() {
  return budget_->admit();
}

std::stop_token PostOutbox::gone() const {
  return gone_;
}

}  // namespace mcpdb::transport::http
