#include <utility>  // before any Boost header (via the fake server)

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "aws/credential_provider.hpp"
#include "aws/shared_config.hpp"
#include "aws/xml_fields.hpp"
#include "support/fake_http_server.hpp"

namespace mcpdb::aws {
namespace {

namespace fs = std::filesystem;
using test::FakeHttpServer;
using test::FakeRequest;
using test::FakeResponse;
using Vars = std::map<std::string, std::string, std::less<>>;

constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzzSECRET";
constexpr const char* kToken = "FwoGZXIvYXdzEXAMPLE-SESSION-TOKEN-zzz";

// A fresh empty folder per test, used as HOME so the real ~/.aws is never read.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("mcpdb-aws-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& rel, const std::string& content) const {
    auto p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string credentialsJson(const std::string& expiration = "2099-01-01T00:00:00Z") {
  return std::string(
             R"({"Code":"Success","AccessKeyId":"ASIAEXAMPLECONTAINER","SecretAccessKey":")") +
         kSecret + R"(","Token":")" + kToken + R"(","Expiration":")" + expiration + "\"}";
}

std::string stsResponse() {
  return std::string(
             "<AssumeRoleWithWebIdentityResponse "
             "xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
             "<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAEXAMPLEWEBIDENT</"
             "AccessKeyId>"
             "<SecretAccessKey>") +
         kSecret + "</SecretAccessKey><SessionToken>" + kToken +
         "</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>"
         "</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";
}

// Every message produced in these tests is checked for leaked secrets.
void expectNoSecrets(const std::string& text) {
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_EQ(text.find(kToken), std::string::npos) << text;
}

// ---------- environment ----------

TEST(EnvironmentProvider, ReadsKeysAndToken) {
  EnvironmentProvider p(Env::fromMap({{"AWS_ACCESS_KEY_ID", "AKIAENVEXAMPLE1234"},
                                      {"AWS_SECRET_ACCESS_KEY", kSecret},
                                      {"AWS_SESSION_TOKEN", kToken}}));
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accessKeyId, "AKIAENVEXAMPLE1234");
  EXPECT_EQ(c->secretAccessKey, kSecret);
  EXPECT_EQ(c->sessionToken, kToken);
  EXPECT_EQ(c->source, "environment");
  EXPECT_EQ(c->describe(), "environment (AKIA****1234)");
}

TEST(EnvironmentProvider, MissingIsNotFoundAndHalfIsAnError) {
  auto none = EnvironmentProvider(Env::fromMap({})).get();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Code::NotFound);
  auto half = EnvironmentProvider(Env::fromMap({{"AWS_SECRET_ACCESS_KEY", kSecret}})).get();
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error().code, Code::FailedPrecondition);
  EXPECT_NE(half.error().message.find("AWS_ACCESS_KEY_ID"), std::string::npos);
  expectNoSecrets(half.error().message);
}

// ---------- shared files ----------

TEST(SharedConfig, ParsesProfilesCommentsAndNestedBlocks) {
  auto r = parseSharedFile(
      "# comment\n[default]\nregion = us-east-1\n\n[profile dev]\naws_access_key_id = AKIADEV ; "
      "inline\n"
      "s3 =\n  max_concurrent_requests = 10\nAWS_Secret_Access_Key=abc/def+ghi\n[sso-session "
      "x]\nsso_region=a\n"
      "[bare]\nk=v\n",
      SharedFileKind::Config, "config");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->count("bare"), 0u);
  EXPECT_EQ(r->count("x"), 0u);
  EXPECT_EQ(r->at("default").at("region"), "us-east-1");
  EXPECT_EQ(r->at("dev").at("aws_access_key_id"), "AKIADEV");
  EXPECT_EQ(r->at("dev").at("aws_secret_access_key"), "abc/def+ghi");
  EXPECT_EQ(r->at("dev").count("max_concurrent_requests"), 0u);
}

