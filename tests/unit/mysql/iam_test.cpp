// RDS IAM authentication for MySQL/MariaDB sources, without AWS: the token is the RDS token of
// aws/rds_auth (checked against botocore's published value and the function the PostgreSQL path
// calls), one fresh token per connection, the connect plan (cleartext plugin, verified TLS, the
// token as password) and every refusal, none of which ever quotes the token or a password.
#include <gtest/gtest.h>

#include <atomic>

#include "aws/rds_auth.hpp"
#include "config/config.hpp"
#include "engines/mysql/dsn.hpp"
#include "engines/mysql/iam.hpp"
#include "engines/mysql/raw_client.hpp"
#include "engines/mysql/runtime.hpp"

namespace mcpdb::mysql {
namespace {

constexpr const char* kHost = "prod-instance.us-east-1.rds.amazonaws.com";
// botocore's test of generate_db_auth_token (akid/skid, 2016-11-07T17:39:33Z, us-east-1), the
// same vector tests/unit/aws/sigv4_test.cpp checks for the shared signer.
constexpr const char* kBotocoreToken =
    "prod-instance.us-east-1.rds.amazonaws.com:3306/?Action=connect&DBUser=someusername"
    "&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=akid%2F20161107%2Fus-east-1%2Frds-"
    "db%2Faws4_request"
    "&X-Amz-Date=20161107T173933Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
    "&X-Amz-Signature=d1138cdbc0ca63eec012ec0fc6c2267e03642168f5884a7795320d4c18374c61";

class FixedCredentials final : public aws::CredentialProvider {
 public:
  explicit FixedCredentials(bool ok = true) : ok_(ok) {}
  Result<aws::Credentials> get() override {
    ++calls;
    if (!ok_) return makeError(Code::NotFound, "no source configured");
    aws::Credentials c;
    c.accessKeyId = "akid";
    c.secretAccessKey = "skid";
    c.source = "test";
    return c;
  }
  std::string name() const override { return "fixed"; }
  std::atomic<int> calls{0};

 private:
  bool ok_;
};

aws::Clock::time_point at(const char* iso) {
  return *aws::parseIso8601(iso);
}

TokenSource fixedSource(std::string region = "us-east-1") {
  return rdsTokenSource(std::move(region), std::make_shared<FixedCredentials>(),
                        [] { return at("2016-11-07T17:39:33Z"); });
}

Dsn iamDsn(const std::string& text) {
  auto d = parseDsn(text);
  EXPECT_TRUE(d.ok()) << d.error().message;
  return d.ok() ? *d : Dsn{};
}

std::string errorOf(const std::string& text) {
  auto d = parseDsn(text);
  return d.ok() ? std::string("(parsed)") : d.error().message;
}

TEST(MysqlIam, TokenIsTheRdsTokenOfThePostgresPath) {
  auto token = fixedSource()(kHost, 3306, "someusername");
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(*token, kBotocoreToken);
  // The PostgreSQL path (postgres/conninfo.cpp) calls exactly this function with the same inputs.
  aws::Credentials c;
  c.accessKeyId = "akid";
  c.secretAccessKey = "skid";
  EXPECT_EQ(*token, aws::generateRdsAuthToken(kHost, 3306, "someusername", "us-east-1", c,
                                              at("2016-11-07T17:39:33Z")));
  // Another port and user are signed into the token (host:port/ and DBUser).
  auto other = fixedSource()(kHost, 3307, "reader");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->rfind(std::string(kHost) + ":3307/?Action=connect&DBUser=reader&X-Amz-", 0), 0U)
      << "token does not start with host:port/?Action=connect&DBUser=...";
  EXPECT_NE(*other, *token);
}

TEST(MysqlIam, PlanSendsTheTokenAsPasswordOverVerifiedTlsWithTheCleartextPlugin) {
  Dsn d = iamDsn(std::string("mysql://someusername@") + kHost +
                 "/app?iam=true&ssl-ca=/etc/ssl/rds-global-bundle.pem");
  EXPECT_TRUE(d.iam);
  EXPECT_EQ(d.ssl_mode, SslMode::VerifyIdentity);
  d.iam_token = fixedSource();
  auto plan = planConnect(d);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->password, kBotocoreToken);
  EXPECT_TRUE(plan->cleartext_plugin);
  EXPECT_TRUE(plan->ssl_enforce);
  EXPECT_TRUE(plan->ssl_verify_server_cert);
  EXPECT_TRUE(plan->require_tls);
  EXPECT_EQ(plan->ssl_ca, "/etc/ssl/rds-global-bundle.pem");
  // The DSN itself never holds the token; the redacted form says IAM.
  EXPECT_EQ(d.password, "");
  EXPECT_EQ(redactedDsn(d).find("X-Amz"), std::string::npos);
  EXPECT_NE(redactedDsn(d).find("ssl-mode=VERIFY_IDENTITY"), std::string::npos);
  EXPECT_NE(redactedDsn(d).find("&iam=true"), std::string::npos);
}

