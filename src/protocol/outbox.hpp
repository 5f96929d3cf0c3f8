#pragma once
// Where a session's responses and notifications go (stdio's writer, an HTTP POST, a batch).

#include <optional>
#include <stop_token>
#include <string>

#include "common/json.hpp"

namespace mcpdb::protocol {

// The JSON-RPC error code of a call refused by a transport limit (rate or concurrency); the same
// code the HTTP transport's 429 bodies carry.
inline constexpr int kLimitExceeded = -32000;

// Implementations must be thread-safe.
class Outbox {
 public:
  virtual ~Outbox() = default;
  virtual void send(const Json& message) = 0;
  // One message already serialised as serialize() writes it (compact, one line), moved through
  // so that nothing dumps it a second time. `response`: it answers a request (a response or a
  // batch of them) rather than being a notification. Transports override this to write the bytes
  // as they are; the default parses them back for outboxes that keep Json (tests).
  virtual void sendSerialized(std::string text, bool response);
  // A request sent through this outbox ended without an answer (cancelled: MCP sends none), so
  // an outbox that counts the answers it waits for (a batch) stops waiting for it.
  virtual void unanswered() {}

  // A transport's refusal of one tools/call (its per-client limits): the audit outcome and the
  // message of the JSON-RPC error (kLimitExceeded) that answers the call.
  struct CallRefusal {
    std::string outcome;
    std::string message;
  };
  // Asked once for every tools/call about to be dispatched through this outbox, in the order the
  // calls came: nullopt lets it run. So limits count calls, not requests (a batch holds many).
  virtual std::optional<CallRefusal> admitCall() { return std::nullopt; }
  // Stops when nobody waits for these answers any more (HTTP: the connection closed): every call
  // started through this outbox is then cancelled, down to the database.
  virtual std::stop_token gone() const { return {}; }
};

}  // namespace mcpdb::protocol
