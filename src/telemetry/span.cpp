#include "telemetry/span.hpp"

#include "telemetry/tracer.hpp"

namespace mcpdb::telemetry {

std::uint64_t unixNanosNow() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

Span::Span(Tracer& tracer, SpanData data)
    : tracer_(&tracer), data_(std::move(data)), started_(std::chrono::steady_clock::now()) {
  if (data_.start_unix_ns == 0) data_.start_unix_ns = unixNanosNow();
  context_.trace_id = data_.trace_id;
  context_.span_id = data_.span_id;
  context_.flags = 0x01;  // a span exists only when it is sampled
  context_.trace_state = data_.trace_state;
}

Span::~Span() {
  end();
}

void Span::set(std::string_view key, AttributeValue value) {
  for (auto& a : data_.attributes) {
    if (a.key == key) {
      a.value = std::move(value);
      return;
    }
  }
  data_.attributes.push_back(Attribute{std::string(key), std::move(value)});
}

void Span::setString(std::string_view key, std::string_view value) {
  set(key, std::string(value));
}
void Span::setInt(std::string_view key, std::int64_t value) {
  set(key, value);
}
void Span::setBool(std::string_view key, bool value) {
  set(key, value);
}

void Span::setError(std::string_view error_type) {
  data_.status = StatusCode::Error;
  setString("error.type", error_type);
}

std::unique_ptr<Span> Span::startChild(std::string name, SpanKind kind) const {
  SpanData child;
  child.trace_id = data_.trace_id;
  child.span_id = tracer_->newSpanId();
  child.parent_span_id = data_.span_id;
  child.trace_state = data_.trace_state;
  child.name = std::move(name);
  child.kind = kind;
  return std::make_unique<Span>(*tracer_, std::move(child));
}

void Span::end() {
  if (ended_) return;
  ended_ = true;
  // The end time from the monotonic clock: a wall-clock step during the span cannot make it
  // end before it began.
  const auto took = std::chrono::steady_clock::now() - started_;
  data_.end_unix_ns =
      data_.start_unix_ns + static_cast<std::uint64_t>(
                                std::chrono::duration_cast<std::chrono::nanoseconds>(took).count());
  tracer_->submit(std::move(data_));
}

}  // namespace mcpdb::telemetry