TEST(MysqlIam, EveryConnectionGetsAFreshToken) {
  auto creds = std::make_shared<FixedCredentials>();
  std::atomic<int> minutes{0};
  Dsn d = iamDsn(std::string("mysql://someusername@") + kHost + "/app?iam=1");
  d.iam_token = rdsTokenSource("us-east-1", creds, [&minutes] {
    return at("2016-11-07T17:39:33Z") + std::chrono::minutes(minutes.load());
  });
  auto first = planConnect(d);
  minutes = 11;  // a connection opened later must not reuse the first token
  auto second = planConnect(d);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->password, kBotocoreToken);
  EXPECT_NE(second->password, first->password);
  EXPECT_NE(second->password.find("X-Amz-Date=20161107T175033Z"), std::string::npos);
  EXPECT_EQ(creds->calls.load(), 2);
}

TEST(MysqlIam, WithoutIamTheCleartextPluginStaysOffInEveryTlsMode) {
  struct Case {
    const char* query;
    bool enforce, verify, require;
  };
  for (const Case& c :
       {Case{"ssl-mode=DISABLED", false, false, false},
        Case{"ssl-mode=PREFERRED", true, false, false},
        Case{"ssl-mode=REQUIRED", true, false, true}, Case{"ssl-mode=VERIFY_CA", true, true, true},
        Case{"ssl-mode=VERIFY_IDENTITY", true, true, true}}) {
    Dsn d = iamDsn(std::string("mysql://u:pw@db.example/app?") + c.query);
    auto plan = planConnect(d);
    ASSERT_TRUE(plan.ok()) << c.query;
    EXPECT_FALSE(plan->cleartext_plugin) << c.query;
    EXPECT_EQ(plan->password, "pw") << c.query;
    EXPECT_EQ(plan->ssl_enforce, c.enforce) << c.query;
    EXPECT_EQ(plan->ssl_verify_server_cert, c.verify) << c.query;
    EXPECT_EQ(plan->require_tls, c.require) << c.query;
  }
}

TEST(MysqlIam, VerifyCaAndNoSslModeBecomeVerifyIdentity) {
  for (const char* q :
       {"?iam=true", "?iam=true&ssl-mode=VERIFY_CA", "?ssl-mode=verify_identity&iam=TRUE"}) {
    Dsn d = iamDsn(std::string("mysql://u@db.example/app") + q);
    EXPECT_TRUE(d.iam) << q;
    EXPECT_EQ(d.ssl_mode, SslMode::VerifyIdentity) << q;
  }
  // Loopback would default to PREFERRED without IAM; with IAM it is verified too.
  EXPECT_EQ(iamDsn("mysql://u@127.0.0.1/app?iam=true").ssl_mode, SslMode::VerifyIdentity);
  EXPECT_FALSE(iamDsn("mysql://u@127.0.0.1/app?iam=false").iam);
}

TEST(MysqlIam, DsnRefusals) {
  EXPECT_EQ(
      errorOf("mysql://u:hunter2@db.example/app?iam=true"),
      "MySQL DSN: a password and IAM auth exclude each other (the RDS token is the password)");
  for (const char* mode : {"DISABLED", "PREFERRED", "REQUIRED", "required"}) {
    const std::string e =
        errorOf(std::string("mysql://u@db.example/app?iam=true&ssl-mode=") + mode);
    EXPECT_NE(e.find("cannot carry IAM auth: the token is sent as a clear-text password, so TLS "
                     "must be on and verify the server"),
              std::string::npos)
        << mode << ": " << e;
  }
  EXPECT_NE(errorOf("mysql://u@localhost/app?iam=true&socket=/run/mysqld.sock").find("TCP host"),
            std::string::npos);
  const std::string bad = errorOf("mysql://u@db.example/app?iam=sure");
  EXPECT_EQ(bad, "MySQL DSN: iam must be true or false");
  EXPECT_NE(errorOf("mysql://u@db.example/app?iam=true&iam=true").find("given twice"),
            std::string::npos);
}

TEST(MysqlIam, EnableIamRefusesWhatTheConfigSwitchCannotCarry) {
  Dsn withPassword = iamDsn("mysql://u:s3cr3t-pw@db.example/app");
  auto s = enableIam(withPassword);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("exclude each other"), std::string::npos);
  EXPECT_EQ(s.error().message.find("s3cr3t-pw"), std::string::npos);
  EXPECT_FALSE(withPassword.iam);

  Dsn noUser = iamDsn("mysql://u@db.example/app");
  noUser.user.clear();
  s = enableIam(noUser);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("needs a user name"), std::string::npos);

  Dsn required = iamDsn("mysql://u@db.example/app?ssl-mode=REQUIRED");
  ASSERT_FALSE(enableIam(required).ok());
  Dsn implicit = iamDsn("mysql://u@db.example/app");  // REQUIRED by default, not by choice
  ASSERT_TRUE(enableIam(implicit).ok());
  EXPECT_EQ(implicit.ssl_mode, SslMode::VerifyIdentity);
}

