#include "config/secret_patterns.hpp"

namespace mcpdb::config {

// The secret checks below run on every key and scalar of the config at each start; they are
// hand-written matchers (not std::regex, whose compile + search was ~10 M instructions, a third of
// the start-up work before the first request; see docs/BENCHMARKS.md "Startup profile"). Each
// comment gives the pattern it implements.

namespace {

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
bool isUpperAlnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
// ASCII case-insensitive: does `s` hold `word` (lower case) at `pos`?
bool hasAt(std::string_view s, std::size_t pos, std::string_view word) {
  if (pos > s.size() || s.size() - pos < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (lower(s[pos + i]) != word[i]) return false;
  }
  return true;
}

}  // namespace

// (^|_)(password|passwd|pwd|secret|secret_access_key|access_key_id|access_key|api_key|apikey|
//  token|session_token|private_key|credentials?|dsn|connection_string|uri)$, case-insensitive.
bool keyLooksSecret(std::string_view key) {
  static constexpr std::string_view kWords[] = {
      "password",          "passwd",      "pwd",        "secret",      "secret_access_key",
      "access_key_id",     "access_key",  "api_key",    "apikey",      "token",
      "session_token",     "private_key", "credential", "credentials", "dsn",
      "connection_string", "uri"};
  for (std::string_view w : kWords) {
    if (key.size() < w.size()) continue;
    const std::size_t at = key.size() - w.size();
    if ((at == 0 || key[at - 1] == '_') && hasAt(key, at, w)) return true;
  }
  return false;
}

namespace {

// ^[a-z][a-z0-9+.-]*://[^/@\s:]+:[^/@\s]+@, case-insensitive. Each class excludes the character
// that ends it, so one greedy pass decides.
bool dsnWithPassword(std::string_view v) {
  std::size_t i = 0;
  auto alpha = [](char c) { return lower(c) >= 'a' && lower(c) <= 'z'; };
  if (v.empty() || !alpha(v[0])) return false;
  for (i = 1; i < v.size(); ++i) {
    const char c = v[i];
    if (!(alpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-')) break;
  }
  if (v.substr(i, 3) != "://") return false;
  i += 3;
  const std::size_t user = i;
  while (i < v.size() && v[i] != '/' && v[i] != '@' && v[i] != ':' && !isSpace(v[i])) ++i;
  if (i == user || i == v.size() || v[i] != ':') return false;
  const std::size_t pass = ++i;
  while (i < v.size() && v[i] != '/' && v[i] != '@' && !isSpace(v[i])) ++i;
  return i > pass && i < v.size() && v[i] == '@';
}

// (^|\s)password\s*=, case-insensitive.
bool kvPassword(std::string_view v) {
  constexpr std::string_view kWord = "password";
  for (std::size_t at = 0; at + kWord.size() <= v.size(); ++at) {
    if ((at > 0 && !isSpace(v[at - 1])) || !hasAt(v, at, kWord)) continue;
    std::size_t i = at + kWord.size();
    while (i < v.size() && isSpace(v[i])) ++i;
    if (i < v.size() && v[i] == '=') return true;
  }
  return false;
}

// (^|[^A-Z0-9])(AKIA|ASIA)[A-Z0-9]{16}([^A-Z0-9]|$): a maximal [A-Z0-9] run of exactly 20
// characters starting with AKIA or ASIA.
bool awsKeyId(std::string_view v) {
  std::size_t i = 0;
  while (i < v.size()) {
    if (!isUpperAlnum(v[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < v.size() && isUpperAlnum(v[i])) ++i;
    const std::string_view run = v.substr(start, i - start);
    if (run.size() == 20 && (run.starts_with("AKIA") || run.starts_with("ASIA"))) return true;
  }
  return false;
}

// -----BEGIN [A-Z ]*PRIVATE KEY-----
bool privateKey(std::string_view v) {
  constexpr std::string_view kBegin = "-----BEGIN ";
  constexpr std::string_view kEnd = "PRIVATE KEY-----";
  auto filler = [](char c) { return (c >= 'A' && c <= 'Z') || c == ' '; };
  for (std::size_t at = v.find(kBegin); at != std::string_view::npos; at = v.find(kBegin, at + 1)) {
    // The filler may itself contain "PRIVATE KEY": try every start inside the [A-Z ]* run.
    for (std::size_t i = at + kBegin.size(); i <= v.size(); ++i) {
      if (v.substr(i, kEnd.size()) == kEnd) return true;
      if (i == v.size() || !filler(v[i])) break;
    }
  }
  return false;
}

}  // namespace

const char* valueLooksSecret(std::string_view value) {
  if (dsnWithPassword(value)) return "a connection string with credentials";
  if (kvPassword(value)) return "a connection string with a password";
  if (awsKeyId(value)) return "an AWS access key id";
  if (privateKey(value)) return "a private key";
  return nullptr;
}

}  // namespace mcpdb::config
