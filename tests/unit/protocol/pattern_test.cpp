// Argument patterns (RE2): JSON Schema search semantics, RE2-only syntax refused at load with a
// reason, and hostile arguments answered in linear time (std::regex overflowed the stack on a
// 100,000-character argument and stalled for seconds on a nested quantifier).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "protocol/pattern.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::protocol {
namespace {

bool finds(const std::string& pattern, const std::string& text) {
  auto re = compilePattern(pattern);
  EXPECT_TRUE(re) << pattern;
  return re && patternFinds(**re, text);
}

TEST(Pattern, SearchesUnanchoredLikeJsonSchema) {
  EXPECT_TRUE(finds("b", "abc"));
  EXPECT_FALSE(finds("^b", "abc"));
  EXPECT_TRUE(finds("^[A-Za-z0-9_.-]+$", "doc_1.v2"));
  EXPECT_FALSE(finds("^[A-Za-z0-9_.-]+$", "doc 1"));
  EXPECT_FALSE(finds("^a$", "a\n"));  // `$` is the end of the text, as in ECMAScript
  EXPECT_TRUE(finds("^\\d{4}$", "2024"));
  EXPECT_FALSE(finds("^\\d$", "\xd9\xa3"));  // ARABIC-INDIC DIGIT THREE: \d is ASCII, as in JS
  EXPECT_TRUE(finds("^.$", "\xc3\xa9"));     // `.` is one code point, not one byte
  EXPECT_TRUE(finds("^\\x{e9}$", "\xc3\xa9"));
  EXPECT_TRUE(finds("(?i)^abc$", "ABC"));
}

TEST(Pattern, RefusesWhatRe2CannotCompileWithAReasonNotThePattern) {
  const std::vector<std::string> refused = {
      "^(?=.*[0-9]).+$", "^(?!admin).*$", "(?<=x)y", "(?<!x)y",  // lookaround
      "(a)\\1",                                                  // backreference
      "^\\u0041$",                                               // ECMAScript \u escape
      "([a-z",           "a{2,1}",        "*a",      "x{1001}",
  };
  for (const auto& p : refused) {
    auto re = compilePattern(p);
    ASSERT_FALSE(re) << p;
    EXPECT_EQ(re.error().message.find(p), std::string::npos) << re.error().message;
    EXPECT_NE(re.error().message.find("RE2"), std::string::npos) << re.error().message;
  }
  EXPECT_NE(compilePattern("(?=x)").error().message.find("lookahead"), std::string::npos);
  EXPECT_NE(compilePattern("(a)\\1").error().message.find("backreference"), std::string::npos);
}

TEST(Pattern, SchemaSubsetCheckRefusesAnUncompilablePatternNamingThePath) {
  const Json schema = Json::parse(
      R"({"type":"object","properties":{"q":{"type":"string","pattern":"^(?!x).*$"}}})");
  auto st = validateSchemaSubset(schema, "find.inputSchema");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message.rfind("find.inputSchema.properties.q: pattern uses syntax RE2", 0),
            0U)
      << st.error().message;
}

// Patterns that make backtracking engines explode, each against a 1 MiB argument that almost
// matches. Linear time: each answer comes in milliseconds (the bound is loose for ASan builds).
TEST(Pattern, OneMebibyteArgumentIsAnsweredQuicklyForAnyPattern) {
  const std::vector<std::string> patterns = {
      "^[a-z]+$",         "^(a+)+$",        "^(a|aa)*$",         "^(a|a?)+$",
      "(x+x+)+y",         "^(.*a){20}$",    "^(a*)*b$",          "(\\w+\\s?)+$",
      "(a|b)*a(a|b){20}", "^([a-z]+-?)+!$", "^[\\s\\S]*zz$",     "a.{40}$",
      "[a-q][^u-z]{13}x", "(x|a)*a.{30}b",  "^(\\w{1,30}){30}$", "(?i)^(a|A)+$",
  };
  std::string mixed(1 << 20, 'a');  // letters in a fixed pseudo-random order: DFA states churn
  std::uint32_t x = 12345;
  for (char& c : mixed) {
    x = x * 1103515245U + 12345U;
    c = static_cast<char>('a' + (x >> 16) % 26);
  }
  const std::string texts[] = {std::string(1 << 20, 'a') + "!", std::string(1 << 20, 'a'),
                               std::string(1 << 19, 'a') + std::string(1 << 19, ' '), mixed};
  for (const auto& p : patterns) {
    auto re = compilePattern(p);
    ASSERT_TRUE(re) << p;
    for (const auto& text : texts) {
      const auto t0 = std::chrono::steady_clock::now();
      (void)patternFinds(**re, text);
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
      EXPECT_LT(ms, 1500) << p << " took " << ms << " ms on " << text.size() << " bytes";
    }
  }
}

