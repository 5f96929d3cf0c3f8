#include "engines/mongodb/client.hpp"

#include <cstring>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <mutex>

namespace mcpdb::mongodb {

namespace {

using CollectionPtr = Owned<mongoc_collection_t, mongoc_collection_destroy>;
using CursorPtr = Owned<mongoc_cursor_t, mongoc_cursor_destroy>;

// The driver's own log lines go to stderr (never stdout, the stdio transport) and only from
// warning up: its debug output (server monitoring chatter) is noise for an operator.
void quietLog(mongoc_log_level_t level, const char* domain, const char* message, void*) {
  if (level > MONGOC_LOG_LEVEL_WARNING) return;
  std::fprintf(stderr, "mongoc %s: %s: %s\n", mongoc_log_level_str(level),
               domain != nullptr ? domain : "", message != nullptr ? message : "");
}

void initDriverOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    mongoc_log_set_handler(quietLog, nullptr);
    mongoc_init();
  });
}

mongoc_read_mode_t readMode(const std::string& name) {
  if (name == "primaryPreferred") return MONGOC_READ_PRIMARY_PREFERRED;
  if (name == "secondary") return MONGOC_READ_SECONDARY;
  if (name == "secondaryPreferred") return MONGOC_READ_SECONDARY_PREFERRED;
  if (name == "nearest") return MONGOC_READ_NEAREST;
  return MONGOC_READ_PRIMARY;
}

void defaultOption(mongoc_uri_t* uri, const char* option, std::int32_t value) {
  if (!mongoc_uri_has_option(uri, option)) mongoc_uri_set_option_as_int32(uri, option, value);
}

