// RDS IAM mode against the local MariaDB, which knows nothing of IAM: the connection goes out
// over TLS verified against the server's CA, the token is sent as the (wrong) password, and the
// refusal is a clear authentication error that quotes neither the token nor any part of it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engines/mysql/dsn.hpp"
#include "engines/mysql/raw_client.hpp"

namespace mcpdb::mysql {
namespace {

std::string requireEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    ADD_FAILURE() << name
                  << " is not set: export the local servers' environment first:\n"
                     "  eval \"$(bash scripts/servers.sh env)\"";
    return "";
  }
  return v;
}

constexpr const char* kFakeToken =
    "127.0.0.1:23306/?Action=connect&DBUser=mcpdb_ro&X-Amz-Signature=FAKETOKEN0123456789";

TEST(MysqlIamLive, TokenIsRefusedAsAWrongPasswordAndNeverQuoted) {
  const std::string text = requireEnv("MYSQL_DSN");
  const std::string ca = requireEnv("MCPDB_MARIADB_CA");
  ASSERT_FALSE(text.empty() || ca.empty());
  auto base = parseDsn(text);
  ASSERT_TRUE(base.ok()) << base.error().message;
  Dsn d = *base;
  d.password.clear();
  d.ssl_ca = ca;
  d.ssl_mode_explicit = false;
  ASSERT_TRUE(enableIam(d).ok());
  int calls = 0;
  d.iam_token = [&calls](const std::string&, std::uint16_t,
                         const std::string&) -> Result<std::string> {
    ++calls;
    return std::string(kFakeToken);
  };
  auto conn = connectRaw(d, std::chrono::seconds(5));
  ASSERT_FALSE(conn.ok()) << "a server without IAM accepted the fake token";
  EXPECT_EQ(calls, 1);
  const Error& e = conn.error();
  EXPECT_EQ(e.code, Code::PermissionDenied) << e.message;
  EXPECT_NE(e.detail.find("Access denied"), std::string::npos) << e.detail;
  for (const std::string& s : {e.message, e.detail}) {
    EXPECT_EQ(s.find("FAKETOKEN"), std::string::npos) << s;
    EXPECT_EQ(s.find("X-Amz"), std::string::npos) << s;
  }
  // The same DSN over a host name the certificate does not name never reaches authentication:
  // the token does not leave over a channel whose server was not verified.
  Dsn other = d;
  other.host = "localhost";
  calls = 0;
  auto refused = connectRaw(other, std::chrono::seconds(5));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::Unavailable) << refused.error().message;
  EXPECT_EQ(refused.error().message.find("FAKETOKEN"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::mysql
