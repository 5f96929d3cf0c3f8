#pragma once
// The OTLP/HTTP JSON encoding of a batch of spans (opentelemetry-proto's
// ExportTraceServiceRequest in its JSON mapping): resourceSpans → scopeSpans → spans, trace and
// span ids as lowercase hex, enums as integers, 64-bit integers as decimal strings.

#include <string>
#include <vector>

#include "telemetry/span.hpp"

namespace mcpdb::telemetry {

// Who produced the spans: the resource's service.name and service.version, and the
// instrumentation scope.
struct ResourceInfo {
  std::string service_name = "mcp-dbserver";
  std::string service_version;
};

// The request body of one export.
std::string encodeOtlpJson(const ResourceInfo& resource, const std::vector<SpanData>& spans);

}  // namespace mcpdb::telemetry