TEST(SharedConfig, GarbledLineGivesLineNumberNotContent) {
  auto r = parseSharedFile("[default]\naws_access_key_id = AKIAX\nwJalrXUtnSECRETLINE\n",
                           SharedFileKind::Credentials, "/home/u/.aws/credentials");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_NE(r.error().message.find("line 3"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find("SECRETLINE"), std::string::npos);
}

TEST(ProfileProvider, DefaultProfileFromCredentialsFile) {
  TempDir home;
  home.write(
      ".aws/credentials",
      std::string("[default]\naws_access_key_id = AKIADEFAULTEXAMPLE\naws_secret_access_key = ") +
          kSecret +
          "\n[dev]\naws_access_key_id = AKIADEVEXAMPLE0001\naws_secret_access_key = devsecret\n");
  ProfileProvider p(Env::fromMap({{"HOME", home.str()}}));
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accessKeyId, "AKIADEFAULTEXAMPLE");
  EXPECT_EQ(c->source, "profile default");
}

TEST(ProfileProvider, SelectsAwsProfileAndMergesConfigWithCredentialsWinning) {
  TempDir home;
  home.write(".aws/credentials", "[dev]\naws_access_key_id = AKIADEVFROMCREDS01\n");
  home.write(
      ".aws/config",
      "[profile dev]\naws_access_key_id = AKIADEVFROMCONFIG1\naws_secret_access_key = fromconfig\n"
      "aws_session_token = tok\n");
  ProfileProvider p(Env::fromMap({{"HOME", home.str()}, {"AWS_PROFILE", "dev"}}));
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accessKeyId, "AKIADEVFROMCREDS01");
  EXPECT_EQ(c->secretAccessKey, "fromconfig");
  EXPECT_EQ(c->sessionToken, "tok");
  EXPECT_EQ(c->source, "profile dev");
}

TEST(ProfileProvider, FileLocationsFromEnvironment) {
  TempDir dir;
  auto creds =
      dir.write("elsewhere/creds",
                "[ci]\naws_access_key_id = AKIACIEXAMPLE00001\naws_secret_access_key = s\n");
  auto cfg = dir.write("elsewhere/cfg", "[profile other]\nregion = eu-west-1\n");
  ProfileProvider p(Env::fromMap({{"HOME", "/nonexistent"},
                                  {"AWS_SHARED_CREDENTIALS_FILE", creds},
                                  {"AWS_CONFIG_FILE", cfg},
                                  {"AWS_PROFILE", "ci"}}));
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accessKeyId, "AKIACIEXAMPLE00001");
}

TEST(ProfileProvider, ExplicitMissingProfileIsAnErrorImplicitIsNotFound) {
  TempDir home;
  home.write(".aws/credentials", "[default]\naws_access_key_id = A\naws_secret_access_key = B\n");
  auto missing =
      ProfileProvider(Env::fromMap({{"HOME", home.str()}, {"AWS_PROFILE", "nope"}})).get();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::FailedPrecondition);
  EXPECT_NE(missing.error().message.find("'nope'"), std::string::npos);

  TempDir empty;
  auto none = ProfileProvider(Env::fromMap({{"HOME", empty.str()}})).get();
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Code::NotFound);
}

TEST(ProfileProvider, UnsupportedProfileKindIsRefusedClearly) {
  TempDir home;
  home.write(".aws/config", "[default]\ncredential_process = /bin/echo secret\n");
  auto r = ProfileProvider(Env::fromMap({{"HOME", home.str()}})).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_NE(r.error().message.find("credential_process"), std::string::npos);
  EXPECT_EQ(r.error().message.find("/bin/echo"), std::string::npos);
}

TEST(ProfileProvider, GarbledFileIsAClearError) {
  TempDir home;
  home.write(".aws/credentials",
             std::string("[default]\naws_access_key_id = AKIAX\n") + kSecret + "\n");
  auto r = ProfileProvider(Env::fromMap({{"HOME", home.str()}})).get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_NE(r.error().message.find("line 3"), std::string::npos);
  expectNoSecrets(r.error().message);
}