TEST(MysqlIam, PlanRefusesAnIamDsnThatLostItsSafeguards) {
  Dsn d = iamDsn(std::string("mysql://someusername@") + kHost + "/app?iam=true");
  d.iam_token = fixedSource();
  Dsn weak = d;
  weak.ssl_mode = SslMode::Required;  // built by hand, past enableIam
  auto p = planConnect(weak);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("VERIFY_IDENTITY"), std::string::npos);
  Dsn pw = d;
  pw.password = "pw";
  EXPECT_FALSE(planConnect(pw).ok());
  Dsn none = d;
  none.iam_token = nullptr;
  p = planConnect(none);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("no RDS token source"), std::string::npos);
}

TEST(MysqlIam, NoRegionNoUserNoCredentials) {
  auto r = fixedSource("")(kHost, 3306, "u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "RDS IAM authentication needs AWS_REGION (or AWS_DEFAULT_REGION)");
  r = fixedSource()(kHost, 3306, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("a host and a user"), std::string::npos);
  auto none = rdsTokenSource("us-east-1", std::make_shared<FixedCredentials>(false));
  r = none(kHost, 3306, "u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_NE(r.error().message.find("no AWS credentials"), std::string::npos);

  EXPECT_EQ(awsRegion(Env::fromMap({{"AWS_DEFAULT_REGION", "eu-west-1"}})), "eu-west-1");
  EXPECT_EQ(awsRegion(Env::fromMap({{"AWS_REGION", "us-west-2"}, {"AWS_DEFAULT_REGION", "x"}})),
            "us-west-2");
}

// The pool: a source's iam_auth applies the DSN rules, a missing region stops before any network
// (the production token source), and no message quotes the DSN's password or a secret key.
std::string acquireError(const Source& source, const Env& env) {
  SourcePool pool(source, 1, env);
  auto lease = pool.acquire(std::chrono::steady_clock::now() + std::chrono::seconds(5), {});
  if (lease.ok()) return "(connected)";
  return lease.error().message + " | " + lease.error().detail;
}

TEST(MysqlIam, PoolAppliesTheSourceSwitch) {
  const Source iam{"reports", "REPORTS_DSN", true};
  std::string e =
      acquireError(iam, Env::fromMap({{"REPORTS_DSN", "mysql://u:pw-XYZZY@db.example/app"},
                                      {"AWS_REGION", "us-east-1"}}));
  EXPECT_NE(e.find("mysql source 'reports': REPORTS_DSN with iam_auth: MySQL DSN: a password and "
                   "IAM auth exclude each other"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("XYZZY"), std::string::npos);

  e = acquireError(iam, Env::fromMap({{"REPORTS_DSN", "mysql://u@db.example/app"},
                                      {"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"},
                                      {"AWS_SECRET_ACCESS_KEY", "SECRET-XYZZY"}}));
  EXPECT_NE(e.find("needs AWS_REGION"), std::string::npos) << e;
  EXPECT_EQ(e.find("XYZZY"), std::string::npos);

  // ?iam=true in the DSN alone is enough.
  const Source plain{"default", "MYSQL_DSN", false};
  e = acquireError(plain, Env::fromMap({{"MYSQL_DSN", "mysql://u@db.example/app?iam=true"}}));
  EXPECT_NE(e.find("needs AWS_REGION"), std::string::npos) << e;
}

Settings parseSection(const std::string& text, std::vector<std::string>& errors) {
  config::Diagnostics diag("t.yaml");
  config::Config cfg = config::parseConfig(text, "t.yaml", {"mysql"}, diag);
  Settings s;
  if (diag.ok()) {
    config::Node root(cfg.root, "", diag);
    s = parseSettings(root.child("mysql"), cfg.limits);
  }
  errors = diag.errors();
  return s;
}

TEST(MysqlIam, SourceSwitchInTheConfig) {
  std::vector<std::string> errors;
  Settings s = parseSection(
      "mysql:\n  sources:\n    main: {dsn_env: MAIN_DSN}\n"
      "    reports: {dsn_env: REPORTS_DSN, iam_auth: true}\n",
      errors);
  ASSERT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(s.sources.size(), 2U);
  for (const auto& src : s.sources) EXPECT_EQ(src.iam_auth, src.name == "reports") << src.name;

  parseSection("mysql:\n  sources:\n    main: {dsn_env: MAIN_DSN, iam_auth: 3}\n", errors);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_NE(errors.front().find("mysql.sources.main.iam_auth"), std::string::npos)
      << errors.front();
}

}  // namespace
}  // namespace mcpdb::mysql
