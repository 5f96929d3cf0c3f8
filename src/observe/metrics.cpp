#include "observe/metrics.hpp"

#include <charconv>

namespace mcpdb::observe {
namespace {

// Shortest text that reads back as the same double ("0.1", not "0.10000000000000001").
std::string num(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

// Agent-chosen names of unknown tools never become label values (unbounded cardinality).
std::string toolLabel(const protocol::CallRecord& r) {
  return r.outcome == "unknown_tool" ? "<unknown>" : r.tool;
}

}  // namespace

std::string Metrics::escapeLabel(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Metrics::onCall(const protocol::CallRecord& r) {
  const std::string tool = toolLabel(r);
  std::lock_guard<std::mutex> lock(mu_);
  ++calls_[{tool, r.engine, r.outcome}];
  if (r.outcome == "unknown_tool" || r.outcome == "out_of_scope") return;  // never ran
  Histogram& h = latency_[{tool, r.engine}];
  const double secs = static_cast<double>(r.duration.count()) / 1e6;
  std::size_t i = 0;
  while (i < kBuckets.size() && secs > kBuckets[i]) ++i;
  if (i < kBuckets.size()) ++h.counts[i];
  ++h.count;
  h.sum += secs;
  rows_[{tool, r.engine}] += r.rows;
  bytes_[{tool, r.engine}] += r.bytes;
}

void Metrics::onRefused(std::string_view client, std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  ++refusals_[{std::string(client.empty() ? "-" : client), std::string(reason)}];
}

void Metrics::onHttpResponse(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++http_responses_[status];
}

void Metrics::addGauge(std::string name, std::string help, std::function<double()> sample,
                       std::function<SourceValues()> by_source) {
  std::lock_guard<std::mutex> lock(mu_);
  gauges_[std::move(name)] = Gauge{std::move(help), std::move(sample), std::move(by_source)};
}

void Metrics::addCounter(std::string name, std::string help, std::function<double()> sample) {
  std::lock_guard<std::mutex> lock(mu_);
  gauges_[std::move(name)] = Gauge{std::move(help), std::move(sample), {}, true};
}

std::string Metrics::render() const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  auto toolLabels = [](const std::string& tool, const std::string& engine) {
    return "tool=\"" + escapeLabel(tool) + "\",engine=\"" + escapeLabel(engine) + "\"";
  };

  header(out, "mcpdb_tool_calls_total", "counter", "Tool calls by tool, engine and outcome.");
  for (const auto& [k, v] : calls_) {
    out += "mcpdb_tool_calls_total{" + toolLabels(std::get<0>(k), std::get<1>(k)) + ",outcome=\"" +
           escapeLabel(std::get<2>(k)) + "\"} " + std::to_string(v) + "\n";
  }
  header(out, "mcpdb_tool_errors_total", "counter", "Tool calls whose outcome was not ok.");
  for (const auto& [k, v] : calls_) {
    if (std::get<2>(k) == "ok") continue;
    out += "mcpdb_tool_errors_total{" + toolLabels(std::get<0>(k), std::get<1>(k)) + ",outcome=\"" +
           escapeLabel(std::get<2>(k)) + "\"} " + std::to_string(v) + "\n";
  }
  header(out, "mcpdb_tool_call_duration_seconds", "histogram", "Tool call latency.");
  for (const auto& [k, h] : latency_) {
    const std::string labels = toolLabels(k.first, k.second);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.counts[i];
      out += "mcpdb_tool_call_duration_seconds_bucket{" + labels + ",le=\"" + num(kBuckets[i]) +
             "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "mcpdb_tool_call_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} " +
           std::to_string(h.count) + "\n";
    out += "mcpdb_tool_call_duration_seconds_sum{" + labels + "} " + num(h.sum) + "\n";
    out +=
        "mcpdb_tool_call_duration_seconds_count{" + labels + "} " + std::to_string(h.count) + "\n";
  }
  header(out, "mcpdb_tool_rows_total", "counter", "Rows, items or documents returned.");
  for (const auto& [k, v] : rows_) {
    out +=
        "mcpdb_tool_rows_total{" + toolLabels(k.first, k.second) + "} " + std::to_string(v) + "\n";
  }
  header(out, "mcpdb_tool_response_bytes_total", "counter", "Bytes of tool results returned.");
  for (const auto& [k, v] : bytes_) {
    out += "mcpdb_tool_response_bytes_total{" + toolLabels(k.first, k.second) + "} " +
           std::to_string(v) + "\n";
  }
  header(out, "mcpdb_tool_calls_in_flight", "gauge", "Tool calls running or queued now.");
  out += "mcpdb_tool_calls_in_flight " + std::to_string(in_flight_.load()) + "\n";
  header(out, "mcpdb_http_sessions", "gauge", "Open MCP sessions.");
  out += "mcpdb_http_sessions " + std::to_string(sessions_.load()) + "\n";
  header(out, "mcpdb_http_refusals_total", "counter",
         "Requests refused at the HTTP layer, by client and reason (rate_limited, unauthorized, "
         "...).");
  for (const auto& [k, v] : refusals_) {
    out += "mcpdb_http_refusals_total{client=\"" + escapeLabel(k.first) + "\",reason=\"" +
           escapeLabel(k.second) + "\"} " + std::to_string(v) + "\n";
  }
  header(out, "mcpdb_http_responses_total", "counter", "HTTP responses by status code.");
  for (const auto& [code, v] : http_responses_) {
    out += "mcpdb_http_responses_total{code=\"" + std::to_string(code) + "\"} " +
           std::to_string(v) + "\n";
  }
  for (const auto& [name, g] : gauges_) {
    header(out, name, g.counter ? "counter" : "gauge", g.help);
    out += name + " " + num(g.sample ? g.sample() : 0.0) + "\n";
    if (!g.by_source) continue;
    header(out, name + "_by_source", "gauge", "Per source: " + g.help);
    for (const auto& [source, v] : g.by_source()) {
      out += name + "_by_source{source=\"" + escapeLabel(source) + "\"} " + num(v) + "\n";
    }
  }
  return out;
}

}  // namespace mcpdb::observe
