#include "engines/mysql/dsn.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>

#include "common/uri.hpp"

namespace mcpdb::mysql {
namespace {

constexpr std::array<std::string_view, 2> kSchemes = {"mysql://", "mariadb://"};
constexpr std::chrono::seconds kMaxConnectTimeout{3600};

Error bad(std::string message) {
  return makeError(Code::InvalidArgument, "MySQL DSN: " + std::move(message));
}

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Only the four known names are ever repeated in an error: anything else may be a value, or the
// password pasted in the wrong place.
std::string ordinal(std::size_t n) {
  return "query parameter " + std::to_string(n);
}

// Percent-decodes one part; `what` names it in the error. NUL is refused everywhere: the C API
// takes NUL-terminated strings and would silently cut the value short.
Result<std::string> decodePart(std::string_view raw, std::string_view what) {
  auto decoded = percentDecode(raw);
  if (!decoded)
    return bad("the " + std::string(what) + " has a '%' not followed by two hex digits");
  if (decoded->find('\0') != std::string::npos) {
    return bad("the " + std::string(what) + " contains a NUL byte (%00)");
  }
  return std::move(*decoded);
}

Status parseUserInfo(std::string_view userinfo, Dsn& out) {
  const auto colon = userinfo.find(':');
  auto user = decodePart(userinfo.substr(0, colon), "user name");
  if (!user) return user.error();
  if (user->empty()) return bad("no user name before '@' (mysql://USER:PASSWORD@host/db)");
  out.user = std::move(*user);
  if (colon != std::string_view::npos) {
    auto password = decodePart(userinfo.substr(colon + 1), "password");
    if (!password) return password.error();
    out.password = std::move(*password);
  }
  return {};
}

Result<std::uint16_t> parsePort(std::string_view text) {
  unsigned value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value == 0 || value > 65535) {
    return bad("the port must be a number from 1 to 65535");
  }
  return static_cast<std::uint16_t>(value);
}

Status parseHostPort(std::string_view hostport, Dsn& out) {
  std::string_view host = hostport;
  std::string_view port;
  if (!hostport.empty() && hostport.front() == '[') {
    const auto close = hostport.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 host has '[' without ']'");
    host = hostport.substr(1, close - 1);
    const auto rest = hostport.substr(close + 1);
    if (!rest.empty() && rest.front() != ':')
      return bad("unexpected text after the IPv6 host's ']'");
    if (!rest.empty()) port = rest.substr(1);
    if (host.empty() ||
        host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) {
      return bad("the bracketed host is not an IPv6 address");
    }
  } else {
    const auto colon = hostport.rfind(':');
    if (colon != std::string_view::npos) {
      host = hostport.substr(0, colon);
      port = hostport.substr(colon + 1);
      if (host.find(':') != std::string_view::npos)
        return bad("an IPv6 host must be written in brackets, e.g. [::1]:3306");
    }
  }
  auto decoded = decodePart(host, "host");
  if (!decoded) return decoded.error();
  const bool bracketed = !hostport.empty() && hostport.front() == '[';
  if (!bracketed && decoded->find(':') != std::string::npos) {
    return bad("an IPv6 host must be written in brackets, e.g. [::1]:3306");
  }
  out.host = std::move(*decoded);
  if (out.host.find_first_of("/?#@[] \t\r\n") != std::string::npos)
    return bad("the host contains a character a host name cannot have");
  if (!port.empty() || hostport.ends_with(':')) {
    auto p = parsePort(port);
    if (!p) return p.error();
    out.port = *p;
  }
  return {};
}

Result<SslMode> parseSslMode(std::string_view value) {
  const std::string v = upper(value);
  if (v == "DISABLED") return SslMode::Disabled;
  if (v == "PREFERRED") return SslMode::Preferred;
  if (v == "REQUIRED") return SslMode::Required;
  if (v == "VERIFY_CA") return SslMode::VerifyCa;
  if (v == "VERIFY_IDENTITY") return SslMode::VerifyIdentity;
  return bad("ssl-mode must be one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY");
}

Result<std::chrono::seconds> parseTimeout(std::string_view value) {
  unsigned seconds = 0;
  const auto* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, seconds);
  if (value.empty() || ec != std::errc() || ptr != end || seconds == 0 ||
      std::chrono::seconds(seconds) > kMaxConnectTimeout) {
    return bad("connect-timeout must be a whole number of seconds from 1 to 3600");
  }
  return std::chrono::seconds(seconds);
}

