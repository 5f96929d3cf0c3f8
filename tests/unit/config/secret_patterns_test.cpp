// The hand-written secret matchers agree with the regular expressions they replace, on chosen
// cases and on many generated strings near the interesting shapes.
#include "config/secret_patterns.hpp"

#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

namespace mcpdb::config {
namespace {

bool keyRegex(const std::string& key) {
  static const std::regex re(
      R"((^|_)(password|passwd|pwd|secret|secret_access_key|access_key_id|access_key|api_key|apikey|token|session_token|private_key|credentials?|dsn|connection_string|uri)$)",
      std::regex::icase);
  return std::regex_search(key, re);
}

const char* valueRegex(const std::string& value) {
  static const std::regex dsn(R"(^[a-z][a-z0-9+.-]*://[^/@\s:]+:[^/@\s]+@)", std::regex::icase);
  static const std::regex kv(R"((^|\s)password\s*=)", std::regex::icase);
  static const std::regex aws(R"((^|[^A-Z0-9])(AKIA|ASIA)[A-Z0-9]{16}([^A-Z0-9]|$))");
  static const std::regex pem(R"(-----BEGIN [A-Z ]*PRIVATE KEY-----)");
  if (std::regex_search(value, dsn)) return "a connection string with credentials";
  if (std::regex_search(value, kv)) return "a connection string with a password";
  if (std::regex_search(value, aws)) return "an AWS access key id";
  if (std::regex_search(value, pem)) return "a private key";
  return nullptr;
}

std::string kind(const char* k) {
  return k == nullptr ? "<none>" : k;
}

TEST(SecretPatterns, Keys) {
  for (const char* k :
       {"password", "db_password", "DB_PASSWORD", "api_key", "x_Token", "dsn", "connection_string",
        "credential", "credentials", "uri", "aws_secret_access_key"}) {
    EXPECT_TRUE(keyLooksSecret(k)) << k;
  }
  for (const char* k : {"passwords", "mypassword", "token_count", "uris", "uri_", "url", "",
                        "description", "_", "credentialss"}) {
    EXPECT_FALSE(keyLooksSecret(k)) << k;
  }
}

TEST(SecretPatterns, Values) {
  EXPECT_EQ(kind(valueLooksSecret("postgresql://u:p@h/db")),
            "a connection string with credentials");
  EXPECT_EQ(kind(valueLooksSecret("MongoDB+SRV://user:pa:ss@h")),
            "a connection string with credentials");
  EXPECT_EQ(kind(valueLooksSecret("postgresql://u@h/db")), "<none>");
  EXPECT_EQ(kind(valueLooksSecret("host=h Password = x")), "a connection string with a password");
  EXPECT_EQ(kind(valueLooksSecret("xpassword=1")), "<none>");
  EXPECT_EQ(kind(valueLooksSecret("key AKIAABCDEFGHIJKLMNOP.")), "an AWS access key id");
  EXPECT_EQ(kind(valueLooksSecret("AKIAABCDEFGHIJKLMNOPQ")), "<none>");
  EXPECT_EQ(kind(valueLooksSecret("-----BEGIN RSA PRIVATE KEY-----")), "a private key");
  EXPECT_EQ(kind(valueLooksSecret("-----BEGIN PRIVATE KEY PRIVATE KEY-----")), "a private key");
  EXPECT_EQ(kind(valueLooksSecret("-----BEGIN PUBLIC KEY-----")), "<none>");
}

// Random strings over an alphabet rich in the characters the patterns care about, plus
// fragments of the patterns, compared with std::regex.
TEST(SecretPatterns, AgreeWithTheRegularExpressions) {
  std::mt19937 rng(20261130);
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           "0",
                                           "9",
                                           "+",
                                           ".",
                                           "-",
                                           "://",
                                           ":",
                                           "@",
                                           "/",
                                           " ",
                                           "\t",
                                           "\n",
                                           "_",
                                           "=",
                                           "AKIA",
                                           "ASIA",
                                           "ABCDEFGHIJKLMNOP",
                                           "1234",
                                           "password",
                                           "PassWord",
                                           "-----BEGIN ",
                                           "PRIVATE KEY-----",
                                           "RSA ",
                                           "PRIVATE KEY",
                                           "token",
                                           "api_key",
                                           "dsn",
                                           "uri",
                                           "s",
                                           "é"};
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> len(0, 8);
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    for (int i = len(rng); i > 0; --i) s += pieces[pick(rng)];
    ASSERT_EQ(keyLooksSecret(s), keyRegex(s)) << "key: " << s;
    ASSERT_EQ(kind(valueLooksSecret(s)), kind(valueRegex(s))) << "value: " << s;
  }
}

}  // namespace
}  // namespace mcpdb::config