TEST(ProfileProvider, WebIdentityProfileUsesSts) {
  FakeHttpServer sts([](const FakeRequest&) {
    return FakeResponse{200, {{"Content-Type", "text/xml"}}, stsResponse()};
  });
  TempDir home;
  auto tokenFile = home.write("token.jwt", "eyJhbGciOiJIUzI1NiJ9.profile.sig\n");
  home.write(
      ".aws/config",
      "[default]\nrole_arn = arn:aws:iam::123456789012:role/reader\nweb_identity_token_file = " +
          tokenFile + "\nrole_session_name = sess1\n");
  auto r =
      ProfileProvider(Env::fromMap({{"HOME", home.str()}, {"AWS_ENDPOINT_URL_STS", sts.url()}}))
          .get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->accessKeyId, "ASIAEXAMPLEWEBIDENT");
  EXPECT_EQ(r->source, "profile default (web identity)");
  auto reqs = sts.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_NE(reqs[0].body.find("RoleSessionName=sess1"), std::string::npos);
}

// ---------- web identity ----------

TEST(WebIdentityProvider, AssumesRoleAgainstFakeSts) {
  FakeHttpServer sts([](const FakeRequest&) {
    return FakeResponse{200, {{"Content-Type", "text/xml"}}, stsResponse()};
  });
  TempDir dir;
  auto tokenFile = dir.write("token", "eyJhbGciOiJSUzI1NiJ9.payload.signature\n");
  WebIdentityProvider p(Env::fromMap({{"AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile},
                                      {"AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/reader"},
                                      {"AWS_ROLE_SESSION_NAME", "mcp"},
                                      {"AWS_ENDPOINT_URL", sts.url()}}));
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accessKeyId, "ASIAEXAMPLEWEBIDENT");
  EXPECT_EQ(c->secretAccessKey, kSecret);
  EXPECT_EQ(c->sessionToken, kToken);
  ASSERT_TRUE(c->expiration.has_value());
  EXPECT_EQ(formatIso8601(*c->expiration), "2099-01-01T00:00:00Z");
  EXPECT_EQ(c->source, "web identity");

  auto reqs = sts.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path(), "/");
  EXPECT_FALSE(reqs[0].header("Authorization").has_value());  // unsigned call
  const auto& body = reqs[0].body;
  EXPECT_NE(body.find("Action=AssumeRoleWithWebIdentity"), std::string::npos);
  EXPECT_NE(body.find("Version=2011-06-15"), std::string::npos);
  EXPECT_NE(body.find("RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Freader"),
            std::string::npos);
  EXPECT_NE(body.find("RoleSessionName=mcp"), std::string::npos);
  EXPECT_NE(body.find("WebIdentityToken=eyJhbGciOiJSUzI1NiJ9.payload.signature"),
            std::string::npos);
  EXPECT_EQ(reqs[0].target.find("eyJ"), std::string::npos);  // token not in the URL
}

TEST(WebIdentityProvider, StsErrorIsReportedByCodeOnly) {
  FakeHttpServer sts([](const FakeRequest&) {
    return FakeResponse{
        400,
        {},
        "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>"
        "<Message>token eyJhbGciOiJSUzI1NiJ9.payload is bad</Message></Error></ErrorResponse>"};
  });
  TempDir dir;
  auto tokenFile = dir.write("token", "eyJhbGciOiJSUzI1NiJ9.payload.signature");
  auto r = WebIdentityProvider(Env::fromMap({{"AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile},
                                             {"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"},
                                             {"AWS_ENDPOINT_URL_STS", sts.url()}}))
               .get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::PermissionDenied);
  EXPECT_NE(r.error().message.find("InvalidIdentityToken"), std::string::npos);
  EXPECT_EQ(r.error().message.find("eyJ"), std::string::npos);
}

TEST(WebIdentityProvider, MissingPiecesAndUnreadableTokenFile) {
  auto none = WebIdentityProvider(Env::fromMap({})).get();
  EXPECT_EQ(none.error().code, Code::NotFound);
  auto half = WebIdentityProvider(Env::fromMap({{"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"}})).get();
  EXPECT_EQ(half.error().code, Code::FailedPrecondition);
  auto unreadable =
      WebIdentityProvider(Env::fromMap({{"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"},
                                        {"AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token"},
                                        {"AWS_ENDPOINT_URL", "http://127.0.0.1:1"}}))
          .get();
  ASSERT_FALSE(unreadable.ok());
  EXPECT_EQ(unreadable.error().code, Code::FailedPrecondition);
  EXPECT_NE(unreadable.error().message.find("/nonexistent/token"), std::string::npos);
}

