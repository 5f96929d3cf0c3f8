// The self-check's privilege parsing, on canned connectionStatus replies.
#include <gtest/gtest.h>

#include "engines/mongodb/doctor.hpp"

namespace mcpdb::mongodb {
namespace {

using Sev = engines::Finding::Severity;

Json readOnlyUser() {
  return Json::parse(R"({
    "authInfo": {
      "authenticatedUsers": [{"user": "mcp_reader", "db": "admin"}],
      "authenticatedUserRoles": [{"role": "read", "db": "mcpdemo"}],
      "authenticatedUserPrivileges": [
        {"resource": {"db": "mcpdemo", "collection": ""},
         "actions": ["changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors", "listCollections",
                     "listIndexes", "listSearchIndexes"]},
        {"resource": {"db": "mcpdemo", "collection": "system.js"},
         "actions": ["changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors", "listCollections", "listIndexes"]}
      ]
    },
    "ok": 1})");
}

TEST(MongoPrivileges, ReadOnlyUserIsOk) {
  auto f = assessConnectionStatus(readOnlyUser(), "mcpdemo");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Sev::Ok);
  EXPECT_EQ(f[0].check, "mongodb.privileges");
  EXPECT_EQ(f[0].message,
            "the MongoDB user has no write action on database 'mcpdemo', any database or the "
            "cluster (roles: read@mcpdemo)");
  // The user name is never printed.
  EXPECT_EQ(f[0].message.find("mcp_reader"), std::string::npos);
}

TEST(MongoPrivileges, ReadWriteUserIsAViolation) {
  Json j = readOnlyUser();
  j["authInfo"]["authenticatedUserRoles"] =
      Json::parse(R"([{"role": "readWrite", "db": "mcpdemo"}])");
  j["authInfo"]["authenticatedUserPrivileges"] = Json::parse(R"([
    {"resource": {"db": "mcpdemo", "collection": ""},
     "actions": ["collStats", "convertToCapped", "createCollection", "createIndex", "dropCollection", "dropIndex",
                 "find", "insert", "killCursors", "listCollections", "remove", "renameCollectionSameDB", "update"]}
  ])");
  auto f = assessConnectionStatus(j, "mcpdemo");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Sev::Violation);
  EXPECT_EQ(
      f[0].message,
      "the MongoDB user can write: convertToCapped, createCollection, createIndex, dropCollection, "
      "dropIndex, "
      "insert, remove, renameCollectionSameDB, update on every collection of database 'mcpdemo' "
      "(roles: readWrite@mcpdemo)");
}

TEST(MongoPrivileges, RootIsAViolation) {
  Json j = readOnlyUser();
  j["authInfo"]["authenticatedUserRoles"] = Json::parse(R"([{"role": "root", "db": "admin"}])");
  j["authInfo"]["authenticatedUserPrivileges"] = Json::parse(R"([
    {"resource": {"anyResource": true}, "actions": ["anyAction"]},
    {"resource": {"cluster": true}, "actions": ["shutdown", "listDatabases"]},
    {"resource": {"db": "", "collection": ""}, "actions": ["find", "insert"]}
  ])");
  auto f = assessConnectionStatus(j, "mcpdemo");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Sev::Violation);
  EXPECT_EQ(f[0].message,
            "the MongoDB user can write: anyAction on any resource; insert on every collection of "
            "every database; "
            "shutdown on the cluster (roles: root@admin)");
}

TEST(MongoPrivileges, WriteElsewhereIsAWarningNotAViolation) {
  Json j = readOnlyUser();
  j["authInfo"]["authenticatedUserPrivileges"].push_back(
      Json::parse(R"({"resource": {"db": "scratch", "collection": ""}, "actions": ["insert"]})"));
  auto f = assessConnectionStatus(j, "mcpdemo");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].severity, Sev::Warning);
  EXPECT_EQ(f[0].check, "mongodb.privileges.other_databases");
  EXPECT_EQ(f[1].severity, Sev::Ok);
}

TEST(MongoPrivileges, CongoServerReplyNoAuthenticationIsAViolation) {
  // Exactly what CongoServer (and a mongod without --auth) answers.
  auto f = assessConnectionStatus(
      Json::parse(R"({"ok":1,"authInfo":{"authenticatedUsers":[],"authenticatedUserRoles":[]}})"),
      "mcpdemo");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Sev::Violation);
  EXPECT_EQ(f[0].check, "mongodb.auth");
  EXPECT_EQ(f[0].message,
            "no authenticated user: the server does not require authentication or MONGODB_URI "
            "carries no credentials, "
            "so nothing at the database stops a client holding this URI from writing; connect as a "
            "user with only the "
            "built-in 'read' role on 'mcpdemo'");
  EXPECT_NE(f[0].fix.find("roles: [{role: 'read', db: 'mcpdemo'}]"), std::string::npos) << f[0].fix;
}

TEST(MongoPrivileges, UnverifiableRepliesAreInconclusiveNeverOk) {
  auto a = assessConnectionStatus(Json::parse(R"({"ok":1})"), "mcpdemo");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].severity, Sev::Inconclusive);
  Json j = readOnlyUser();
  j["authInfo"].erase("authenticatedUserPrivileges");
  auto b = assessConnectionStatus(j, "mcpdemo");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].severity, Sev::Inconclusive);
  EXPECT_EQ(b[0].check, "mongodb.privileges");
}

TEST(MongoPrivileges, WriteActionList) {
  for (const char* a :
       {"insert", "update", "remove", "createCollection", "createIndex", "dropCollection",
        "dropDatabase", "anyAction", "createSearchIndexes", "bypassDocumentValidation"}) {
    EXPECT_TRUE(isWriteAction(a)) << a;
  }
  for (const char* a : {"find", "listCollections", "killCursors", "collStats", "changeStream",
                        "listSearchIndexes", ""}) {
    EXPECT_FALSE(isWriteAction(a)) << a;
  }
}

}  // namespace
}  // namespace mcpdb::mongodb