Status applyParameter(std::string_view key, std::string_view rawValue, std::size_t n, Dsn& out) {
  auto value = decodePart(rawValue, "value of " + ordinal(n));
  if (!value) return value.error();
  if (key == "ssl-mode") {
    auto mode = parseSslMode(*value);
    if (!mode) return mode.error();
    out.ssl_mode = *mode;
    out.ssl_mode_explicit = true;
  } else if (key == "ssl-ca") {
    if (value->empty()) return bad("ssl-ca is empty");
    out.ssl_ca = std::move(*value);
  } else if (key == "connect-timeout") {
    auto t = parseTimeout(*value);
    if (!t) return t.error();
    out.connect_timeout = *t;
  } else if (key == "iam") {
    const std::string v = upper(*value);
    if (v == "TRUE" || v == "1") {
      out.iam = true;
    } else if (v != "FALSE" && v != "0") {
      return bad("iam must be true or false");
    }
  } else if (key == "socket") {
    if (value->empty() || value->front() != '/') return bad("socket must be an absolute path");
    out.socket = std::move(*value);
  } else {
    return bad(ordinal(n) +
               " has an unknown name (known: ssl-mode, ssl-ca, connect-timeout, socket, iam)");
  }
  return {};
}

Status parseQuery(std::string_view query, Dsn& out) {
  std::array<bool, 5> seen{};
  constexpr std::array<std::string_view, 5> kKeys = {"ssl-mode", "ssl-ca", "connect-timeout",
                                                     "socket", "iam"};
  for (std::size_t n = 1; !query.empty(); ++n) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos) return bad(ordinal(n) + " has no '=value'");
    const auto key = pair.substr(0, eq);
    const auto* known = std::find(kKeys.begin(), kKeys.end(), key);
    if (known != kKeys.end()) {
      auto& was = seen[static_cast<std::size_t>(known - kKeys.begin())];
      if (was) return bad("parameter '" + std::string(key) + "' is given twice");
      was = true;
    }
    if (auto s = applyParameter(key, pair.substr(eq + 1), n, out); !s) return s;
  }
  return {};
}

// The checks that need the whole DSN.
Status checkCombination(Dsn& out) {
  if (!out.socket.empty()) {
    if (!out.host.empty() && out.host != "localhost") {
      return bad("a socket DSN must leave the host empty or write localhost");
    }
    out.host.clear();
  } else if (out.host.empty()) {
    return bad("no host (mysql://user:password@HOST:port/db, or ?socket=/path)");
  }
  if (!out.ssl_mode_explicit) out.ssl_mode = defaultSslMode(out.host, out.socket);
  if (!out.ssl_ca.empty() && out.ssl_mode == SslMode::Disabled) {
    return bad("ssl-ca is given but ssl-mode is DISABLED");
  }
  if (out.iam) return enableIam(out);
  return {};
}

bool isLoopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

}  // namespace

std::string_view sslModeName(SslMode mode) {
  switch (mode) {
    case SslMode::Disabled: return "DISABLED";
    case SslMode::Preferred: return "PREFERRED";
    case SslMode::Required: return "REQUIRED";
    case SslMode::VerifyCa: return "VERIFY_CA";
    case SslMode::VerifyIdentity: return "VERIFY_IDENTITY";
  }
  return "?";
}

SslMode defaultSslMode(std::string_view host, std::string_view socket) {
  return !socket.empty() || isLoopback(host) ? SslMode::Preferred : SslMode::Required;
}

