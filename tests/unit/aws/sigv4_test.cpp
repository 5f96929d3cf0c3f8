// Runs the AWS SigV4 test-suite vectors stored under tests/unit/aws/sigv4/ (see README.md there).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "aws/crypto.hpp"
#include "aws/rds_auth.hpp"
#include "aws/sigv4.hpp"

namespace mcpdb::aws {
namespace {

namespace fs = std::filesystem;

const fs::path kVectorDir = fs::path(MCPDB_SOURCE_DIR) / "tests/unit/aws/sigv4";

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<std::string> readIfExists(const fs::path& p) {
  if (!fs::exists(p)) return std::nullopt;
  return readFile(p);
}

// Parses the suite's raw request format: "METHOD URI HTTP/1.1", "Name:value" lines, blank line,
// body.
SignableRequest parseRequest(const std::string& text) {
  SignableRequest r;
  auto headerEnd = text.find("\n\n");
  std::string head = text.substr(0, headerEnd);
  if (headerEnd != std::string::npos) r.body = text.substr(headerEnd + 2);
  std::istringstream lines(head);
  std::string line;
  std::getline(lines, line);
  auto sp1 = line.find(' ');
  auto sp2 = line.rfind(' ');
  r.method = line.substr(0, sp1);
  std::string uri = line.substr(sp1 + 1, sp2 - sp1 - 1);
  auto q = uri.find('?');
  r.path = uri.substr(0, q);
  if (q != std::string::npos) {
    std::string query = uri.substr(q + 1);
    std::size_t pos = 0;
    while (pos <= query.size()) {
      auto amp = query.find('&', pos);
      if (amp == std::string::npos) amp = query.size();
      std::string pair = query.substr(pos, amp - pos);
      if (!pair.empty()) {
        auto eq = pair.find('=');
        r.query.emplace_back(uriDecode(pair.substr(0, eq)),
                             eq == std::string::npos ? "" : uriDecode(pair.substr(eq + 1)));
      }
      pos = amp + 1;
    }
  }
  while (std::getline(lines, line)) {
    auto colon = line.find(':');
    r.headers.emplace_back(line.substr(0, colon), line.substr(colon + 1));
  }
  return r;
}

std::map<std::string, std::string> parseOptions(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

Clock::time_point suiteTime() {
  return *parseIso8601("2015-08-30T12:36:00Z");
}

Credentials suiteCredentials() {
  Credentials c;
  c.accessKeyId = "AKIDEXAMPLE";
  c.secretAccessKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  c.source = "test";
  return c;
}

TEST(SigV4, AwsTestSuiteVectors) {
  ASSERT_TRUE(fs::is_directory(kVectorDir)) << kVectorDir;
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(kVectorDir)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    const fs::path base = entry.path() / name;
    auto req = readIfExists(base.string() + ".req");
    if (!req) continue;
    SCOPED_TRACE(name);
    ++cases;
    auto opts = parseOptions(readIfExists(base.string() + ".options").value_or(""));
    SignableRequest request = parseRequest(*req);
    Credentials creds = suiteCredentials();
    if (opts.count("token")) creds.sessionToken = opts["token"];
    SignOptions options;
    options.signSecurityToken = opts["sign_token"] != "false";
    options.normalizePath = opts["normalize"] != "false";
    SigningScope scope{"us-east-1", "service", suiteTime()};

    Signature sig;
    if (opts["mode"] == "presign") {
      std::optional<std::chrono::seconds> expires;
      if (opts.count("expires")) expires = std::chrono::seconds(std::stoi(opts["expires"]));
      sig = presignQuery(request, creds, scope, expires, options);
      auto expectedSig = readIfExists(base.string() + ".sig");
      ASSERT_TRUE(expectedSig.has_value()) << "presign case needs a .sig file";
      EXPECT_EQ(sig.signature, *expectedSig);
      EXPECT_NE(sig.query.find("&X-Amz-Signature=" + *expectedSig), std::string::npos);
    } else {
      sig = signHeaders(request, creds, scope, options);
      auto authz = readIfExists(base.string() + ".authz");
      ASSERT_TRUE(authz.has_value()) << "header case needs an .authz file";
      EXPECT_EQ(sig.authorization, *authz);
      if (!creds.sessionToken.empty()) {
        int tokens = 0;
        for (const auto& [k, v] : request.headers)
          tokens += (k == "X-Amz-Security-Token" && v == creds.sessionToken);
        EXPECT_EQ(tokens, 1);
      }
    }
    if (auto creq = readIfExists(base.string() + ".creq")) {
      EXPECT_EQ(sig.canonicalRequest, *creq);
    }
    if (auto sts = readIfExists(base.string() + ".sts")) {
      EXPECT_EQ(sig.stringToSign, *sts);
    }
  }
  EXPECT_GE(cases, 10) << "too few SigV4 vectors found in " << kVectorDir;
}

TEST(SigV4, SigningKeyDerivationMatchesAwsDocumentationExample) {
  // The key-derivation example of the AWS SigV4 documentation (secret, 20120215, us-east-1, iam).
  auto key =
      deriveSigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam");
  EXPECT_EQ(toHex(key), "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

TEST(SigV4, UriEncodingRules) {
  EXPECT_EQ(uriEncode("a b/c~d", false), "a%20b%2Fc~d");
  EXPECT_EQ(uriEncode("a b/c~d", true), "a%20b/c~d");
  EXPECT_EQ(uriEncode("+=&*", false), "%2B%3D%26%2A");
  EXPECT_EQ(uriDecode("%E1%88%B4=bar%2"), "\xE1\x88\xB4=bar%2");
  EXPECT_EQ(canonicalUri("/a%20b", true),
            "/a%2520b");  // non-S3 services encode the wire path again
  EXPECT_EQ(canonicalUri("//a/./b/../", false), "//a/./b/../");
  EXPECT_EQ(canonicalUri("", true), "/");
}

TEST(SigV4, ContentShaHeaderWhenAsked) {
  SignableRequest r;
  r.method = "POST";
  r.headers = {{"Host", "example.amazonaws.com"}};
  r.body = "{}";
  SignOptions o;
  o.addContentSha256Header = true;
  auto sig = signHeaders(r, suiteCredentials(), {"us-east-1", "dynamodb", suiteTime()}, o);
  EXPECT_EQ(sig.signedHeaders, "host;x-amz-content-sha256;x-amz-date");
  EXPECT_NE(sig.canonicalRequest.find("x-amz-content-sha256:" + sha256Hex("{}")),
            std::string::npos);
}

// Expected value from botocore's tests/unit/test_signers.py, TestGenerateDBAuthToken.
// test_generate_db_auth_token (credentials akid/skid, 2016-11-07T17:39:33Z, us-east-1); the exact
// parameter order (canonical) is the one ex_aws's auth test asserts for the same inputs.
TEST(RdsAuthToken, MatchesBotocoreVector) {
  Credentials c;
  c.accessKeyId = "akid";
  c.secretAccessKey = "skid";
  auto token =
      generateRdsAuthToken("prod-instance.us-east-1.rds.amazonaws.com", 3306, "someusername",
                           "us-east-1", c, *parseIso8601("2016-11-07T17:39:33Z"));
  EXPECT_EQ(token,
            "prod-instance.us-east-1.rds.amazonaws.com:3306/?Action=connect&DBUser=someusername"
            "&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=akid%2F20161107%2Fus-east-1%2Frds-"
            "db%2Faws4_request"
            "&X-Amz-Date=20161107T173933Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
            "&X-Amz-Signature=d1138cdbc0ca63eec012ec0fc6c2267e03642168f5884a7795320d4c18374c61");
}

// Expected value from paws.common's test of rds_build_auth_token (temporary credentials
// AKIA/SECRET/SESSION, 2025-01-01T00:00:01Z, region us-west-2): covers X-Amz-Security-Token.
TEST(RdsAuthToken, MatchesPawsVectorWithSessionToken) {
  Credentials c;
  c.accessKeyId = "AKIA";
  c.secretAccessKey = "SECRET";
  c.sessionToken = "SESSION";
  auto token = generateRdsAuthToken("prod-instance.us-east-1.rds.amazonaws.com", 3306, "mysqlUser",
                                    "us-west-2", c, *parseIso8601("2025-01-01T00:00:01Z"));
  EXPECT_EQ(token,
            "prod-instance.us-east-1.rds.amazonaws.com:3306/?Action=connect&DBUser=mysqlUser"
            "&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20250101%2Fus-west-2%2Frds-"
            "db%2Faws4_request"
            "&X-Amz-Date=20250101T000001Z&X-Amz-Expires=900&X-Amz-Security-Token=SESSION&X-Amz-"
            "SignedHeaders=host"
            "&X-Amz-Signature=4e4ce10c7b3710decae757df60ba2519348dcb4db802f15646dce1bf5e17c3ed");
}

}  // namespace
}  // namespace mcpdb::aws
