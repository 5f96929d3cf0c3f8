#pragma once
// The `telemetry:` section (OpenTelemetry traces over OTLP/HTTP, telemetry/tracer.hpp): declared
// once with config::Section, so the reference and the JSON Schema come from it; and the tracer
// made from it at start-up, with its metrics. Off unless `telemetry.enabled: true`.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/env.hpp"
#include "common/result.hpp"
#include "config/section.hpp"
#include "observe/metrics.hpp"
#include "telemetry/tracer.hpp"

namespace mcpdb::app {

struct TelemetrySettings {
  bool enabled = false;
  std::string otlp_endpoint;
  std::string service_name = "mcp-dbserver";
  double sampling_ratio = 1.0;
  std::int64_t batch_size = 512;
  std::int64_t max_queue = 2048;
  std::chrono::milliseconds export_interval{1000};
  std::chrono::milliseconds export_timeout{5000};
  // Request headers of the export, each read from an environment variable at start-up (name,
  // variable): credentials never sit in the file.
  std::vector<std::pair<std::string, std::string>> headers_env;
  std::string ca_file;
  bool accept_trace_context = true;
  bool postgres_application_name = false;
};

const config::Section<TelemetrySettings>& telemetrySection();
void parseTelemetrySettings(const config::Node& section, TelemetrySettings& out);

// What is wrong with an OTLP endpoint ("" when nothing): http or https, a host, no user
// information, query or fragment (a credential there would be written in the file and the log).
std::string endpointProblem(std::string_view url);
// The URL exported to: `url`, with /v1/traces added when it names no path.
std::string tracesUrl(std::string_view url);

// The tracer `settings` asks for (null when telemetry is off); an error naming the variable when
// a header's variable is unset or holds a line break (its value is never shown).
Result<std::shared_ptr<telemetry::Tracer>> makeTracer(const TelemetrySettings& settings,
                                                      const Env& env, std::string version);

// The tracer's counters and queue gauge: mcpdb_telemetry_spans_exported_total,
// mcpdb_telemetry_spans_dropped_total (queue full), mcpdb_telemetry_spans_failed_total (export
// failed), mcpdb_telemetry_queue_spans.
void addTelemetryMetrics(observe::Metrics& metrics, std::shared_ptr<telemetry::Tracer> tracer);

}  // namespace mcpdb::app
