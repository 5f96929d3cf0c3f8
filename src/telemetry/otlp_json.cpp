#include "telemetry/otlp_json.hpp"

#include "common/json.hpp"

namespace mcpdb::telemetry {
namespace {

Json anyValue(const AttributeValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return {{"stringValue", *s}};
  if (const auto* i = std::get_if<std::int64_t>(&v)) return {{"intValue", std::to_string(*i)}};
  return {{"boolValue", std::get<bool>(v)}};
}

Json keyValue(const std::string& key, const AttributeValue& v) {
  return {{"key", key}, {"value", anyValue(v)}};
}

Json spanJson(const SpanData& s) {
  Json attributes = Json::array();
  for (const auto& a : s.attributes) attributes.push_back(keyValue(a.key, a.value));
  Json span = {{"traceId", hex(s.trace_id)},
               {"spanId", hex(s.span_id)},
               {"name", s.name},
               {"kind", static_cast<int>(s.kind)},
               {"startTimeUnixNano", std::to_string(s.start_unix_ns)},
               {"endTimeUnixNano", std::to_string(s.end_unix_ns)},
               {"attributes", std::move(attributes)},
               {"status", {{"code", static_cast<int>(s.status)}}}};
  if (!allZero(s.parent_span_id)) span["parentSpanId"] = hex(s.parent_span_id);
  if (!s.trace_state.empty()) span["traceState"] = s.trace_state;
  return span;
}

}  // namespace

std::string encodeOtlpJson(const ResourceInfo& resource, const std::vector<SpanData>& spans) {
  Json resource_attributes = Json::array({keyValue("service.name", resource.service_name)});
  if (!resource.service_version.empty())
    resource_attributes.push_back(keyValue("service.version", resource.service_version));
  Json list = Json::array();
  for (const auto& s : spans) list.push_back(spanJson(s));
  Json scope = {{"name", "mcp-dbserver"}};
  if (!resource.service_version.empty()) scope["version"] = resource.service_version;
  const Json body = {
      {"resourceSpans",
       Json::array({{{"resource", {{"attributes", std::move(resource_attributes)}}},
                     {"scopeSpans", Json::array({{{"scope", std::move(scope)},
                                                  {"spans", std::move(list)}}})}}})}};
  // Every string is ASCII or came from the configuration; a stray invalid byte is replaced rather
  // than failing the export.
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace mcpdb::telemetry
