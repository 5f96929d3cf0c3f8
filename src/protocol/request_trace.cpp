#include "protocol/request_trace.hpp"

#include <array>

namespace mcpdb::protocol {
namespace {

thread_local RequestTrace* current = nullptr;
thread_local std::shared_ptr<telemetry::Span>* current_span = nullptr;

// A method name as a span's name and mcp.method.name: the methods MCP defines; anything else is
// "_OTHER" (OpenTelemetry's convention), so a caller cannot write text of its own into spans.
std::string_view knownMethod(std::string_view method) {
  static constexpr std::array<std::string_view, 14> kMethods = {"initialize",
                                                                "ping",
                                                                "tools/list",
                                                                "tools/call",
                                                                "resources/list",
                                                                "resources/read",
                                                                "resources/templates/list",
                                                                "resources/subscribe",
                                                                "resources/unsubscribe",
                                                                "prompts/list",
                                                                "prompts/get",
                                                                "logging/setLevel",
                                                                "server/discover",
                                                                "subscriptions/listen"};
  for (auto m : kMethods) {
    if (m == method) return m;
  }
  return "_OTHER";
}

std::string_view stringMember(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

}  // namespace

std::optional<telemetry::SpanContext> remoteContext(const Classified& classified,
                                                    const Json& params) {
  if (const auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
    if (auto ctx = telemetry::extractContext(stringMember(*meta, "traceparent"),
                                             stringMember(*meta, "tracestate")))
      return ctx;
  }
  if (classified.traceparent.empty()) return std::nullopt;
  return telemetry::extractContext(classified.traceparent, classified.tracestate);
}

RequestTrace::RequestTrace(telemetry::Tracer& tracer, const Classified& classified,
                           std::string_view method, const Json& params,
                           std::string_view protocol_version)
    : outer_(current) {
  const std::string_view known = knownMethod(method);
  std::unique_ptr<telemetry::Span> span =
      tracer.startServerSpan(std::string(known), remoteContext(classified, params));
  if (span) {
    span->setString("mcp.method.name", known);
    if (!protocol_version.empty()) span->setString("mcp.protocol.version", protocol_version);
    span_ = std::move(span);
  }
  current = this;
  current_span = &span_;
}

RequestTrace::~RequestTrace() {
  if (span_) span_->end();
  current = outer_;
  current_span = outer_ != nullptr ? &outer_->span_ : nullptr;
}

telemetry::Span* currentRequestSpan() {
  return current_span != nullptr ? current_span->get() : nullptr;
}

std::shared_ptr<telemetry::Span> takeRequestSpan() {
  if (current_span == nullptr) return nullptr;
  return std::move(*current_span);
}

void annotateCall(telemetry::Span* span, const CallRecord& record) {
  if (span == nullptr) return;
  if (!record.engine.empty()) span->setString("mcpdb.engine", record.engine);
  if (!record.source.empty()) span->setString("mcpdb.source", record.source);
  span->setString("mcpdb.outcome", record.outcome);
  if (record.rows != 0) span->setInt("mcpdb.rows", static_cast<std::int64_t>(record.rows));
  if (record.truncated) span->setBool("mcpdb.truncated", true);
  if (record.outcome != "ok") span->setError(record.outcome);
}

void endCallSpan(telemetry::Span* span, const CallRecord& record) {
  if (span == nullptr) return;
  annotateCall(span, record);
  span->end();
}

}  // namespace mcpdb::protocol
