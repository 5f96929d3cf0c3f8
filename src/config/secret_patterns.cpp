#include "config/secret_patterns.hpp"

#include <cmath>

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

bool isAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isAlnum(char c) {
  return isAlpha(c) || isDigit(c);
}

// Anywhere in the text: [a-z][a-z0-9+.-]*://[^/@\s:]+:[^/@\s]+@ , case-insensitive (a URL whose
// userinfo holds a password: postgres://u:pw@h, mongodb+srv://u:pw@h, mysql://u:pw@h ...). Each
// "://" is tried once; the userinfo classes exclude '/', so the forward scans from two "://" never
// overlap and the whole search is linear.
bool dsnWithPassword(std::string_view v) {
  for (std::size_t sep = v.find("://"); sep != std::string_view::npos;
       sep = v.find("://", sep + 1)) {
    // The scheme: a letter, then letters, digits, + . - up to the separator.
    std::size_t b = sep;
    while (b > 0 && (isAlnum(v[b - 1]) || v[b - 1] == '+' || v[b - 1] == '.' || v[b - 1] == '-'))
      --b;
    while (b < sep && !isAlpha(v[b])) ++b;  // [a-z] first: skip a leading digit or symbol
    if (b == sep) continue;
    std::size_t i = sep + 3;
    const std::size_t user = i;
    while (i < v.size() && v[i] != '/' && v[i] != '@' && v[i] != ':' && !isSpace(v[i])) ++i;
    if (i == user || i == v.size() || v[i] != ':') continue;
    const std::size_t pass = ++i;
    while (i < v.size() && v[i] != '/' && v[i] != '@' && !isSpace(v[i])) ++i;
    if (i > pass && i < v.size() && v[i] == '@') return true;
  }
  return false;
}

// The names that make `name=value`, `name: value` or `"name": "value"` a credential, matched as
// the end of the name (so db_password, PGPASSWORD, aws_secret_access_key, client_secret and
// auth_token count), case-insensitive.
constexpr std::string_view kSecretNames[] = {
    "password", "passwd",  "pwd",        "secret",    "token",       "api_key",
    "apikey",   "api-key", "access_key", "accesskey", "private_key", "secret_key"};

bool isNameChar(char c) {
  return isAlnum(c) || c == '_' || c == '-' || c == '.';
}

// Does the name v[begin, end) end with a secret name?
bool endsWithSecretName(std::string_view v, std::size_t begin, std::size_t end) {
  for (std::string_view w : kSecretNames) {
    if (end - begin >= w.size() && hasAt(v, end - w.size(), w)) return true;
  }
  return false;
}

// A value that names where a secret comes from rather than holding it: an environment or
// template reference ($PGPASSWORD, ${PGPASSWORD}, {{token}}, <password>, %s), a SQL parameter
// ($1, :name, ?), or a mask (****, xxxx, ...).
bool isPlaceholder(std::string_view value) {
  if (value.empty()) return true;
  const char c = value[0];
  if (c == '$' || c == '<' || c == '{' || c == '%' || c == ':' || c == '?' || c == '[') return true;
  if (value.size() < 3) return false;
  bool same = true;
  for (char x : value) same = same && lower(x) == lower(c);
  return same;  // "****", "xxxx", "..."
}

// A SQL expression rather than a literal: a (qualified) column or a function call, as in
// `WHERE password = crypt($1, password)` or `u.token = t.token`.
bool isSqlExpression(std::string_view v, std::size_t begin, std::size_t end) {
  bool dotted = false;
  for (std::size_t i = begin; i < end; ++i) {
    if (v[i] == '.') {
      dotted = true;
    } else if (!isAlnum(v[i]) && v[i] != '_') {
      return false;
    }
  }
  std::size_t after = end;
  while (after < v.size() && isSpace(v[after])) ++after;
  return dotted || (after < v.size() && v[after] == '(');
}

