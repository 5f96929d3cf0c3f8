#pragma once
// The tracer: decides which requests are recorded (sampling), makes their spans, and exports
// finished spans in batches over OTLP/HTTP with JSON encoding, from a thread of its own.
//
// Hand-written: Debian 12 packages no OpenTelemetry C++ SDK and no Collector, and what this
// server needs of one is small (spans with attributes, a batch processor, an OTLP/HTTP JSON
// exporter). It is built on the project's libcurl client (common/http_client.hpp) and
// nlohmann-json.
//
// A call never waits for the exporter: submit() takes a lock held only to push or swap a
// vector, and a full queue drops the span (counted in droppedSpans(), the metric
// mcpdb_telemetry_spans_dropped_total). A collector that is down or slow holds only the export
// thread, for at most the export timeout per batch; spans that arrive meanwhile queue up to the
// limit, then are dropped.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/http_client.hpp"
#include "common/result.hpp"
#include "telemetry/otlp_json.hpp"
#include "telemetry/span.hpp"
#include "telemetry/trace_context.hpp"

namespace mcpdb::telemetry {

struct TracerOptions {
  std::string endpoint;  // the OTLP/HTTP traces URL, http(s)://host[:port]/v1/traces
  ResourceInfo resource;
  // The share of traces this server starts that it records (0 to 1). A request whose caller's
  // traceparent is accepted follows the caller's sampled flag instead.
  double sampling_ratio = 1.0;
  std::size_t batch_size = 512;  // spans per export request at most
  std::size_t max_queue = 2048;  // spans waiting for export at most; more are dropped
  std::chrono::milliseconds schedule_delay{1000};  // the longest a span waits for its batch
  std::chrono::milliseconds export_timeout{5000};  // one export request, connect included
  HttpHeaders headers;                             // extra request headers (e.g. authorization)
  std::string ca_file;                             // CA bundle for https; empty: the system's
  // Whether a caller's traceparent is followed (its trace id, its span as parent, its sampled
  // flag); false: every request starts a trace of its own.
  bool accept_remote_context = true;
  // Whether the PostgreSQL engine sets the database span's traceparent as application_name
  // (SET LOCAL in the call's pipeline: no extra round trip).
  bool postgres_application_name = false;
};

// Sends one encoded batch; an error when the collector did not accept it. The default posts it
// to the endpoint; tests give their own.
using ExportFn = std::function<Status(const std::string& body, std::chrono::milliseconds timeout)>;
// Where the tracer reports an export failure (the operator's log; never a header value).
using WarnFn = std::function<void(const std::string& message)>;

class Tracer {
 public:
  explicit Tracer(TracerOptions options, ExportFn exporter = {}, WarnFn warn = {});
  // Exports what is queued (bounded by the export timeout), then stops the thread.
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The span of a request the server received, or null when it is not recorded. `remote`: the
  // caller's context (extractContext), if any.
  std::unique_ptr<Span> startServerSpan(std::string name, const std::optional<SpanContext>& remote);
  // Queues a finished span for export; never blocks on the exporter. Drops it when the queue is
  // full.
  void submit(SpanData span) noexcept;
  // Exports everything queued now and waits up to `timeout` for it (tests, shutdown).
  bool flush(std::chrono::milliseconds timeout);

  const TracerOptions& options() const { return options_; }
  SpanId newSpanId();
  TraceId newTraceId();
  // Whether a new trace with this id is recorded (the ratio sampler: the id's last 8 bytes as a
  // number below ratio * 2^64).
  bool sampleRoot(const TraceId& id) const;

  std::uint64_t exportedSpans() const { return exported_.load(); }
  std::uint64_t droppedSpans() const { return dropped_.load(); }
  std::uint64_t failedSpans() const { return failed_.load(); }
  std::size_t queuedSpans() const;

 private:
  void run();
  // Exports `batch` (one request); counts it.
  void exportBatch(std::vector<SpanData>& batch, std::chrono::milliseconds timeout);
  Status post(const std::string& body, std::chrono::milliseconds timeout);

  TracerOptions options_;
  ExportFn exporter_;
  WarnFn warn_;
  std::unique_ptr<HttpClient> http_;  // the export thread's own (made on first export)

  mutable std::mutex mu_;
  std::condition_variable cv_;          // the export thread waits here
  std::condition_variable flushed_cv_;  // flush() waits here
  std::vector<SpanData> queue_;
  bool stopping_ = false;
  std::uint64_t flush_requested_ = 0;
  std::uint64_t flush_done_ = 0;

  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> failed_{0};
  std::chrono::steady_clock::time_point last_warning_{};
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace mcpdb::telemetry