TEST(Pattern, SchemaValidationOfAHugeArgumentNeitherCrashesNorStalls) {
  const Json schema = Json::parse(
      R"({"type":"object","properties":{"q":{"type":"string","maxLength":2097152,"pattern":"^(a+)+$"}}})");
  ASSERT_TRUE(validateSchemaSubset(schema));
  Json args = {{"q", std::string(1 << 20, 'a') + "!"}};
  const auto t0 = std::chrono::steady_clock::now();
  auto st = validateJson(schema, args);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, R"(arguments.q: does not match the required pattern "^(a+)+$")");
  args["q"] = std::string(1 << 20, 'a');
  EXPECT_TRUE(validateJson(schema, args));
}

// RE2 is linear with the program size as the constant, and its NFA fallback is slow for large
// programs, so a pattern is accepted only with a maxLength that bounds the worst case.
TEST(Pattern, APatternsCostIsBoundedByTheLengthItMeets) {
  auto big = compilePattern("[a-z]{500}[0-9]");  // 505 instructions
  ASSERT_TRUE(big);
  EXPECT_TRUE(checkPatternCost(**big, 1024));
  auto refused = checkPatternCost(**big, 1 << 20);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "pattern is too complex for a value of up to 1048576 characters (505 RE2 instructions; "
            "matching could take seconds): lower max_length to at most 66444 or simplify the "
            "pattern");
  EXPECT_TRUE(checkPatternCost(**big, 66444));
  EXPECT_FALSE(checkPatternCost(**big, 66445));
  // At the largest accepted length, the worst input (the NFA fallback) still takes well under
  // a second (loose for ASan builds).
  const std::string worst(66444, 'a');
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(patternFinds(**big, worst));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  // Simple patterns take any length the config allows (1 MiB).
  EXPECT_TRUE(checkPatternCost(**compilePattern("^[A-Za-z0-9_.-]+$"), 1 << 20));
  // In a schema: a pattern needs a maxLength within the bound.
  EXPECT_FALSE(validateSchemaSubset(Json{{"type", "string"}, {"pattern", "^a$"}}));
  EXPECT_FALSE(validateSchemaSubset(
      Json{{"type", "string"}, {"maxLength", 1 << 20}, {"pattern", "[a-z]{500}[0-9]"}}));
  EXPECT_TRUE(validateSchemaSubset(
      Json{{"type", "string"}, {"maxLength", 1024}, {"pattern", "[a-z]{500}[0-9]"}}));
}

TEST(Pattern, SharedPatternsAreCompiledOnce) {
  auto a = sharedPattern("^[0-9]+$");
  auto b = sharedPattern("^[0-9]+$");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->get(), b->get());
  EXPECT_FALSE(sharedPattern("(?=x)"));
}

TEST(Schema, MessagesQuotingInvalidUtf8ConfigTextDoNotThrow) {
  // An enum or const whose config text is not UTF-8 must not abort the process when an agent's
  // value misses it (nlohmann's dump() throws on invalid UTF-8 by default).
  Json schema = {{"type", "string"}, {"enum", Json::array({std::string("a\xff"), "b"})}};
  auto st = validateJson(schema, Json("c"));
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("must be one of"), std::string::npos);
  Json schema2 = {{"const", std::string("\xc3")}};
  EXPECT_FALSE(validateJson(schema2, Json("c")));
  Json schema3 = {{"type", "string"}, {"pattern", std::string("^a\xff$")}};
  EXPECT_FALSE(validateJson(schema3, Json("c")));
}

}  // namespace
}  // namespace mcpdb::protocol
