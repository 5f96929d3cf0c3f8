// libFuzzer target: the MySQL DSN parser on any bytes, in two shapes chosen by the first byte:
// 0: the input is the whole DSN; otherwise: "mysql://u:" SECRET "@" input, parsed with two
// different secrets. Invariants:
// - never a crash, a hang or an out-of-bounds read;
// - an error message is the same whichever secret the password holds (so the password is never
//   in it), and it never contains the secret;
// - the redacted form never depends on the password's value, and it parses back to the same
//   target (user, host, port, socket, database, ssl-mode, ssl-ca, timeout, iam);
// - an IAM DSN has no password and verifies the server (VERIFY_IDENTITY over TCP).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engines/mysql/dsn.hpp"

namespace {

using mcpdb::mysql::Dsn;
using mcpdb::mysql::parseDsn;
using mcpdb::mysql::redactedDsn;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

// The port is unused with a socket (libmariadb ignores it), so the redacted form leaves it out.
bool sameTarget(const Dsn& a, const Dsn& b) {
  return a.user == b.user && a.host == b.host && (a.port == b.port || !a.socket.empty()) &&
         a.socket == b.socket && a.database == b.database && a.ssl_mode == b.ssl_mode &&
         a.ssl_ca == b.ssl_ca && a.connect_timeout == b.connect_timeout && a.iam == b.iam;
}

// The redacted form: independent of the password's value and a faithful description.
void checkRedacted(const Dsn& d) {
  if (d.iam) {
    require(d.password.empty() && d.socket.empty() && !d.host.empty());
    require(d.ssl_mode == mcpdb::mysql::SslMode::VerifyIdentity);
  }
  const std::string r = redactedDsn(d);
  Dsn other = d;
  if (!other.password.empty()) other.password = d.password == "QqQq" ? "WwWw" : "QqQq";
  require(redactedDsn(other) == r);
  auto back = parseDsn(r);
  require(back.ok());
  require(sameTarget(*back, d));
}

void wholeInput(std::string_view text) {
  auto d = parseDsn(text);
  if (d.ok()) {
    checkRedacted(*d);
  } else {
    require(!d.error().message.empty());
  }
}

void withSecrets(std::string_view rest) {
  constexpr std::string_view kOne = "Sx7Kp2Vq";
  constexpr std::string_view kTwo = "Hm4Rt8Zc";
  const std::string prefix = "mysql://u:";
  auto one = parseDsn(prefix + std::string(kOne) + "@" + std::string(rest));
  auto two = parseDsn(prefix + std::string(kTwo) + "@" + std::string(rest));
  require(one.ok() == two.ok());
  if (!one.ok()) {
    require(one.error().message == two.error().message);
    require(one.error().message.find(kOne) == std::string::npos);
    return;
  }
  checkRedacted(*one);
  require(redactedDsn(*one) == redactedDsn(*two));
  const bool secretElsewhere = rest.find(kOne) != std::string_view::npos;
  if (!secretElsewhere) require(redactedDsn(*one).find(kOne) == std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    wholeInput(text);
  } else {
    withSecrets(text);
  }
  return 0;
}