// A pooled client, returned to the pool on scope exit; `leased` counts the clients out.
class Lease {
 public:
  Lease(mongoc_client_pool_t* pool, std::atomic<std::size_t>& leased)
      : pool_(pool), leased_(leased), client_(mongoc_client_pool_pop(pool)) {
    ++leased_;
  }
  ~Lease() {
    if (client_ != nullptr) mongoc_client_pool_push(pool_, client_);
    --leased_;
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  mongoc_client_t* get() const { return client_; }

 private:
  mongoc_client_pool_t* pool_;
  std::atomic<std::size_t>& leased_;
  mongoc_client_t* client_;
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::int64_t remainingMillis(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return std::max<std::int64_t>(1, left.count());
}

Error mongoError(std::string_view what, const bson_error_t& error) {
  const std::string op(what);
  if (error.domain == MONGOC_ERROR_SERVER || error.domain == MONGOC_ERROR_QUERY) {
    switch (error.code) {
      case 50:  // MaxTimeMSExpired
        return makeError(Code::TimedOut, "MongoDB " + op + " exceeded its time limit (maxTimeMS)");
      case 13:  // Unauthorized
      case 18:  // AuthenticationFailed
        return makeError(Code::PermissionDenied,
                         "MongoDB refused " + op + ": the configured user lacks the privilege");
      case 26:  // NamespaceNotFound
        return makeError(Code::NotFound, "MongoDB " + op + ": the collection does not exist");
      case 11600:  // InterruptedAtShutdown
      case 91:     // ShutdownInProgress
      case 189:    // PrimarySteppedDown
      case 10107:  // NotWritablePrimary
      case 13435:  // NotPrimaryNoSecondaryOk
        return makeError(Code::Unavailable, "MongoDB " + op +
                                                " failed: the server is not available (code " +
                                                std::to_string(error.code) + ")");
      default:
        return makeError(Code::Internal, "MongoDB " + op + " failed (server error code " +
                                             std::to_string(error.code) + ")");
    }
  }
  // For the operator (doctor, logs): the driver's own words name the host:port and the reason
  // (e.g. "connection refused calling hello on '127.0.0.1:1'"), never the URI's credentials.
  const std::string driver_says(error.message, strnlen(error.message, sizeof error.message));
  if (error.domain == MONGOC_ERROR_SERVER_SELECTION) {
    return Error{Code::Unavailable,
                 "MongoDB is unreachable (no suitable server could be selected for " + op + ")",
                 driver_says};
  }
  if (error.domain == MONGOC_ERROR_STREAM) {
    return Error{Code::Unavailable,
                 "MongoDB " + op + ": the connection failed or the server did not answer in time",
                 driver_says};
  }
  if (error.domain == MONGOC_ERROR_CLIENT && error.code == MONGOC_ERROR_CLIENT_AUTHENTICATE) {
    return makeError(Code::PermissionDenied,
                     "MongoDB authentication failed (check the credentials in the URI)");
  }
  return makeError(Code::Internal, "MongoDB " + op + " failed (driver error " +
                                       std::to_string(error.domain) + "." +
                                       std::to_string(error.code) + ")");
}

bool isVectorSearchUnsupported(const bson_error_t& error) {
  if (error.domain != MONGOC_ERROR_SERVER && error.domain != MONGOC_ERROR_QUERY) return false;
  // 40324 unrecognized stage (mongod < 7), 6047401 "only allowed on Atlas" (7.0 community),
  // 31082 SearchNotEnabled (8.x community without mongot).
  if (error.code == 40324 || error.code == 6047401 || error.code == 31082) return true;
  const std::string msg = lower(error.message);
  if (msg.find("vectorsearch") == std::string::npos) return false;
  static constexpr std::array<std::string_view, 6> kHints = {
      "unrecognized", "unregistered", "not allowed", "only allowed", "not supported", "unknown"};
  return std::any_of(kHints.begin(), kHints.end(),
                     [&](std::string_view h) { return msg.find(h) != std::string::npos; });
}

Result<std::unique_ptr<Client>> Client::create(const std::string& uri_text, std::string database,
                                               const std::string& read_preference,
                                               std::chrono::milliseconds io_timeout,
                                               std::string label) {
  initDriverOnce();
  std::unique_ptr<Client> c(new Client());
  bson_error_t err;
  c->uri_.reset(mongoc_uri_new_with_error(uri_text.c_str(), &err));
  if (!c->uri_) {
    // The driver's message may quote the URI (credentials): never pass it on.
    return makeError(Code::FailedPrecondition, "is not a valid MongoDB connection string");
  }
  const auto io_ms = static_cast<std::int32_t>(std::min<std::int64_t>(io_timeout.count(), 600000));
  defaultOption(c->uri_.get(), MONGOC_URI_SOCKETTIMEOUTMS, io_ms);
  defaultOption(c->uri_.get(), MONGOC_URI_SERVERSELECTIONTIMEOUTMS,
                std::min<std::int32_t>(io_ms, 5000));
  defaultOption(c->uri_.get(), MONGOC_URI_CONNECTTIMEOUTMS, std::min<std::int32_t>(io_ms, 5000));
  if (!mongoc_uri_has_option(c->uri_.get(), MONGOC_URI_APPNAME))
    mongoc_uri_set_appname(c->uri_.get(), "mcp-dbserver");
  // TLS options (tls, tlsCAFile, tlsCertificateKeyFile, ...) are read from the URI by the pool.
  c->pool_.reset(mongoc_client_pool_new_with_error(c->uri_.get(), &err));
  if (!c->pool_)
    return makeError(Code::FailedPrecondition, "could not be used (TLS or pool options)");
  mongoc_client_pool_set_error_api(c->pool_.get(), MONGOC_ERROR_API_VERSION_2);
  c->max_pool_ = static_cast<std::size_t>(std::max<std::int32_t>(
      0, mongoc_uri_get_option_as_int32(c->uri_.get(), MONGOC_URI_MAXPOOLSIZE, 100)));
  c->read_prefs_.reset(mongoc_read_prefs_new(readMode(read_preference)));
  c->database_ = std::move(database);
  c->label_ = std::move(label);
  return c;
}

Error Client::failed(std::string_view what, const bson_error_t& error) const {
  Error e = mongoError(what, error);
  if (!label_.empty() && (e.code == Code::Unavailable || e.code == Code::PermissionDenied)) {
    e.message = label_ + ": " + e.message;
  }
  return e;
}

// A database span's attributes: the operation and the registry's collection name, never the
// filter, the pipeline or a document.
void Client::annotate(telemetry::Span* span, std::string_view operation,
                      const std::string& collection) {
  if (span == nullptr) return;
  span->setString("db.system.name", "mongodb");
  span->setString("db.operation.name", operation);
  span->setString("db.collection.name", collection);
}

Status Client::drain(mongoc_cursor_t* cursor, std::string_view what, const CallBounds& bounds,
                     const DocumentSink& sink, bson_error_t* raw_error) {
  const bson_t* doc = nullptr;
  for (;;) {
    // Checked before each document, hence between batches too; returning destroys the cursor,
    // which sends killCursors for a server cursor that is still open.
    if (bounds.stop.stop_requested())
      return makeError(Code::Cancelled, "the request was cancelled");
    if (std::chrono::steady_clock::now() >= bounds.deadline) {
      return makeError(Code::TimedOut, "MongoDB " + std::string(what) + " ran out of time");
    }
    if (!mongoc_cursor_next(cursor, &doc)) break;
    if (!sink(*doc)) return {};
  }
  bson_error_t err;
  if (mongoc_cursor_error(cursor, &err)) {
    if (raw_error != nullptr) *raw_error = err;
    return failed(what, err);
  }
  return {};
}

Status Client::find(const std::string& collection, const bson_t& filter, const bson_t& opts,
                    const CallBounds& bounds, const DocumentSink& sink) {
  if (auto st = checkNoForbiddenOperators(filter); !st) return st;
  telemetry::ChildSpan db(bounds.span, "mongodb find");
  annotate(db.get(), "find", collection);
  Lease lease(pool_.get(), leased_);
  CollectionPtr coll(
      mongoc_client_get_collection(lease.get(), database_.c_str(), collection.c_str()));
  CursorPtr cursor(mongoc_collection_find_with_opts(coll.get(), &filter, &opts, read_prefs_.get()));
  Status st = drain(cursor.get(), "find", bounds, sink, nullptr);
  if (db && !st) db->setError(codeName(st.error().code));
  return st;
}

Status Client::aggregate(const std::string& collection, const bson_t& pipeline, const bson_t& opts,
                         const CallBounds& bounds, const DocumentSink& sink,
                         bson_error_t* raw_error) {
  if (auto st = checkNoForbiddenOperators(pipeline); !st) return st;
  telemetry::ChildSpan db(bounds.span, "mongodb aggregate");
  annotate(db.get(), "aggregate", collection);
  Lease lease(pool_.get(), leased_);
  CollectionPtr coll(
      mongoc_client_get_collection(lease.get(), database_.c_str(), collection.c_str()));
  CursorPtr cursor(mongoc_collection_aggregate(coll.get(), MONGOC_QUERY_NONE, &pipeline, &opts,
                                               read_prefs_.get()));
  Status st = drain(cursor.get(), "aggregate", bounds, sink, raw_error);
  if (db && !st) db->setError(codeName(st.error().code));
  return st;
}

Result<std::int64_t> Client::countDocuments(const std::string& collection, const bson_t& filter,
                                            const bson_t& opts) {
  if (auto st = checkNoForbiddenOperators(filter); !st) return st.error();
  Lease lease(pool_.get(), leased_);
  CollectionPtr coll(
      mongoc_client_get_collection(lease.get(), database_.c_str(), collection.c_str()));
  bson_error_t err;
  const std::int64_t n = mongoc_collection_count_documents(coll.get(), &filter, &opts,
                                                           read_prefs_.get(), nullptr, &err);
  if (n < 0) return failed("countDocuments", err);
  return n;
}

Result<std::int64_t> Client::estimatedDocumentCount(const std::string& collection,
                                                    const bson_t& opts) {
  Lease lease(pool_.get(), leased_);
  CollectionPtr coll(
      mongoc_client_get_collection(lease.get(), database_.c_str(), collection.c_str()));
  bson_error_t err;
  const std::int64_t n = mongoc_collection_estimated_document_count(
      coll.get(), &opts, read_prefs_.get(), nullptr, &err);
  if (n < 0) return failed("estimatedDocumentCount", err);
  return n;
}

Result<BsonPtr> Client::readCommand(const bson_t& command) {
  if (auto st = checkNoForbiddenOperators(command); !st) return st.error();
  Lease lease(pool_.get(), leased_);
  bson_error_t err;
  // The driver initialises `tmp` in every case; copy it into an owned heap document.
  bson_t tmp;
  const bool ok = mongoc_client_read_command_with_opts(lease.get(), database_.c_str(), &command,
                                                       read_prefs_.get(), nullptr, &tmp, &err);
  BsonPtr reply(bson_copy(&tmp));
  bson_destroy(&tmp);
  if (!ok) return failed("command", err);
  return reply;
}

}  // namespace mcpdb::mongodb
