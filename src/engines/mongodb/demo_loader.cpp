// MongoDB demo loader: the only MongoDB code in this project that writes. It upserts the demo
// documents (by doc_id, with their vectors) into the collection of the built-in `mongodb:` target,
// creates a normal index on doc_id, creates the Atlas Vector Search index where the server
// supports search indexes (and says so plainly where it does not), then verifies the count and
// one semantic query, retrying while an Atlas index is still building.
//
// Credentials: MCPDB_MONGO_ADMIN_URI (a user allowed to write), falling back to MONGODB_URI for
// local servers without authentication. The server never reads MCPDB_MONGO_ADMIN_URI.

#include <mongoc/mongoc.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "config/node.hpp"
#include "engines/mongodb/client.hpp"
#include "engines/mongodb/commands.hpp"
#include "engines/mongodb/search.hpp"
#include "engines/mongodb/config.hpp"
#include "engines/mongodb/demo_loader.hpp"

namespace mcpdb::mongodb {

using engines::DemoDocument;
using engines::DemoLoadContext;

namespace demo_detail {

mongodb::BsonPtr createSearchIndexesCommand(const mongodb::Target& target,
                                            std::uint32_t dimensions) {
  mongodb::BsonPtr cmd = mongodb::newDoc();
  bson_append_utf8(cmd.get(), "createSearchIndexes", -1, target.collection.c_str(), -1);
  bson_t indexes;
  BSON_APPEND_ARRAY_BEGIN(cmd.get(), "indexes", &indexes);
  mongodb::BsonPtr model = mongodb::vectorSearchIndexModel(*target.vector_search, dimensions);
  BSON_APPEND_DOCUMENT(&indexes, "0", model.get());
  bson_append_array_end(cmd.get(), &indexes);
  return cmd;
}

Result<mongodb::Target> demoTarget() {
  config::Diagnostics diag("<built-in mongodb section>");
  YAML::Node root = YAML::Load(std::string(mongodb::defaultSectionYaml()));
  config::Node node(root, "", diag);
  mongodb::Settings s = mongodb::parseSettings(node.child("mongodb"), Limits{});
  if (!diag.ok() || s.targets.empty() || !s.targets.front().vector_search) {
    return makeError(Code::Internal, "the built-in mongodb section is invalid");
  }
  return s.targets.front();
}

}  // namespace demo_detail

namespace {

using mongodb::BsonPtr;
using ClientPtr = Owned<mongoc_client_t, mongoc_client_destroy>;
using CollectionPtr = Owned<mongoc_collection_t, mongoc_collection_destroy>;
using DatabasePtr = Owned<mongoc_database_t, mongoc_database_destroy>;
using CursorPtr = Owned<mongoc_cursor_t, mongoc_cursor_destroy>;

std::int64_t dateMillis(const std::string& ymd) {
  int y = 0;
  unsigned m = 0;
  unsigned d = 0;
  if (std::sscanf(ymd.c_str(), "%d-%u-%u", &y, &m, &d) != 3) return 0;
  const std::chrono::sys_days days{std::chrono::year{y} / std::chrono::month{m} /
                                   std::chrono::day{d}};
  return std::chrono::duration_cast<std::chrono::milliseconds>(days.time_since_epoch()).count();
}

void appendDocumentFields(bson_t* doc, const DemoDocument& d, const DemoLoadContext& ctx) {
  bson_append_utf8(doc, "doc_id", -1, d.id.c_str(), -1);
  bson_append_utf8(doc, "title", -1, d.title.c_str(), -1);
  bson_append_utf8(doc, "body", -1, d.body.c_str(), -1);
  bson_append_utf8(doc, "category", -1, d.category.c_str(), -1);
  bson_t tags;
  BSON_APPEND_ARRAY_BEGIN(doc, "tags", &tags);
  for (std::size_t i = 0; i < d.tags.size(); ++i) {
    const std::string k = std::to_string(i);
    bson_append_utf8(&tags, k.c_str(), -1, d.tags[i].c_str(), -1);
  }
  bson_append_array_end(doc, &tags);
  BSON_APPEND_DATE_TIME(doc, "published", dateMillis(d.published));
  bson_t vec;
  BSON_APPEND_ARRAY_BEGIN(doc, "embedding", &vec);
  for (std::size_t i = 0; i < d.embedding.size(); ++i) {
    const std::string k = std::to_string(i);
    bson_append_double(&vec, k.c_str(), -1, static_cast<double>(d.embedding[i]));
  }
  bson_append_array_end(doc, &vec);
  bson_append_utf8(doc, "embedding_model", -1, ctx.model_id.c_str(), -1);
}

Error driverError(const std::string& what, const bson_error_t& err) {
  // The driver's messages do not carry credentials for these operations, but stay terse anyway.
  return makeError(Code::Unavailable, what + " failed (" + std::to_string(err.domain) + "." +
                                          std::to_string(err.code) + ")");
}

bool searchIndexesUnsupported(const bson_error_t& err) {
  // 59 CommandNotFound, 115 CommandNotSupported, 31082 SearchNotEnabled; CongoServer answers
  // "no such command" with another code.
  if (err.code == 59 || err.code == 115 || err.code == 31082) return true;
  const std::string msg = err.message;
  return msg.find("no such command") != std::string::npos ||
         msg.find("not supported") != std::string::npos ||
         msg.find("nrecognized") != std::string::npos ||
         msg.find("not found") != std::string::npos || msg.find("not allowed") != std::string::npos;
}

}  // namespace

namespace {

Result<std::string> loadMongoDb(const std::vector<DemoDocument>& docs, const DemoLoadContext& ctx) {
  static std::once_flag init;
  std::call_once(init, [] { mongoc_init(); });
  const auto admin_uri = ctx.env->get("MCPDB_MONGO_ADMIN_URI");
  const auto uri_text = admin_uri ? admin_uri : ctx.env->get("MONGODB_URI");
  const auto database = ctx.env->get("MONGODB_DATABASE");
  if (!uri_text || !database) {
    return makeError(Code::FailedPrecondition,
                     "set MCPDB_MONGO_ADMIN_URI (or MONGODB_URI) and MONGODB_DATABASE");
  }
  auto target_r = demo_detail::demoTarget();
  if (!target_r) return target_r.error();
  const mongodb::Target target = *target_r;
  const mongodb::VectorSearch& vs = *target.vector_search;

  bson_error_t err;
  Owned<mongoc_uri_t, mongoc_uri_destroy> uri(mongoc_uri_new_with_error(uri_text->c_str(), &err));
  if (!uri)
    return makeError(Code::FailedPrecondition, "the MongoDB URI is not a valid connection string");
  ClientPtr client(mongoc_client_new_from_uri_with_error(uri.get(), &err));
  if (!client)
    return makeError(Code::FailedPrecondition, "could not create a MongoDB client from the URI");
  mongoc_client_set_error_api(client.get(), MONGOC_ERROR_API_VERSION_2);
  mongoc_client_set_appname(client.get(), "mcp-dbserver-load");
  CollectionPtr coll(
      mongoc_client_get_collection(client.get(), database->c_str(), target.collection.c_str()));

  // 1. Upsert by doc_id, keeping the existing ObjectId _id when the document is already there.
  std::size_t inserted = 0;
  std::size_t replaced = 0;
  for (const auto& d : docs) {
    BsonPtr selector = mongodb::newDoc();
    bson_append_utf8(selector.get(), "doc_id", -1, d.id.c_str(), -1);
    BsonPtr opts = mongodb::newDoc();
    BsonPtr proj = mongodb::newDoc();
    BSON_APPEND_INT32(proj.get(), "_id", 1);
    BSON_APPEND_DOCUMENT(opts.get(), "projection", proj.get());
    BSON_APPEND_INT64(opts.get(), "limit", 1);
    CursorPtr cur(
        mongoc_collection_find_with_opts(coll.get(), selector.get(), opts.get(), nullptr));
    const bson_t* existing = nullptr;
    bson_oid_t oid;
    bool found = false;
    if (mongoc_cursor_next(cur.get(), &existing)) {
      bson_iter_t it;
      if (bson_iter_init_find(&it, existing, "_id") && BSON_ITER_HOLDS_OID(&it)) {
        bson_oid_copy(bson_iter_oid(&it), &oid);
        found = true;
      }
    }
    if (mongoc_cursor_error(cur.get(), &err))
      return driverError("reading existing demo documents", err);
    if (!found) bson_oid_init(&oid, nullptr);
    BsonPtr doc = mongodb::newDoc();
    BSON_APPEND_OID(doc.get(), "_id", &oid);
    appendDocumentFields(doc.get(), d, ctx);
    if (found) {
      BsonPtr by_id = mongodb::newDoc();
      BSON_APPEND_OID(by_id.get(), "_id", &oid);
      if (!mongoc_collection_replace_one(coll.get(), by_id.get(), doc.get(), nullptr, nullptr,
                                         &err)) {
        return driverError("replacing a demo document", err);
      }
      ++replaced;
    } else {
      if (!mongoc_collection_insert_one(coll.get(), doc.get(), nullptr, nullptr, &err)) {
        return driverError("inserting a demo document", err);
      }
      ++inserted;
    }
  }

  // 2. A normal index on doc_id.
  std::string index_note = "doc_id index ok";
  {
    BsonPtr cmd = mongodb::newDoc();
    bson_append_utf8(cmd.get(), "createIndexes", -1, target.collection.c_str(), -1);
    bson_t indexes;
    bson_t index;
    bson_t key;
    BSON_APPEND_ARRAY_BEGIN(cmd.get(), "indexes", &indexes);
    BSON_APPEND_DOCUMENT_BEGIN(&indexes, "0", &index);
    BSON_APPEND_DOCUMENT_BEGIN(&index, "key", &key);
    BSON_APPEND_INT32(&key, "doc_id", 1);
    bson_append_document_end(&index, &key);
    BSON_APPEND_UTF8(&index, "name", "doc_id_1");
    bson_append_document_end(&indexes, &index);
    bson_append_array_end(cmd.get(), &indexes);
    bson_t reply;
    const bool ok = mongoc_client_write_command_with_opts(client.get(), database->c_str(),
                                                          cmd.get(), nullptr, &reply, &err);
    bson_destroy(&reply);
    if (!ok) index_note = "doc_id index not created (" + std::to_string(err.code) + ")";
  }

  // 3. The Atlas Vector Search index, where the server has search indexes.
  bool atlas_index = false;
  std::string search_note;
  {
    BsonPtr cmd =
        demo_detail::createSearchIndexesCommand(target, static_cast<std::uint32_t>(ctx.dimension));
    bson_t reply;
    const bool ok = mongoc_client_write_command_with_opts(client.get(), database->c_str(),
                                                          cmd.get(), nullptr, &reply, &err);
    bson_destroy(&reply);
    if (ok) {
      atlas_index = true;
      search_note = "Atlas Vector Search index '" + vs.index + "' requested";
    } else if (err.code == 68 ||
               std::string(err.message).find("already exists") != std::string::npos) {
      atlas_index = true;
      search_note = "Atlas Vector Search index '" + vs.index + "' already exists";
    } else if (searchIndexesUnsupported(err)) {
      search_note =
          "this server has no Atlas Search: vector index not created (semantic_search_mongodb will "
          "use its exact scan)";
    } else {
      search_note =
          "Atlas Vector Search index not created (error " + std::to_string(err.code) + ")";
    }
  }

  // 4. Verify: the count, then one semantic query through the engine's own search code.
  BsonPtr count_filter = mongodb::newDoc();
  bson_t in_list;
  bson_t ids;
  BSON_APPEND_DOCUMENT_BEGIN(count_filter.get(), "doc_id", &in_list);
  BSON_APPEND_ARRAY_BEGIN(&in_list, "$in", &ids);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const std::string k = std::to_string(i);
    bson_append_utf8(&ids, k.c_str(), -1, docs[i].id.c_str(), -1);
  }
  bson_append_array_end(&in_list, &ids);
  bson_append_document_end(count_filter.get(), &in_list);
  const std::int64_t n = mongoc_collection_count_documents(coll.get(), count_filter.get(), nullptr,
                                                           nullptr, nullptr, &err);
  if (n < 0) return driverError("counting demo documents", err);
  if (static_cast<std::size_t>(n) != docs.size()) {
    return makeError(Code::Internal, "verification: expected " + std::to_string(docs.size()) +
                                         " demo documents, found " + std::to_string(n));
  }

