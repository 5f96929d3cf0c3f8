#pragma once
// Expected failures are values, not exceptions. Shaped like std::expected (which g++ 12 only
// offers under C++23), with a short code list in the spirit of RocksDB's Status.

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace mcpdb {

// Every code maps to exactly one MCP outcome (errorText in protocol/session.cpp: a tool result
// with isError; Cancelled: no response).
enum class Code {
  InvalidArgument,     // bad tool arguments / bad input: tool result with isError
  NotFound,            // unknown item / target
  PermissionDenied,    // refused by scope, guardrail or the database's privileges
  TimedOut,            // statement or call deadline exceeded
  Unavailable,         // database or endpoint unreachable; retrying may help
  ResourceExhausted,   // rate limit, pool full, size limit
  Cancelled,           // the client cancelled the request
  FailedPrecondition,  // configuration or state does not allow the call
  Internal,            // a bug or an unexpected engine reply
};

std::string_view codeName(Code code);

// An error whose message is safe to show to the client: never a credential, parameter value or row.
// `detail` is for the operator only (doctor, check-config, the startup log): where and why, e.g.
// the host:port and the server's own reason for a failed connection. Never sent to a client, and
// never a credential either.
struct Error {
  Code code;
  std::string message;
  std::string detail = {};
};

// "message (detail)", for operator-facing output.
inline std::string operatorText(const Error& e) {
  return e.detail.empty() ? e.message : e.message + " (" + e.detail + ")";
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_{Code::Internal, {}};
  bool ok_ = true;
};

using Status = Result<void>;

inline Error makeError(Code code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace mcpdb