TEST(WebIdentityProvider, StsEndpointResolution) {
  EXPECT_EQ(stsEndpoint(Env::fromMap({})), "https://sts.amazonaws.com");
  EXPECT_EQ(stsEndpoint(Env::fromMap({{"AWS_REGION", "eu-west-1"}})),
            "https://sts.eu-west-1.amazonaws.com");
  EXPECT_EQ(stsEndpoint(Env::fromMap({{"AWS_DEFAULT_REGION", "cn-north-1"}})),
            "https://sts.cn-north-1.amazonaws.com.cn");
  EXPECT_EQ(
      stsEndpoint(Env::fromMap({{"AWS_REGION", "eu-west-1"}, {"AWS_ENDPOINT_URL", "http://x:1/"}})),
      "http://x:1");
  EXPECT_EQ(stsEndpoint(Env::fromMap(
                {{"AWS_ENDPOINT_URL", "http://x:1"}, {"AWS_ENDPOINT_URL_STS", "http://s:2"}})),
            "http://s:2");
}

// ---------- container ----------

TEST(ContainerProvider, FullUriWithAuthorizationToken) {
  FakeHttpServer agent([](const FakeRequest& r) {
    if (r.header("Authorization").value_or("") != "Bearer agent-token")
      return FakeResponse{401, {}, "no"};
    return FakeResponse{200, {{"Content-Type", "application/json"}}, credentialsJson()};
  });
  ContainerProvider p(
      Env::fromMap({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.url() + "/v1/credentials"},
                    {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer agent-token"}}));
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accessKeyId, "ASIAEXAMPLECONTAINER");
  EXPECT_EQ(c->sessionToken, kToken);
  EXPECT_TRUE(c->expiration.has_value());
  EXPECT_EQ(c->source, "container credentials");
  auto reqs = agent.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].target, "/v1/credentials");
}