// 512, -1.5: a count or a setting, not a credential (unless written tight, as in PIN=123456).
bool isNumber(std::string_view value) {
  for (char c : value) {
    if (!isDigit(c) && c != '.' && c != '-' && c != '+') return false;
  }
  return true;
}

// Looks like a password rather than a word of prose: it holds a digit or a symbol.
bool notAPlainWord(std::string_view value) {
  for (char c : value) {
    if (!isAlpha(c)) return true;
  }
  return false;
}

// name=value, name = value, name: value, "name": "value", 'name'='value' where the name ends with
// one of kSecretNames. The value is flagged unless it is a placeholder. Rules against false
// positives on prose and SQL: after `:` an unquoted value must hold a digit or a symbol
// ("password: never logged" is prose, "password: hunter2" is not); after a spaced `=` an unquoted
// column or function call is SQL (`password = crypt($1, password)`). A quoted value is a literal:
// `api_key = 'sk-...'` in a statement is flagged. Linear: each position starts at most one name,
// and a value is read once, from the separator.
bool assignedSecret(std::string_view v) {
  std::size_t i = 0;
  while (i < v.size()) {
    if (!isNameChar(v[i])) {
      ++i;
      continue;
    }
    const std::size_t begin = i;
    while (i < v.size() && isNameChar(v[i])) ++i;
    const std::size_t end = i;
    if (!endsWithSecretName(v, begin, end)) continue;
    // From here every path resumes the scan at `i = j` (never behind it): each byte is read a
    // bounded number of times.
    std::size_t j = end;
    if (j < v.size() && (v[j] == '"' || v[j] == '\'')) ++j;  // "name": ...
    const bool tight_before = j == end && j < v.size() && v[j] == '=';
    while (j < v.size() && (v[j] == ' ' || v[j] == '\t')) ++j;
    if (j >= v.size() || (v[j] != '=' && v[j] != ':')) {
      i = j;
      continue;
    }
    const char sep = v[j++];
    i = j;
    if (sep == ':' && j < v.size() && v[j] == '/') continue;  // a URL scheme such as token://
    if (sep == '=' && j < v.size() && v[j] == '=') continue;  // a comparison ==
    const bool tight = tight_before && j < v.size() && !isSpace(v[j]);
    while (j < v.size() && (v[j] == ' ' || v[j] == '\t')) ++j;
    i = j;
    if (j >= v.size()) continue;
    if (v[j] == '"' || v[j] == '\'') {
      const char quote = v[j++];
      const std::size_t vb = j;
      while (j < v.size() && v[j] != quote && v[j] != '\n') ++j;
      if (!isPlaceholder(v.substr(vb, j - vb))) return true;
      i = j;
      continue;
    }
    const std::size_t vb = j;
    while (j < v.size() && !isSpace(v[j]) && v[j] != ',' && v[j] != ';' && v[j] != '&' &&
           v[j] != '(' && v[j] != ')' && v[j] != '"' && v[j] != '\'') {
      ++j;
    }
    i = j;
    std::string_view value = v.substr(vb, j - vb);
    // Sentence punctuation ends the value: "password: never." is prose.
    while (!value.empty() && (value.back() == '.' || value.back() == '!' || value.back() == '?' ||
                              value.back() == ':')) {
      value.remove_suffix(1);
    }
    if (isPlaceholder(value)) continue;
    if (!tight) {
      if (isNumber(value)) continue;                                          // "max token: 512"
      if (sep == ':' && !notAPlainWord(value)) continue;                      // prose
      if (sep == '=' && isSqlExpression(v, vb, vb + value.size())) continue;  // SQL
    }
    return true;
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

// An AWS secret access key: a maximal run of exactly 40 [A-Za-z0-9/+] characters with a lower-case
// letter, an upper-case letter and a digit, in a text that also says "aws" or "secret" (a 40-hex
// SHA-1 such as a git commit has no upper case, so it is not one).
bool awsSecretKey(std::string_view v) {
  bool context = false;
  for (std::size_t i = 0; i + 3 <= v.size() && !context; ++i) {
    context = hasAt(v, i, "aws") || hasAt(v, i, "secret");
  }
  if (!context) return false;
  auto keyChar = [](char c) { return isAlnum(c) || c == '/' || c == '+'; };
  std::size_t i = 0;
  while (i < v.size()) {
    if (!keyChar(v[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    bool lo = false, up = false, dig = false;
    for (; i < v.size() && keyChar(v[i]); ++i) {
      lo = lo || (v[i] >= 'a' && v[i] <= 'z');
      up = up || (v[i] >= 'A' && v[i] <= 'Z');
      dig = dig || isDigit(v[i]);
    }
    if (i - start == 40 && lo && up && dig) return true;
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

// A high-entropy token (an API key, a bearer token, a JWT, a generated password): a maximal run of
// at least kMinTokenLength characters of [A-Za-z0-9+/=_-] holding lower case, upper case and
// digits, not made of words (wordy), whose characters carry at least kMinTokenEntropy bits each
// (Shannon, over the run).
// Exempt by shape: hex digests (SHA-256 in key_sha256, SHA-1, MD5) and UUIDs lack one case;
// identifiers in snake_case or camelCase lack digits or entropy; prose and SQL break into short
// runs at spaces and punctuation.
constexpr std::size_t kMinTokenLength = 32;
constexpr double kMinTokenEntropy = 4.0;

bool tokenChar(char c) {
  return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-';
}

bool highEntropy(std::string_view run) {
  std::size_t counts[256] = {};
  for (char c : run) ++counts[static_cast<unsigned char>(c)];
  double bits = 0;
  const auto n = static_cast<double>(run.size());
  for (std::size_t k : counts) {
    if (k == 0) continue;
    const double p = static_cast<double>(k) / n;
    bits -= p * std::log2(p);
  }
  return bits >= kMinTokenEntropy;
}

// Identifiers made of words (CamelCase, snake_case) keep most of their letters in lower-case runs
// of three or more ("Documents", "published"): at least 60 % of them here. Random text rarely does
// (0.2 % of random 32-character base62 tokens; 0.01 % of generated CamelCase names fall below).
bool wordy(std::string_view run) {
  std::size_t letters = 0, in_words = 0, lower_run = 0;
  auto endRun = [&] {
    if (lower_run >= 3) in_words += lower_run;
    lower_run = 0;
  };
  for (char c : run) {
    if (c >= 'a' && c <= 'z') {
      ++letters;
      ++lower_run;
      continue;
    }
    endRun();
    if (isAlpha(c)) ++letters;
  }
  endRun();
  return in_words * 5 >= letters * 3;
}

bool highEntropyToken(std::string_view v) {
  std::size_t i = 0;
  while (i < v.size()) {
    if (!tokenChar(v[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    bool lo = false, up = false, dig = false;
    for (; i < v.size() && tokenChar(v[i]); ++i) {
      lo = lo || (v[i] >= 'a' && v[i] <= 'z');
      up = up || (v[i] >= 'A' && v[i] <= 'Z');
      dig = dig || isDigit(v[i]);
    }
    const std::string_view run = v.substr(start, i - start);
    if (run.size() >= kMinTokenLength && lo && up && dig && !wordy(run) && highEntropy(run)) {
      return true;
    }
  }
  return false;
}

}  // namespace

const char* valueLooksSecret(std::string_view value) {
  if (dsnWithPassword(value)) return "a connection string with credentials";
  if (assignedSecret(value)) return "a password, token or key assignment";
  if (awsKeyId(value)) return "an AWS access key id";
  if (awsSecretKey(value)) return "an AWS secret access key";
  if (privateKey(value)) return "a private key";
  if (highEntropyToken(value)) return "a high-entropy token (an API key or password)";
  return nullptr;
}

}  // namespace mcpdb::config
