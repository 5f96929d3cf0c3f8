#include "app/telemetry.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

namespace mcpdb::app {
namespace {

bool tokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A header the export may carry: an HTTP token, and none the exporter sets itself.
std::string headerNameProblem(std::string_view name) {
  if (name.empty() || name.size() > 64 || !std::all_of(name.begin(), name.end(), tokenChar))
    return "'" + std::string(name.substr(0, 64)) + "' is not an HTTP header name";
  static const std::vector<std::string> kReserved = {"content-type", "content-length", "host",
                                                     "transfer-encoding", "connection"};
  if (std::find(kReserved.begin(), kReserved.end(), lower(name)) != kReserved.end())
    return "the exporter sets '" + std::string(name) + "' itself";
  return {};
}

std::string variableProblem(std::string_view name) {
  const bool ok = !name.empty() && name.size() <= 128 &&
                  (std::isalpha(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                  });
  return ok ? "" : "must name an environment variable ([A-Za-z_][A-Za-z0-9_]*)";
}

bool readHeadersEnv(TelemetrySettings& out, const config::Node& node) {
  if (!node.isMap()) {
    node.error("must be a map of header names to environment variable names");
    return false;
  }
  bool ok = true;
  for (auto& [name, value] : node.entries()) {
    if (auto p = headerNameProblem(name); !p.empty()) {
      value.error(p);
      ok = false;
      continue;
    }
    const auto variable = value.asString();
    if (!variable) {
      ok = false;
      continue;
    }
    if (auto p = variableProblem(*variable); !p.empty()) {
      value.error(p);
      ok = false;
      continue;
    }
    out.headers_env.emplace_back(name, *variable);
  }
  return ok;
}

}  // namespace

std::string endpointProblem(std::string_view url) {
  std::string_view rest;
  if (url.substr(0, 7) == "http://") {
    rest = url.substr(7);
  } else if (url.substr(0, 8) == "https://") {
    rest = url.substr(8);
  } else {
    return "must be an http:// or https:// URL";
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return "must not hold spaces or control characters";
  }
  const std::string_view authority = rest.substr(0, rest.find('/'));
  if (authority.empty()) return "names no host";
  if (authority.find('@') != std::string_view::npos)
    return "must not hold user information (a credential comes from telemetry.headers_env)";
  if (url.find_first_of("?#") != std::string_view::npos)
    return "must not hold a query or a fragment (a credential comes from telemetry.headers_env)";
  return {};
}

std::string tracesUrl(std::string_view url) {
  const std::size_t scheme = url.find("://");
  const std::size_t slash = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  if (slash == std::string_view::npos) return std::string(url) + "/v1/traces";
  if (url.substr(slash) == "/") return std::string(url.substr(0, slash)) + "/v1/traces";
  return std::string(url);
}

const config::Section<TelemetrySettings>& telemetrySection() {
  using T = TelemetrySettings;
  static const auto s =
      config::Section<T>(
          "OpenTelemetry traces: a span per MCP request and per database round trip, exported "
          "in batches over OTLP/HTTP (JSON) from a thread of their own, so a collector that is "
          "down or slow never holds a call; off unless enabled")
          .boolean("enabled", &T::enabled, "export traces (needs otlp_endpoint)")
          .string("otlp_endpoint", &T::otlp_endpoint,
                  "the collector's OTLP/HTTP traces URL (http or https; `/v1/traces` is added to "
                  "a URL without a path); no user information or query: credentials come from "
                  "headers_env",
                  config::kOptional, [](std::string_view v) { return endpointProblem(v); })
          .example("http://127.0.0.1:4318/v1/traces")
          .string("service_name", &T::service_name, "the resource's service.name")
          .number("sampling_ratio", &T::sampling_ratio, 0, 1,
                  "the share of traces this server starts that are recorded; a request whose "
                  "caller sent a traceparent follows the caller's sampled flag instead (when "
                  "accept_trace_context)")
          .integer("batch_size", &T::batch_size, 1, 10000, "spans per export request at most")
          .integer("max_queue", &T::max_queue, 1, 1000000,
                   "spans waiting for export at most; while it is full new spans are dropped and "
                   "counted (mcpdb_telemetry_spans_dropped_total), calls never wait")
          .millis("export_interval_ms", &T::export_interval, 10, 60000,
                  "the longest a finished span waits before its batch is sent")
          .millis("export_timeout_ms", &T::export_timeout, 100, 60000,
                  "one export request at most, connection included; its spans are dropped and "
                  "counted (mcpdb_telemetry_spans_failed_total) when it fails")
          .custom(
              "headers_env",
              "request headers of the export, each read from the environment variable it names "
              "at start-up (e.g. an authorization header for the collector); the value is never "
              "in the file nor logged",
              [] {
                return Json{
                    {"type", "object"},
                    {"additionalProperties", {{"type", "string"}}},
                    {"examples", Json::array({{{"authorization", "MCPDB_OTLP_AUTHORIZATION"}}})}};
              },
              config::kOptional,
              [](T& out, const config::Node& node) { return readHeadersEnv(out, node); })
          .string("ca_file", &T::ca_file,
                  "a CA bundle for an https endpoint (default: the system's)")
          .boolean("accept_trace_context", &T::accept_trace_context,
                   "continue the caller's trace (W3C traceparent/tracestate from the HTTP "
                   "headers or the request's params._meta, validated strictly); false: every "
                   "request starts a trace of its own")
          .boolean("postgres_application_name", &T::postgres_application_name,
                   "set the PostgreSQL round trip's traceparent as application_name (SET LOCAL "
                   "in the call's own pipeline: no extra round trip, undone by its ROLLBACK), so "
                   "pg_stat_activity and the server's log show the trace")
          .check([](T& t, const config::Node& node) {
            if (t.enabled && t.otlp_endpoint.empty()) {
              node.errorAt("otlp_endpoint", "is required when telemetry.enabled is true");
              return false;
            }
            if (t.batch_size > t.max_queue) {
              node.errorAt("batch_size",
                           "must not exceed max_queue (" + std::to_string(t.max_queue) + ")");
              return false;
            }
            return true;
          })
          .exampleYaml(
              "telemetry:\n  enabled: true\n  otlp_endpoint: http://127.0.0.1:4318/v1/traces\n"
              "  sampling_ratio: 0.25\n  headers_env:\n    authorization: "
              "MCPDB_OTLP_AUTHORIZATION\n");
  return s;
}

void parseTelemetrySettings(const config::Node& section, TelemetrySettings& out) {
  if (!section.present()) return;
  (void)telemetrySection().parse(section, out);
}

Result<std::shared_ptr<telemetry::Tracer>> makeTracer(const TelemetrySettings& settings,
                                                      const Env& env, std::string version) {
  if (!settings.enabled) return std::shared_ptr<telemetry::Tracer>();
  telemetry::TracerOptions o;
  o.endpoint = tracesUrl(settings.otlp_endpoint);
  o.resource.service_name = settings.service_name;
  o.resource.service_version = std::move(version);
  o.sampling_ratio = settings.sampling_ratio;
  o.batch_size = static_cast<std::size_t>(settings.batch_size);
  o.max_queue = static_cast<std::size_t>(settings.max_queue);
  o.schedule_delay = settings.export_interval;
  o.export_timeout = settings.export_timeout;
  o.ca_file = settings.ca_file;
  o.accept_remote_context = settings.accept_trace_context;
  o.postgres_application_name = settings.postgres_application_name;
  for (const auto& [name, variable] : settings.headers_env) {
    const auto value = env.get(variable);
    if (!value) {
      return makeError(Code::FailedPrecondition,
                       "telemetry.headers_env." + name + ": " + variable + " is not set");
    }
    if (value->find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return makeError(Code::FailedPrecondition, "telemetry.headers_env." + name + ": " + variable +
                                                     " holds a line break or a NUL byte");
    }
    o.headers.emplace_back(name, *value);
  }
  auto tracer = std::make_shared<telemetry::Tracer>(
      std::move(o), telemetry::ExportFn{},
      [](const std::string& message) { spdlog::warn("{}", message); });
  return tracer;
}

void addTelemetryMetrics(observe::Metrics& metrics, std::shared_ptr<telemetry::Tracer> tracer) {
  if (!tracer) return;
  metrics.addCounter("mcpdb_telemetry_spans_exported_total", "Spans the OTLP collector accepted.",
                     [tracer] { return static_cast<double>(tracer->exportedSpans()); });
  metrics.addCounter("mcpdb_telemetry_spans_dropped_total",
                     "Spans dropped because the export queue was full (telemetry.max_queue).",
                     [tracer] { return static_cast<double>(tracer->droppedSpans()); });
  metrics.addCounter("mcpdb_telemetry_spans_failed_total",
                     "Spans lost because their export request failed or timed out.",
                     [tracer] { return static_cast<double>(tracer->failedSpans()); });
  metrics.addGauge("mcpdb_telemetry_queue_spans", "Spans waiting for export.",
                   [tracer] { return static_cast<double>(tracer->queuedSpans()); });
}

}  // namespace mcpdb::app
