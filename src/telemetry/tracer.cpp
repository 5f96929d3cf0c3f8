#include "telemetry/tracer.hpp"

#include <algorithm>
#include <random>

namespace mcpdb::telemetry {
namespace {

// Ids need to be unique and hard to guess, not secret: a per-thread generator seeded from the
// system's random source.
std::mt19937_64& generator() {
  thread_local std::mt19937_64 g([] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }());
  return g;
}

template <std::size_t N>
std::array<std::uint8_t, N> randomId() {
  std::array<std::uint8_t, N> id{};
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      std::uint64_t v = generator()();
      for (std::size_t j = 0; j < 8 && i + j < N; ++j) {
        id[i + j] = static_cast<std::uint8_t>(v & 0xff);
        v >>= 8;
      }
    }
  } while (allZero(id));  // an all-zero id is invalid
  return id;
}

constexpr std::chrono::seconds kWarnEvery{60};
constexpr std::size_t kMaxResponseBytes = 64 * 1024;

}  // namespace

Tracer::Tracer(TracerOptions options, ExportFn exporter, WarnFn warn)
    : options_(std::move(options)),
      exporter_(std::move(exporter)),
      warn_(std::move(warn)),
      thread_([this] { run(); }) {}

Tracer::~Tracer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

SpanId Tracer::newSpanId() {
  return randomId<8>();
}
TraceId Tracer::newTraceId() {
  return randomId<16>();
}

bool Tracer::sampleRoot(const TraceId& id) const {
  const double ratio = options_.sampling_ratio;
  if (ratio >= 1.0) return true;
  if (ratio <= 0.0) return false;
  std::uint64_t v = 0;
  for (std::size_t i = 8; i < 16; ++i) v = (v << 8) | id[i];
  // 2^64 * ratio, below 2^64 because ratio < 1.
  const auto bound = static_cast<std::uint64_t>(ratio * 18446744073709551616.0);
  return v < bound;
}

std::unique_ptr<Span> Tracer::startServerSpan(std::string name,
                                              const std::optional<SpanContext>& remote) {
  SpanData data;
  data.name = std::move(name);
  data.kind = SpanKind::Server;
  if (remote && options_.accept_remote_context) {
    // The caller decided whether this trace is recorded (W3C: the sampled flag; OpenTelemetry's
    // parent-based sampler).
    if (!remote->sampled()) return nullptr;
    data.trace_id = remote->trace_id;
    data.parent_span_id = remote->span_id;
    data.trace_state = remote->trace_state;
  } else {
    data.trace_id = newTraceId();
    if (!sampleRoot(data.trace_id)) return nullptr;
  }
  data.span_id = newSpanId();
  return std::make_unique<Span>(*this, std::move(data));
}

void Tracer::submit(SpanData span) noexcept {
  bool wake = false;
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= options_.max_queue) {
      dropped_.fetch_add(1);
      return;
    }
    queue_.push_back(std::move(span));
    wake = queue_.size() == options_.batch_size;
  } catch (...) {
    dropped_.fetch_add(1);  // no memory for the queue: the span is dropped, never the call
    return;
  }
  if (wake) cv_.notify_one();
}

std::size_t Tracer::queuedSpans() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

bool Tracer::flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::uint64_t ticket = ++flush_requested_;
  cv_.notify_all();
  return flushed_cv_.wait_for(lock, timeout, [&] { return flush_done_ >= ticket; });
}

void Tracer::run() {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<std::chrono::steady_clock::time_point> stop_deadline;
  for (;;) {
    cv_.wait_for(lock, options_.schedule_delay, [&] {
      return stopping_ || queue_.size() >= options_.batch_size || flush_requested_ != flush_done_;
    });
    if (stopping_ && !stop_deadline)
      stop_deadline = std::chrono::steady_clock::now() + options_.export_timeout;
    const std::uint64_t flush_target = flush_requested_;
    if (!queue_.empty()) {
      std::vector<SpanData> batch;
      if (queue_.size() <= options_.batch_size) {
        batch.swap(queue_);
      } else {
        const auto cut = queue_.begin() + static_cast<std::ptrdiff_t>(options_.batch_size);
        batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(cut));
        queue_.erase(queue_.begin(), cut);
      }
      lock.unlock();
      auto timeout = options_.export_timeout;
      if (stop_deadline) {
        // At shutdown every batch shares one export timeout.
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            *stop_deadline - std::chrono::steady_clock::now());
        timeout = std::min(timeout, std::max(left, std::chrono::milliseconds(0)));
      }
      if (timeout.count() > 0) {
        exportBatch(batch, timeout);
      } else {
        failed_.fetch_add(batch.size());
      }
      lock.lock();
      if (!queue_.empty()) continue;  // the wait returns at once while a batch is full
    }
    flush_done_ = flush_target;
    flushed_cv_.notify_all();
    if (stopping_) return;
  }
}

void Tracer::exportBatch(std::vector<SpanData>& batch, std::chrono::milliseconds timeout) {
  const std::string body = encodeOtlpJson(options_.resource, batch);
  Status sent = exporter_ ? exporter_(body, timeout) : post(body, timeout);
  if (sent) {
    exported_.fetch_add(batch.size());
    return;
  }
  failed_.fetch_add(batch.size());
  const auto now = std::chrono::steady_clock::now();
  if (warn_ && (last_warning_ == std::chrono::steady_clock::time_point{} ||
                now - last_warning_ >= kWarnEvery)) {
    last_warning_ = now;
    warn_("telemetry: exporting " + std::to_string(batch.size()) + " span(s) to " +
          redactUrl(options_.endpoint) + " failed: " + sent.error().message + " (" +
          std::to_string(failed_.load()) + " span(s) lost to failed exports and " +
          std::to_string(dropped_.load()) +
          " to a full queue so far; calls are not affected; next warning in 60 s at the soonest)");
  }
}

Status Tracer::post(const std::string& body, std::chrono::milliseconds timeout) {
  if (!http_) {
    HttpClientOptions o;
    o.connectTimeout = timeout;
    o.totalTimeout = timeout;
    o.maxResponseBytes = kMaxResponseBytes;
    o.caFile = options_.ca_file;
    http_ = std::make_unique<HttpClient>(o);
  }
  HttpRequest request;
  request.method = "POST";
  request.url = options_.endpoint;
  request.headers = options_.headers;
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = body;
  request.connectTimeout = timeout;
  request.totalTimeout = timeout;
  auto response = http_->send(request);
  if (!response) return response.error();
  if (response->status < 200 || response->status >= 300) {
    return makeError(Code::Unavailable,
                     "the collector answered HTTP " + std::to_string(response->status));
  }
  return {};
}

}  // namespace mcpdb::telemetry