Status enableIam(Dsn& dsn) {
  if (!dsn.password.empty()) {
    return bad("a password and IAM auth exclude each other (the RDS token is the password)");
  }
  if (dsn.user.empty())
    return bad("IAM auth needs a user name (the database user the token names)");
  if (!dsn.socket.empty() || dsn.host.empty()) {
    return bad("IAM auth needs a TCP host (the token is signed for host:port), not a socket");
  }
  if (dsn.ssl_mode_explicit &&
      (dsn.ssl_mode == SslMode::Disabled || dsn.ssl_mode == SslMode::Preferred ||
       dsn.ssl_mode == SslMode::Required)) {
    return bad("ssl-mode=" + std::string(sslModeName(dsn.ssl_mode)) +
               " cannot carry IAM auth: the token is sent as a clear-text password, so TLS must "
               "be on and verify the server (use VERIFY_IDENTITY, or leave ssl-mode out)");
  }
  dsn.ssl_mode = SslMode::VerifyIdentity;
  dsn.iam = true;
  return {};
}

Result<Dsn> parseDsn(std::string_view text) {
  std::string_view rest;
  for (const auto scheme : kSchemes) {
    if (startsWithNoCase(text, scheme)) rest = text.substr(scheme.size());
  }
  if (rest.data() == nullptr) return bad("must start with mysql:// or mariadb://");
  if (text.find_first_of(std::string_view("\0\r\n", 3)) != std::string_view::npos) {
    return bad("contains a control character (NUL or a line break)");
  }
  if (rest.find('#') != std::string_view::npos)
    return bad("a fragment ('#') is not allowed; percent-encode '#' as %23");

  Dsn out;
  const auto authorityEnd = rest.find_first_of("/?");
  const auto authority = rest.substr(0, authorityEnd);
  rest = authorityEnd == std::string_view::npos ? std::string_view{} : rest.substr(authorityEnd);

  // The last '@' ends the user part, so a raw '@' in a password still parses.
  const auto at = authority.rfind('@');
  if (at == std::string_view::npos) return bad("no user name (mysql://USER:PASSWORD@host/db)");
  if (auto s = parseUserInfo(authority.substr(0, at), out); !s) return s.error();
  if (auto s = parseHostPort(authority.substr(at + 1), out); !s) return s.error();

  const auto q = rest.find('?');
  std::string_view path = rest.substr(0, q);
  if (!path.empty()) {
    path.remove_prefix(1);  // the '/'
    if (path.find('/') != std::string_view::npos)
      return bad("the database name has a '/' (percent-encode it as %2F)");
    auto db = decodePart(path, "database name");
    if (!db) return db.error();
    out.database = std::move(*db);
  }
  if (q != std::string_view::npos) {
    if (auto s = parseQuery(rest.substr(q + 1), out); !s) return s.error();
  }
  if (auto s = checkCombination(out); !s) return s.error();
  return out;
}

std::string redactedDsn(const Dsn& dsn) {
  std::string out = "mysql://" + percentEncode(dsn.user);
  if (!dsn.password.empty()) out += ":***";
  out += "@";
  if (dsn.socket.empty()) {
    const bool v6 = dsn.host.find(':') != std::string::npos;
    out += v6 ? "[" + dsn.host + "]" : percentEncode(dsn.host);
    out += ":" + std::to_string(dsn.port);
  } else {
    out += "localhost";
  }
  out += "/" + percentEncode(dsn.database);
  out += "?ssl-mode=" + std::string(sslModeName(dsn.ssl_mode));
  if (!dsn.ssl_ca.empty()) out += "&ssl-ca=" + percentEncode(dsn.ssl_ca);
  if (!dsn.socket.empty()) out += "&socket=" + percentEncode(dsn.socket);
  out += "&connect-timeout=" + std::to_string(dsn.connect_timeout.count());
  if (dsn.iam) out += "&iam=true";
  return out;
}

}  // namespace mcpdb::mysql
