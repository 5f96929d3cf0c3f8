#include "guard/guard.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "guard/denylist.hpp"

namespace mcpdb::guard {
namespace {

TEST(Guard, ReportsContiguousPlaceholders) {
  const Verdict v = checkTemplate("SELECT * FROM t WHERE a = $2 AND b = $1 OR c = $2");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.rule, Rule::None);
  EXPECT_TRUE(v.message.empty());
  EXPECT_EQ(v.placeholders, (std::vector<std::uint32_t>{1, 2}));
}

TEST(Guard, NamesTheMissingPlaceholder) {
  const Verdict v = checkTemplate("SELECT $1, $3");
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(ruleId(v.rule), "placeholder_gap");
  EXPECT_NE(v.message.find("$2"), std::string::npos);
  EXPECT_EQ(v.placeholders, (std::vector<std::uint32_t>{1, 3}));
}

TEST(Guard, NoPlaceholdersIsFine) {
  const Verdict v = checkTemplate("SELECT 1");
  EXPECT_TRUE(v.allowed);
  EXPECT_TRUE(v.placeholders.empty());
}

TEST(Guard, MessagesNeverEchoTheSql) {
  // Each template carries a marker in a string, identifier or comment; no message may repeat it.
  const char* templates[] = {
      "SELECT 'SECRETMARK'; DROP TABLE x",
      "DELETE FROM secretmark_table WHERE x = 'SECRETMARK'",
      "SELECT pg_read_file('SECRETMARK')",
      "SELECT * FROM secretmark INTO t",
      "SELECT * FROM secretmark FOR UPDATE",
      "SELECT 'SECRETMARK",
      "SELECT \"SECRETMARK\"(1) FROM secretmark WHERE x = $2",
      "SELECT pg_sleep_secretmark(1)",
      "secretmark",
      "WITH secretmark AS (DELETE FROM t RETURNING *) SELECT 1",
  };
  for (const char* sql : templates) {
    const Verdict v = checkTemplate(sql);
    EXPECT_FALSE(v.allowed) << sql;
    std::string lower = v.message;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lower.find("secretmark"), std::string::npos) << sql << " -> " << v.message;
  }
}

TEST(Guard, DeniedFunctionMessageNamesTheEntry) {
  const Verdict v = checkTemplate("SELECT pg_catalog.PG_SLEEP_FOR('1s')");
  EXPECT_EQ(ruleId(v.rule), "denied_function");
  EXPECT_EQ(v.message, "function pg_sleep* is not allowed (sleeps or takes locks)");
}

TEST(Guard, ToStatus) {
  EXPECT_TRUE(toStatus(checkTemplate("SELECT 1")).ok());
  const Status s = toStatus(checkTemplate("SELECT 1 FOR SHARE"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::PermissionDenied);
  EXPECT_NE(s.error().message.find("locking_clause"), std::string::npos);
}

TEST(Guard, EveryRuleHasADistinctId) {
  std::set<std::string_view> ids;
  for (int r = static_cast<int>(Rule::None); r <= static_cast<int>(Rule::AmbiguousString); ++r) {
    EXPECT_TRUE(ids.insert(ruleId(static_cast<Rule>(r))).second) << r;
  }
}

TEST(Denylist, EntriesAreLowerCaseAndUnique) {
  std::set<std::string_view> names;
  for (const DeniedFunction& entry : deniedFunctions()) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    for (char c : entry.name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << entry.name;
    EXPECT_FALSE(entry.reason.empty()) << entry.name;
  }
  EXPECT_GT(names.size(), 50U);
}

TEST(Denylist, MatchesExactAndPrefixEntries) {
  EXPECT_NE(findDeniedFunction("pg_read_file"), nullptr);
  EXPECT_NE(findDeniedFunction("PG_LS_WALDIR"), nullptr);
  EXPECT_NE(findDeniedFunction("dblink_exec"), nullptr);
  EXPECT_NE(findDeniedFunction("pg_stat_reset_shared"), nullptr);
  EXPECT_EQ(findDeniedFunction("pg_read_files_list"), nullptr);
  EXPECT_EQ(findDeniedFunction("lo_something"), nullptr);
  EXPECT_EQ(findDeniedFunction("currval"), nullptr);
  EXPECT_EQ(findDeniedFunction("now"), nullptr);
}

}  // namespace
}  // namespace mcpdb::guard
