#pragma once
// The engine's only way to MongoDB: a client pool and the four read operations the tools need
// (find, aggregate, countDocuments / estimatedDocumentCount, a read command). Every call carries
// maxTimeMS from the call deadline; cursors are drained batch by batch, stop at the deadline or on
// cancellation, and are killed (killCursors) when abandoned. There is no write method.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>

#include <mongoc/mongoc.h>

#include "common/handle.hpp"
#include "common/result.hpp"
#include "engines/mongodb/commands.hpp"
#include "telemetry/span.hpp"

namespace mcpdb::mongodb {

// Cancellation and the absolute deadline of one tool call.
struct CallBounds {
  std::stop_token stop;
  std::chrono::steady_clock::time_point deadline;
  // The call's span (protocol::CallContext::span): find and aggregate get a child; null: untraced.
  telemetry::Span* span = nullptr;
};

// Called per document; return false to stop reading (the cursor is then killed). A non-owning
// callable reference (not std::function: bson_t's alignment attribute is dropped in template
// arguments); the callable only has to outlive the call it is passed to.
class DocumentSink {
 public:
  // Constrained so that copying a DocumentSink uses the copy constructor, not this one.
  template <class F,
            class = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, DocumentSink>>>
  DocumentSink(F&& f)  // NOLINT(google-explicit-constructor)
      : obj_(static_cast<void*>(&f)), call_([](void* o, const bson_t& d) -> bool {
          return (*static_cast<std::remove_reference_t<F>*>(o))(d);
        }) {}
  bool operator()(const bson_t& doc) const { return call_(obj_, doc); }

 private:
  void* obj_;
  bool (*call_)(void*, const bson_t&);
};

class Client {
 public:
  // Parses a source's URI (TLS and auth options come from it) and creates the pool; connects
  // lazily. `io_timeout` bounds socket reads when the URI does not set socketTimeoutMS. `label`
  // (e.g. "mongodb source 'reports' (REPORTS_MONGODB_URI)") starts the message of a failure to
  // reach or authenticate to the server; create()'s own errors name neither the variable nor
  // the URI (the caller names the variable).
  static Result<std::unique_ptr<Client>> create(const std::string& uri, std::string database,
                                                const std::string& read_preference,
                                                std::chrono::milliseconds io_timeout,
                                                std::string label = {});

  const std::string& database() const { return database_; }

  Status find(const std::string& collection, const bson_t& filter, const bson_t& opts,
              const CallBounds& bounds, const DocumentSink& sink);
  // `raw_error`, when given, receives the driver error (to classify e.g. a missing $vectorSearch).
  Status aggregate(const std::string& collection, const bson_t& pipeline, const bson_t& opts,
                   const CallBounds& bounds, const DocumentSink& sink,
                   bson_error_t* raw_error = nullptr);
  Result<std::int64_t> countDocuments(const std::string& collection, const bson_t& filter,
                                      const bson_t& opts);
  Result<std::int64_t> estimatedDocumentCount(const std::string& collection, const bson_t& opts);
  // A read-only command on the configured database (used for connectionStatus).
  Result<BsonPtr> readCommand(const bson_t& command);

  // Pooled clients (metrics gauges): leased to a running operation now, and the pool's bound
  // (maxPoolSize from the URI, the driver's 100 by default).
  std::size_t clientsInUse() const { return leased_.load(); }
  std::size_t clientsMax() const { return max_pool_; }

 private:
  using PoolPtr = Owned<mongoc_client_pool_t, mongoc_client_pool_destroy>;
  using UriPtr = Owned<mongoc_uri_t, mongoc_uri_destroy>;
  using ReadPrefsPtr = Owned<mongoc_read_prefs_t, mongoc_read_prefs_destroy>;

  Client() = default;
  static void annotate(telemetry::Span* span, std::string_view operation,
                       const std::string& collection);
  Status drain(mongoc_cursor_t* cursor, std::string_view what, const CallBounds& bounds,
               const DocumentSink& sink, bson_error_t* raw_error);
  // mongoError, with the label in front of an unreachable server or a refused login.
  Error failed(std::string_view what, const bson_error_t& error) const;

  UriPtr uri_;
  PoolPtr pool_;
  ReadPrefsPtr read_prefs_;
  std::string database_;
  std::string label_;
  std::atomic<std::size_t> leased_{0};
  std::size_t max_pool_ = 0;
};

// A safe, classified error for a failed MongoDB operation (never the URI or a value).
Error mongoError(std::string_view what, const bson_error_t& error);
// True when the error says the server has no $vectorSearch (no Atlas Search).
bool isVectorSearchUnsupported(const bson_error_t& error);

// Milliseconds left until `deadline` (at least 1), for maxTimeMS.
std::int64_t remainingMillis(std::chrono::steady_clock::time_point deadline);

}  // namespace mcpdb::mongodb
