// libmongoc loaded on first use, for the server binary only (see CMakeLists.txt).
//
// Debian's libmongoc runs mongoc_init() from a library constructor: OpenSSL's SSL_CTX setup and
// the SASL plugin scan (which dlopens more libraries) cost every start ~17 M instructions, about a
// third of `mcp-dbserver --version`, whether or not MongoDB is configured. The engine creates its
// client on first use, so here each libmongoc function it calls (the read-only set checked by
// tests/unit/mongodb/no_write_symbols.sh) is a forwarder that loads the library with dlopen on
// the first call. Test binaries and the loader link libmongoc directly and do not use this file.
//
// These definitions are not exported from the executable (no -rdynamic), so the loaded library
// binds its internal calls to itself, never to these forwarders.
#include <mongoc/mongoc.h>

#include <cstdio>

#include "common/lazy_library.hpp"

namespace {

struct Libmongoc {
  static constexpr const char* kSoname = "libmongoc-1.0.so.0";
  static constexpr const char* kPackage = "libmongoc-1.0-0";
};
}  // namespace

// The real function `name`, resolved once; nullptr when libmongoc could not be loaded. Only the
// constructors and the global set-up can be reached before a loaded library returned a handle.
#define MCPDB_REAL(name) MCPDB_LAZY_REAL(Libmongoc, name)

extern "C" {

void mongoc_init(void) {
  MCPDB_REAL(mongoc_init);
  if (real != nullptr) real();
}

void mongoc_log_set_handler(mongoc_log_func_t log_func, void* user_data) {
  MCPDB_REAL(mongoc_log_set_handler);
  if (real != nullptr) real(log_func, user_data);
}

const char* mongoc_log_level_str(mongoc_log_level_t log_level) {
  MCPDB_REAL(mongoc_log_level_str);
  return real != nullptr ? real(log_level) : "log";
}

mongoc_uri_t* mongoc_uri_new_with_error(const char* uri_string, bson_error_t* error) {
  MCPDB_REAL(mongoc_uri_new_with_error);
  if (real == nullptr) {
    if (error != nullptr) bson_set_error(error, 0, 0, "cannot load %s", Libmongoc::kSoname);
    return nullptr;
  }
  return real(uri_string, error);
}

void mongoc_uri_destroy(mongoc_uri_t* uri) {
  MCPDB_REAL(mongoc_uri_destroy);
  real(uri);
}

bool mongoc_uri_has_option(const mongoc_uri_t* uri, const char* key) {
  MCPDB_REAL(mongoc_uri_has_option);
  return real(uri, key);
}

bool mongoc_uri_set_option_as_int32(mongoc_uri_t* uri, const char* option, int32_t value) {
  MCPDB_REAL(mongoc_uri_set_option_as_int32);
  return real(uri, option, value);
}

int32_t mongoc_uri_get_option_as_int32(const mongoc_uri_t* uri, const char* option,
                                       int32_t fallback) {
  MCPDB_REAL(mongoc_uri_get_option_as_int32);
  return real(uri, option, fallback);
}

bool mongoc_uri_set_appname(mongoc_uri_t* uri, const char* value) {
  MCPDB_REAL(mongoc_uri_set_appname);
  return real(uri, value);
}

mongoc_client_pool_t* mongoc_client_pool_new_with_error(const mongoc_uri_t* uri,
                                                        bson_error_t* error) {
  MCPDB_REAL(mongoc_client_pool_new_with_error);
  return real(uri, error);
}

void mongoc_client_pool_destroy(mongoc_client_pool_t* pool) {
  MCPDB_REAL(mongoc_client_pool_destroy);
  real(pool);
}

mongoc_client_t* mongoc_client_pool_pop(mongoc_client_pool_t* pool) {
  MCPDB_REAL(mongoc_client_pool_pop);
  return real(pool);
}

void mongoc_client_pool_push(mongoc_client_pool_t* pool, mongoc_client_t* client) {
  MCPDB_REAL(mongoc_client_pool_push);
  real(pool, client);
}

bool mongoc_client_pool_set_error_api(mongoc_client_pool_t* pool, int32_t version) {
  MCPDB_REAL(mongoc_client_pool_set_error_api);
  return real(pool, version);
}

mongoc_read_prefs_t* mongoc_read_prefs_new(mongoc_read_mode_t read_mode) {
  MCPDB_REAL(mongoc_read_prefs_new);
  return real(read_mode);
}

void mongoc_read_prefs_destroy(mongoc_read_prefs_t* read_prefs) {
  MCPDB_REAL(mongoc_read_prefs_destroy);
  real(read_prefs);
}

mongoc_collection_t* mongoc_client_get_collection(mongoc_client_t* client, const char* db,
                                                  const char* collection) {
  MCPDB_REAL(mongoc_client_get_collection);
  return real(client, db, collection);
}

bool mongoc_client_read_command_with_opts(mongoc_client_t* client, const char* db_name,
                                          const bson_t* command,
                                          const mongoc_read_prefs_t* read_prefs, const bson_t* opts,
                                          bson_t* reply, bson_error_t* error) {
  MCPDB_REAL(mongoc_client_read_command_with_opts);
  return real(client, db_name, command, read_prefs, opts, reply, error);
}

void mongoc_collection_destroy(mongoc_collection_t* collection) {
  MCPDB_REAL(mongoc_collection_destroy);
  real(collection);
}

mongoc_cursor_t* mongoc_collection_find_with_opts(mongoc_collection_t* collection,
                                                  const bson_t* filter, const bson_t* opts,
                                                  const mongoc_read_prefs_t* read_prefs) {
  MCPDB_REAL(mongoc_collection_find_with_opts);
  return real(collection, filter, opts, read_prefs);
}

mongoc_cursor_t* mongoc_collection_aggregate(mongoc_collection_t* collection,
                                             mongoc_query_flags_t flags, const bson_t* pipeline,
                                             const bson_t* opts,
                                             const mongoc_read_prefs_t* read_prefs) {
  MCPDB_REAL(mongoc_collection_aggregate);
  return real(collection, flags, pipeline, opts, read_prefs);
}

int64_t mongoc_collection_count_documents(mongoc_collection_t* coll, const bson_t* filter,
                                          const bson_t* opts, const mongoc_read_prefs_t* read_prefs,
                                          bson_t* reply, bson_error_t* error) {
  MCPDB_REAL(mongoc_collection_count_documents);
  return real(coll, filter, opts, read_prefs, reply, error);
}

int64_t mongoc_collection_estimated_document_count(mongoc_collection_t* coll, const bson_t* opts,
                                                   const mongoc_read_prefs_t* read_prefs,
                                                   bson_t* reply, bson_error_t* error) {
  MCPDB_REAL(mongoc_collection_estimated_document_count);
  return real(coll, opts, read_prefs, reply, error);
}

bool mongoc_cursor_next(mongoc_cursor_t* cursor, const bson_t** bson) {
  MCPDB_REAL(mongoc_cursor_next);
  return real(cursor, bson);
}

bool mongoc_cursor_error(mongoc_cursor_t* cursor, bson_error_t* error) {
  MCPDB_REAL(mongoc_cursor_error);
  return real(cursor, error);
}

void mongoc_cursor_destroy(mongoc_cursor_t* cursor) {
  MCPDB_REAL(mongoc_cursor_destroy);
  real(cursor);
}

}  // extern "C"
