// The MySQL DSN: what parses, the defaults, the errors (each names the problem and never repeats
// a value, so never the password) and the redacted form.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engines/mysql/dsn.hpp"

namespace mcpdb::mysql {
namespace {

Dsn parsed(const std::string& text) {
  auto d = parseDsn(text);
  EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
  return d.ok() ? *d : Dsn{};
}

std::string errorOf(const std::string& text) {
  auto d = parseDsn(text);
  EXPECT_FALSE(d.ok()) << text;
  if (d.ok()) return "";
  EXPECT_EQ(d.error().code, Code::InvalidArgument);
  return d.error().message;
}

TEST(MysqlDsn, FullForm) {
  const Dsn d = parsed(
      "mysql://reader:s3cr%40t%3Ax@db.example.com:3307/"
      "shop?ssl-mode=VERIFY_IDENTITY&ssl-ca=%2Fetc%2Fca.pem&connect-timeout=7");
  EXPECT_EQ(d.user, "reader");
  EXPECT_EQ(d.password, "s3cr@t:x");
  EXPECT_EQ(d.host, "db.example.com");
  EXPECT_EQ(d.port, 3307);
  EXPECT_EQ(d.database, "shop");
  EXPECT_EQ(d.ssl_mode, SslMode::VerifyIdentity);
  EXPECT_EQ(d.ssl_ca, "/etc/ca.pem");
  EXPECT_EQ(d.connect_timeout, std::chrono::seconds(7));
}

TEST(MysqlDsn, DefaultsAndSchemes) {
  const Dsn d = parsed("MariaDB://u@db.example.com");
  EXPECT_EQ(d.port, 3306);
  EXPECT_EQ(d.password, "");
  EXPECT_EQ(d.database, "");
  // Remote: REQUIRED by default (PREFERRED would silently fall back to clear text).
  EXPECT_EQ(d.ssl_mode, SslMode::Required);
  EXPECT_FALSE(d.ssl_mode_explicit);
  EXPECT_EQ(d.connect_timeout, std::chrono::seconds(10));
  EXPECT_EQ(parsed("mysql://u:p@127.0.0.1:1/x").ssl_mode, SslMode::Preferred);
  EXPECT_EQ(parsed("mysql://u:p@localhost/x").ssl_mode, SslMode::Preferred);
  EXPECT_EQ(parsed("mysql://u:p@[::1]/x").ssl_mode, SslMode::Preferred);
  EXPECT_EQ(parsed("mysql://u:p@db/x?ssl-mode=disabled").ssl_mode, SslMode::Disabled);
}

TEST(MysqlDsn, Ipv6AndSocket) {
  const Dsn v6 = parsed("mysql://u:p@[2001:db8::1]:3310/d");
  EXPECT_EQ(v6.host, "2001:db8::1");
  EXPECT_EQ(v6.port, 3310);
  const Dsn s = parsed("mysql://u:p@localhost/d?socket=%2Frun%2Fmysqld%2Fmysqld.sock");
  EXPECT_EQ(s.socket, "/run/mysqld/mysqld.sock");
  EXPECT_EQ(s.host, "");
  EXPECT_EQ(parsed("mysql://u:p@/d?socket=/tmp/s").socket, "/tmp/s");
  EXPECT_EQ(parsed("mysql://u:p@/d?socket=/tmp/s").ssl_mode, SslMode::Preferred);
}

TEST(MysqlDsn, RawAtInPasswordUsesLastAt) {
  const Dsn d = parsed("mysql://u:p@ss@h/d");
  EXPECT_EQ(d.password, "p@ss");
  EXPECT_EQ(d.host, "h");
}

TEST(MysqlDsn, ErrorsNameTheProblem) {
  EXPECT_NE(errorOf("postgresql://u:p@h/d").find("mysql://"), std::string::npos);
  EXPECT_NE(errorOf("mysql://h/d").find("no user"), std::string::npos);
  EXPECT_NE(errorOf("mysql://:p@h/d").find("no user"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@/d").find("no host"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h:0/d").find("port"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h:70000/d").find("port"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h:/d").find("port"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h:12x/d").find("port"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@::1/d").find("brackets"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@[::1/d").find("']'"), std::string::npos);
  // A ':' smuggled in percent-encoded would be written back as an IPv6 literal.
  EXPECT_NE(errorOf("mysql://u:p@a%3Ab/d").find("brackets"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@a%5Db/d").find("host"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/a/b").find("'/'"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d?ssl-mode=maybe").find("VERIFY_IDENTITY"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d?connect-timeout=0").find("connect-timeout"),
            std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d?connect-timeout=99999").find("connect-timeout"),
            std::string::npos);
  EXPECT_NE(
      errorOf("mysql://u:p@h/d?sslmode=REQUIRED").find("query parameter 1 has an unknown name"),
      std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d?ssl-mode=REQUIRED&ssl-mode=DISABLED").find("twice"),
            std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d?socket=rel").find("absolute"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d?socket=/tmp/s").find("socket DSN"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d?ssl-mode=DISABLED&ssl-ca=/x").find("ssl-ca"),
            std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p%zz@h/d").find("password"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p%00@h/d").find("NUL"), std::string::npos);
  EXPECT_NE(errorOf("mysql://u:p@h/d#frag").find("fragment"), std::string::npos);
  EXPECT_NE(errorOf(std::string("mysql://u:p@h/d\nx")).find("control"), std::string::npos);
}

// The defect class: an error or the redacted form that repeats the password. Each DSN below is
// wrong somewhere else (or right); the distinctive password must not come back.
TEST(MysqlDsn, PasswordNeverInErrorsOrRedactedForm) {
  const std::string pw = "Zq7-Secret-Pw";
  const std::vector<std::string> texts = {
      "mysql://u:" + pw + "@h:99999/d",
      "mysql://u:" + pw + "@h/d?ssl-mode=" + pw,
      "mysql://u:" + pw + "@h/d?" + pw + "=1",
      "mysql://u:" + pw + "@h/d?" + pw,
      "mysql://u:" + pw + "@h/d?connect-timeout=" + pw,
      "mysql://u:" + pw + "@[" + pw + "]/d",
      "mysql://u:" + pw + "%zz@h/d",
      "mysql://u:" + pw + "@h/d?socket=" + pw,
      "mysql://u:" + pw + "@/d",
      "mysql://u:" + pw + "@h/d",
  };
  for (const auto& t : texts) {
    auto d = parseDsn(t);
    if (d.ok()) {
      EXPECT_EQ(d->password, pw);
      const std::string r = redactedDsn(*d);
      EXPECT_EQ(r.find(pw), std::string::npos) << r;
      EXPECT_NE(r.find(":***@"), std::string::npos) << r;
    } else {
      EXPECT_EQ(d.error().message.find(pw), std::string::npos) << d.error().message;
      EXPECT_EQ(d.error().detail.find(pw), std::string::npos);
    }
  }
}

TEST(MysqlDsn, RedactedFormParsesBackToTheSameTarget) {
  const Dsn d = parsed("mysql://us%20er:pw@[::1]:3310/my%2Fdb?ssl-mode=REQUIRED&connect-timeout=3");
  const std::string r = redactedDsn(d);
  EXPECT_EQ(r, "mysql://us%20er:***@[::1]:3310/my%2Fdb?ssl-mode=REQUIRED&connect-timeout=3");
  const Dsn back = parsed(r);
  EXPECT_EQ(back.user, d.user);
  EXPECT_EQ(back.host, d.host);
  EXPECT_EQ(back.port, d.port);
  EXPECT_EQ(back.database, d.database);
  EXPECT_EQ(back.ssl_mode, d.ssl_mode);
  EXPECT_EQ(redactedDsn(parsed("mysql://u@/d?socket=/tmp/s")),
            "mysql://u@localhost/d?ssl-mode=PREFERRED&socket=%2Ftmp%2Fs&connect-timeout=10");
}

}  // namespace
}  // namespace mcpdb::mysql