  std::string verify_note;
  if (ctx.embed) {
    const std::string query = "how to speed up slow SQL queries";
    auto qv = ctx.embed(query);
    if (!qv)
      return makeError(Code::Internal,
                       "verification: embedding the sanity query failed: " + qv.error().message);
    auto engine_client =
        mongodb::Client::create(*uri_text, *database, "primary", std::chrono::seconds(30));
    if (!engine_client) return engine_client.error();
    std::string method;
    std::string top1;
    // An Atlas index builds asynchronously: retry for up to two minutes until results appear.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    for (int attempt = 0;; ++attempt) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      mongodb::ReadOptions ro{30000, ""};
      mongodb::CallBounds bounds{std::stop_token{}, deadline};
      Result<mongodb::SearchOutcome> out = makeError(Code::Internal, "not run");
      if (atlas_index) {
        bool unsupported = false;
        out = mongodb::atlasSearch(**engine_client, target, *qv, 3, {}, ro, bounds, unsupported);
        if (!out && unsupported) atlas_index = false;
      }
      if (!atlas_index) out = mongodb::exactScan(**engine_client, target, *qv, 3, {}, ro, bounds);
      if (out && !out->hits.empty()) {
        method = out->method;
        top1 = out->hits.front().id.is_string() ? out->hits.front().id.get<std::string>()
                                                : out->hits.front().id.dump();
        break;
      }
      if (std::chrono::steady_clock::now() > give_up) {
        return makeError(
            Code::Internal,
            "verification: the semantic sanity query returned nothing" +
                std::string(atlas_index ? " (Atlas index still building after 2 minutes?)" : ""));
      }
      std::this_thread::sleep_for(std::chrono::seconds(attempt < 5 ? 2 : 5));
    }
    const bool has_expected = std::any_of(docs.begin(), docs.end(),
                                          [](const DemoDocument& d) { return d.id == "doc-01"; });
    if (has_expected && top1 != "doc-01") {
      return makeError(Code::Internal, "verification: top-1 for '" + query + "' is " + top1 +
                                           ", expected doc-01 (" + method + ")");
    }
    verify_note = "top-1 for '" + query + "' = " + top1 + " (" + method + ")";
  }

  return "upserted " + std::to_string(docs.size()) + " documents into " + *database + "." +
         target.collection + " (" + std::to_string(inserted) + " new, " + std::to_string(replaced) +
         " replaced) using " +
         (admin_uri ? "MCPDB_MONGO_ADMIN_URI" : "MONGODB_URI (no MCPDB_MONGO_ADMIN_URI set)") +
         "; " + index_note + "; " + search_note + "; verified count " + std::to_string(n) +
         (verify_note.empty() ? "" : ", " + verify_note);
}

}  // namespace

engines::DemoLoader demoLoader() {
  return {"mongodb", "MONGODB_URI and MONGODB_DATABASE",
          [](const Env& env) { return env.has("MONGODB_URI") && env.has("MONGODB_DATABASE"); },
          &loadMongoDb};
}

}  // namespace mcpdb::mongodb
