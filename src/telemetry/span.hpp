#pragma once
// The span model: what one recorded operation is (SpanData, exported as OTLP), the live Span a
// request or a database round trip holds while it runs, and ChildSpan, the guard an engine puts
// around a round trip: with no parent (tracing off, or the request not sampled) it is a null test
// and nothing else.
//
// What a span may hold is the call's shape, never its content: names from the configuration
// (tool, source, engine), the protocol version, the outcome and an error's class. Never an
// argument value, a row, statement text or a credential: the setters take a key and a value the
// caller chose from that list, and tests check what reaches the wire.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "telemetry/trace_context.hpp"

namespace mcpdb::telemetry {

class Tracer;

// OTLP's SpanKind values.
enum class SpanKind : int { Internal = 1, Server = 2, Client = 3 };
// OTLP's status codes.
enum class StatusCode : int { Unset = 0, Ok = 1, Error = 2 };

using AttributeValue = std::variant<std::string, std::int64_t, bool>;
struct Attribute {
  std::string key;
  AttributeValue value;
};

// One finished span, as the exporter encodes it.
struct SpanData {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zero: a root span
  std::string trace_state;
  std::string name;
  SpanKind kind = SpanKind::Internal;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t end_unix_ns = 0;
  std::vector<Attribute> attributes;
  StatusCode status = StatusCode::Unset;
};

// A span being recorded. Owned by whoever runs the operation; end() (or the destructor) hands it
// to its tracer, once. Thread-compatible: one thread at a time sets attributes; context() and
// tracer() may be read from any thread.
class Span {
 public:
  Span(Tracer& tracer, SpanData data);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  // The context children and propagation use (trace id, this span's id, the flags).
  const SpanContext& context() const { return context_; }
  Tracer& tracer() const { return *tracer_; }

  void setName(std::string name) { data_.name = std::move(name); }
  void setString(std::string_view key, std::string_view value);
  void setInt(std::string_view key, std::int64_t value);
  void setBool(std::string_view key, bool value);
  // Marks the span failed, with `error_type` (a class such as a Code name or an outcome, never a
  // message) as the error.type attribute.
  void setError(std::string_view error_type);
  // A child of this span, started now.
  std::unique_ptr<Span> startChild(std::string name, SpanKind kind) const;
  // Ends the span now and hands it to the tracer; later calls do nothing.
  void end();

  const SpanData& data() const { return data_; }

 private:
  void set(std::string_view key, AttributeValue value);

  Tracer* tracer_;
  SpanData data_;
  SpanContext context_;
  std::chrono::steady_clock::time_point started_;
  bool ended_ = false;
};

// A child span around one database round trip, when the call is traced (`parent` not null);
// otherwise nothing is made and every member is a null test.
class ChildSpan {
 public:
  // Inline: an untraced call pays the null test and nothing else.
  ChildSpan(Span* parent, std::string_view name) {
    if (parent != nullptr) span_ = parent->startChild(std::string(name), SpanKind::Client);
  }
  ~ChildSpan() = default;
  ChildSpan(const ChildSpan&) = delete;
  ChildSpan& operator=(const ChildSpan&) = delete;

  explicit operator bool() const { return span_ != nullptr; }
  Span* get() const { return span_.get(); }
  Span* operator->() const { return span_.get(); }

 private:
  std::unique_ptr<Span> span_;
};

// Wall-clock nanoseconds since the epoch (OTLP's time unit).
std::uint64_t unixNanosNow();

}  // namespace mcpdb::telemetry