TEST(ContainerProvider, TokenFileWinsAndRelativeUriUsesBase) {
  FakeHttpServer agent([](const FakeRequest& r) {
    if (r.header("Authorization").value_or("") != "from-file") return FakeResponse{403, {}, ""};
    return FakeResponse{200, {}, credentialsJson()};
  });
  TempDir dir;
  auto tokenFile = dir.write("tok", "from-file\n");
  ContainerProvider p(
      Env::fromMap({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc"},
                    {"AWS_CONTAINER_AUTHORIZATION_TOKEN", "from-env"},
                    {"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokenFile}}),
      {}, agent.url());
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(agent.requests().at(0).target, "/v2/credentials/abc");
}

TEST(ContainerProvider, RefusesPlainHttpToOtherHostsAndReportsHttpErrors) {
  auto r =
      ContainerProvider(
          Env::fromMap({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://evil.example.com/creds"}}))
          .get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);

  FakeHttpServer agent([](const FakeRequest&) { return FakeResponse{403, {}, credentialsJson()}; });
  auto denied =
      ContainerProvider(Env::fromMap({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.url() + "/c"}}))
          .get();
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, Code::PermissionDenied);
  expectNoSecrets(denied.error().message);

  FakeHttpServer garbled([](const FakeRequest&) {
    return FakeResponse{200, {}, std::string("{not json ") + kSecret};
  });
  auto bad = ContainerProvider(
                 Env::fromMap({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", garbled.url() + "/c"}}))
                 .get();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Code::Internal);
  expectNoSecrets(bad.error().message);
}

// ---------- instance metadata ----------

FakeResponse imdsHandler(const FakeRequest& r) {
  if (r.method == "PUT" && r.target == "/latest/api/token") {
    if (r.header("X-aws-ec2-metadata-token-ttl-seconds").value_or("") != "21600")
      return {400, {}, ""};
    return {200, {}, "imds-session-token"};
  }
  if (r.header("X-aws-ec2-metadata-token").value_or("") != "imds-session-token")
    return {401, {}, ""};
  if (r.method == "GET" && r.target == "/latest/meta-data/iam/security-credentials/")
    return {200, {}, "reader-role\n"};
  if (r.method == "GET" && r.target == "/latest/meta-data/iam/security-credentials/reader-role") {
    return {200, {}, credentialsJson()};
  }
  return {404, {}, ""};
}

TEST(ImdsProvider, V2TokenFlow) {
  FakeHttpServer imds(imdsHandler);
  ImdsProvider p(Env::fromMap({{"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url() + "/"}}));
  auto c = p.get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->accessKeyId, "ASIAEXAMPLECONTAINER");
  EXPECT_EQ(c->source, "instance metadata");
  auto reqs = imds.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].header("x-aws-ec2-metadata-token-ttl-seconds").value_or(""), "21600");
  EXPECT_EQ(reqs[1].header("x-aws-ec2-metadata-token").value_or(""), "imds-session-token");
  EXPECT_EQ(reqs[2].header("x-aws-ec2-metadata-token").value_or(""), "imds-session-token");
}

TEST(ImdsProvider, DisabledUnreachableAndNoRoleAreNotFound) {
  FakeHttpServer imds(imdsHandler);
  auto off = ImdsProvider(Env::fromMap({{"AWS_EC2_METADATA_DISABLED", "TRUE"},
                                        {"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}}))
                 .get();
  EXPECT_EQ(off.error().code, Code::NotFound);
  EXPECT_EQ(imds.requestCount(), 0u);

  auto port = test::unusedLocalPort();
  auto down = ImdsProvider(Env::fromMap({{"AWS_EC2_METADATA_SERVICE_ENDPOINT",
                                          "http://127.0.0.1:" + std::to_string(port)}}))
                  .get();
  EXPECT_EQ(down.error().code, Code::NotFound);

  imds.setHandler([](const FakeRequest& r) {
    if (r.method == "PUT") return FakeResponse{200, {}, "t"};
    return FakeResponse{404, {}, ""};
  });
  auto noRole =
      ImdsProvider(Env::fromMap({{"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}})).get();
  EXPECT_EQ(noRole.error().code, Code::NotFound);
  EXPECT_NE(noRole.error().message.find("no IAM role"), std::string::npos);
}

// ---------- caching, refresh and the chain ----------

class CountingProvider final : public CredentialProvider {
 public:
  explicit CountingProvider(Clock::time_point* now) : now_(now) {}
  Result<Credentials> get() override {
    ++calls;
    if (fail) return makeError(Code::Unavailable, "endpoint down");
    Credentials c;
    c.accessKeyId = "ASIACOUNT" + std::to_string(calls);
    c.secretAccessKey = kSecret;
    c.sessionToken = kToken;
    c.expiration = *now_ + std::chrono::minutes(15);
    c.source = "counting";
    return c;
  }
  std::string name() const override { return "counting"; }
  int calls = 0;
  bool fail = false;

 private:
  Clock::time_point* now_;
};

TEST(CachingProvider, RefreshesFiveMinutesBeforeExpiry) {
  Clock::time_point now = *parseIso8601("2030-01-01T00:00:00Z");
  auto inner = std::make_unique<CountingProvider>(&now);
  auto* counting = inner.get();
  CachingProvider cache(std::move(inner), std::chrono::minutes(5), [&] { return now; });

  auto a = cache.get();  // expires at 00:15
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(counting->calls, 1);
  now += std::chrono::minutes(9);  // 00:09: 6 minutes left -> cached
  EXPECT_EQ(cache.get()->accessKeyId, "ASIACOUNT1");
  EXPECT_EQ(counting->calls, 1);
  now += std::chrono::minutes(2);  // 00:11: 4 minutes left -> refresh
  EXPECT_EQ(cache.get()->accessKeyId, "ASIACOUNT2");
  EXPECT_EQ(counting->calls, 2);

  // A failed refresh keeps serving still-valid credentials, then fails once they expire.
  counting->fail = true;
  now += std::chrono::minutes(11);  // 00:22; creds (from 00:11) expire 00:26
  auto stale = cache.get();
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ(stale->accessKeyId, "ASIACOUNT2");
  now += std::chrono::minutes(5);  // 00:27: expired
  auto gone = cache.get();
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, Code::Unavailable);
}

TEST(CachingProvider, LongTermCredentialsAreFetchedOnce) {
  auto env = std::make_unique<EnvironmentProvider>(Env::fromMap(
      {{"AWS_ACCESS_KEY_ID", "AKIAONCEEXAMPLE001"}, {"AWS_SECRET_ACCESS_KEY", kSecret}}));
  CachingProvider cache(std::move(env));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.get().ok());
}

TEST(CachingProvider, ConcurrentCallersShareOneRefresh) {
  FakeHttpServer agent([](const FakeRequest&) {
    FakeResponse r{200, {}, credentialsJson()};
    r.delay = std::chrono::milliseconds(50);
    return r;
  });
  auto chain = makeDefaultCredentialChain(Env::fromMap(
      {{"HOME", "/nonexistent"}, {"AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.url() + "/c"}}));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 20; ++j) ok += chain->get().ok() ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 160);
  EXPECT_EQ(agent.requestCount(), 1u);
}

TEST(DefaultChain, EnvironmentBeatsSharedFiles) {
  TempDir home;
  home.write(".aws/credentials",
             "[default]\naws_access_key_id = AKIAFILEEXAMPLE001\naws_secret_access_key = f\n");
  auto chain = makeDefaultCredentialChain(Env::fromMap({{"HOME", home.str()},
                                                        {"AWS_ACCESS_KEY_ID", "AKIAENVEXAMPLE0001"},
                                                        {"AWS_SECRET_ACCESS_KEY", kSecret},
                                                        {"AWS_EC2_METADATA_DISABLED", "true"}}));
  auto c = chain->get();
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->source, "environment");

  auto fileOnly = makeDefaultCredentialChain(
      Env::fromMap({{"HOME", home.str()}, {"AWS_EC2_METADATA_DISABLED", "true"}}));
  auto f = fileOnly->get();
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->source, "profile default");
}

TEST(DefaultChain, SharedFilesBeatWebIdentityWhichBeatsContainerAndImds) {
  FakeHttpServer sts([](const FakeRequest&) { return FakeResponse{200, {}, stsResponse()}; });
  FakeHttpServer agent([](const FakeRequest&) { return FakeResponse{200, {}, credentialsJson()}; });
  FakeHttpServer imds(imdsHandler);
  TempDir home;
  auto tokenFile = home.write("t", "jwt");
  Vars vars{{"HOME", home.str()},
            {"AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile},
            {"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"},
            {"AWS_ENDPOINT_URL_STS", sts.url()},
            {"AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.url() + "/c"},
            {"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}};
  EXPECT_EQ(makeDefaultCredentialChain(Env::fromMap(vars))->get()->source, "web identity");
  vars.erase("AWS_ROLE_ARN");
  vars.erase("AWS_WEB_IDENTITY_TOKEN_FILE");
  EXPECT_EQ(makeDefaultCredentialChain(Env::fromMap(vars))->get()->source, "container credentials");
  vars.erase("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  EXPECT_EQ(makeDefaultCredentialChain(Env::fromMap(vars))->get()->source, "instance metadata");
  home.write(".aws/credentials",
             "[default]\naws_access_key_id = AKIAFILEEXAMPLE001\naws_secret_access_key = f\n");
  vars["AWS_ROLE_ARN"] = "arn:aws:iam::1:role/r";
  vars["AWS_WEB_IDENTITY_TOKEN_FILE"] = tokenFile;
  EXPECT_EQ(makeDefaultCredentialChain(Env::fromMap(vars))->get()->source, "profile default");
}

TEST(DefaultChain, NothingConfiguredGivesOneClearNotFound) {
  TempDir home;
  auto chain = makeDefaultCredentialChain(
      Env::fromMap({{"HOME", home.str()}, {"AWS_EC2_METADATA_DISABLED", "true"}}));
  auto r = chain->get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::NotFound);
  for (auto name :
       {"environment", "shared files", "web identity", "container", "instance metadata"}) {
    EXPECT_NE(r.error().message.find(name), std::string::npos) << r.error().message;
  }
}

TEST(DefaultChain, BrokenSourceStopsTheChainWithItsError) {
  TempDir home;
  home.write(".aws/credentials", "[default]\ngarbage line\n");
  auto chain = makeDefaultCredentialChain(
      Env::fromMap({{"HOME", home.str()}, {"AWS_EC2_METADATA_DISABLED", "true"}}));
  auto r = chain->get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_NE(r.error().message.find("shared files"), std::string::npos);
  EXPECT_NE(r.error().message.find("line 2"), std::string::npos);
}

// ---------- never printable ----------

TEST(Credentials, DescribeAndPrintToNeverShowSecrets) {
  Credentials c;
  c.accessKeyId = "AKIAIOSFODNN7EXAMPLE";
  c.secretAccessKey = kSecret;
  c.sessionToken = kToken;
  c.source = "environment";
  c.expiration = parseIso8601("2030-01-01T00:00:00Z");
  EXPECT_EQ(c.describe(), "environment (AKIA****MPLE), expires 2030-01-01T00:00:00Z");
  std::ostringstream os;
  PrintTo(c, &os);
  expectNoSecrets(os.str());
  EXPECT_EQ(os.str().find("AKIAIOSFODNN7EXAMPLE"), std::string::npos);
  EXPECT_EQ(redactKeyId("short"), "****");
}

TEST(Credentials, NoErrorMessageContainsTheSecret) {
  // Drive every provider into failure with the secret present in its inputs, and collect messages.
  std::vector<std::string> messages;
  TempDir home;
  home.write(".aws/credentials",
             std::string("[default]\naws_access_key_id = AKIAX\n") + kSecret + "\n");
  auto collect = [&](Result<Credentials> r) {
    if (!r.ok()) messages.push_back(r.error().message);
  };
  collect(makeDefaultCredentialChain(Env::fromMap({{"HOME", home.str()}}))->get());
  collect(EnvironmentProvider(Env::fromMap({{"AWS_SECRET_ACCESS_KEY", kSecret}})).get());
  home.write(".aws/credentials", std::string("[p]\naws_secret_access_key = ") + kSecret + "\n");
  collect(ProfileProvider(Env::fromMap({{"HOME", home.str()}, {"AWS_PROFILE", "p"}})).get());
  FakeHttpServer echo([](const FakeRequest& r) {
    return FakeResponse{500, {}, "<Code>" + r.body + "</Code>"};
  });
  auto tokenFile = home.write("tok", kToken);
  collect(WebIdentityProvider(Env::fromMap({{"AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile},
                                            {"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"},
                                            {"AWS_ENDPOINT_URL", echo.url()}}))
              .get());
  collect(ContainerProvider(Env::fromMap({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", echo.url() + "/c"},
                                          {"AWS_CONTAINER_AUTHORIZATION_TOKEN", kToken}}))
              .get());
  FakeHttpServer half([](const FakeRequest&) {
    return FakeResponse{
        200,
        {},
        std::string(R"({"SecretAccessKey":")") + kSecret + R"(","Token":")" + kToken + "\"}"};
  });
  collect(
      ContainerProvider(Env::fromMap({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", half.url() + "/c"}}))
          .get());
  ASSERT_GE(messages.size(), 6u);
  for (const auto& m : messages) {
    SCOPED_TRACE(m);
    EXPECT_FALSE(m.empty());
    expectNoSecrets(m);
  }
}

// ---------- small parsers ----------

TEST(XmlFields, ReadsElementTextAndDecodesEntities) {
  EXPECT_EQ(xmlElementText("<a><B>x&amp;y&#65;&#x42;</B></a>", "B").value_or(""), "x&yAB");
  EXPECT_FALSE(xmlElementText("<a><B>x</a>", "B").has_value());
  EXPECT_FALSE(xmlElementText("<a/>", "B").has_value());
}

TEST(Iso8601, ParsesAwsTimestamps) {
  auto t = parseIso8601("2016-11-07T17:39:33Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(formatIso8601(*t), "2016-11-07T17:39:33Z");
  EXPECT_EQ(formatIso8601(*parseIso8601("2016-11-07T17:39:33.123Z")), "2016-11-07T17:39:33Z");
  EXPECT_FALSE(parseIso8601("2016-11-07 17:39:33").has_value());
  EXPECT_FALSE(parseIso8601("garbage").has_value());
}

}  // namespace
}  // namespace mcpdb::aws
