#pragma once
// W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` and `tracestate`
// a caller sends in HTTP headers or in a request's `params._meta`. Both are untrusted input, read
// strictly: only version 00, exactly 55 characters of lowercase hex and dashes, neither id all
// zeros; a tracestate of at most kMaxTracestateMembers list-members whose keys and values follow
// the specification's grammar, at most kMaxTracestateBytes long, no key twice. Anything else is
// refused whole (nullopt): the request then starts a trace of its own, as the specification
// says a receiver does with an invalid traceparent.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mcpdb::telemetry {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// The longest tracestate accepted: the 512 characters the specification asks every vendor to
// propagate (a longer one is dropped whole, not cut).
inline constexpr std::size_t kMaxTracestateBytes = 512;
// The most list-members a tracestate may hold (the specification's limit).
inline constexpr std::size_t kMaxTracestateMembers = 32;
// A traceparent of version 00 is exactly this long: "00-" 32 hex "-" 16 hex "-" 2 hex.
inline constexpr std::size_t kTraceparentBytes = 55;

// Where a span sits in a trace: its trace, its own id, the trace flags (bit 0: sampled) and the
// vendors' tracestate (validated, members joined by ","; empty: none).
struct SpanContext {
  TraceId trace_id{};
  SpanId span_id{};
  std::uint8_t flags = 0;
  std::string trace_state;
  bool sampled() const { return (flags & 0x01) != 0; }
};

// A version-00 traceparent: its trace id, parent id and flags; nullopt when it is not exactly one.
std::optional<SpanContext> parseTraceparent(std::string_view text);
// A tracestate, normalised (empty members and optional whitespace dropped, members joined by
// ","); nullopt when it breaks a rule or a limit.
std::optional<std::string> parseTracestate(std::string_view text);
// Both together, as a receiver reads them: no context without a valid traceparent; an invalid
// tracestate is dropped and the traceparent kept (the specification's rule).
std::optional<SpanContext> extractContext(std::string_view traceparent,
                                          std::string_view tracestate);

// "00-<trace id>-<span id>-<flags>".
std::string formatTraceparent(const TraceId& trace_id, const SpanId& span_id, std::uint8_t flags);
// Lowercase hex of bytes (the OTLP JSON encoding of ids).
std::string hex(std::span<const std::uint8_t> bytes);
bool allZero(std::span<const std::uint8_t> bytes);

}  // namespace mcpdb::telemetry
