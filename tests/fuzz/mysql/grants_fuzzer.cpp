// libFuzzer target: the SHOW GRANTS reader and the least-privilege classifier on arbitrary lines.
// Input: lines; those before a line "--" are the account's, the rest are the grants of every role
// (so role graphs are cyclic and nested by construction; a role whose name starts with 'x' cannot
// be read, nor can any past the 8th distinct one). Invariants:
// - no crash, hang or out-of-bounds read;
// - nothing following IDENTIFIED reaches any output: a canary placed after an inserted
//   IDENTIFIED clause (quoted and bare) never appears in a message or fix;
// - every Violation has a fix, and every fix is REVOKE ...; an Ok finding stands alone;
//   messages carry no control characters;
// - a line that reads is printed back (accountSql, levelSql, privilegeSql) into a statement that
//   reads to the same value: the quoting of every fix round-trips.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engines/mysql/grants.hpp"

namespace {

namespace my = mcpdb::mysql;

constexpr std::string_view kCanary = "C4n4ryH4sh";

void require(bool condition) {
  if (!condition) __builtin_trap();
}

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The last offset of `line` that is outside any quote, by the reader's own quoting rules
// (backticks escape by doubling; '...' and "..." also by backslash), checked independently here.
std::size_t lastOutsideQuotes(std::string_view line) {
  std::size_t last = 0;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == 0) {
      last = i;
      if (c == '`' || c == '\'' || c == '"') quote = c;
      continue;
    }
    if (c == '\\' && quote != '`') {
      ++i;
    } else if (c == quote) {
      if (i + 1 < line.size() && line[i + 1] == quote) {
        ++i;
      } else {
        quote = 0;
      }
    }
  }
  return quote == 0 ? line.size() : last;
}

std::string withSecret(const std::string& line, std::string_view clause) {
  const std::size_t at = lastOutsideQuotes(line);
  return line.substr(0, at) + std::string(clause) + line.substr(at);
}

bool sameAccount(const my::Account& a, const my::Account& b) {
  return a == b;
}

bool samePrivileges(const std::vector<my::Privilege>& a, const std::vector<my::Privilege>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].columns != b[i].columns) return false;
  }
  return true;
}

// Prints a parsed line back the way the fixes print its parts, and reads it again.
void roundTrip(const my::GrantLine& g) {
  std::string text;
  switch (g.kind) {
    case my::LineKind::Privileges: {
      std::string list;
      for (const auto& p : g.privileges) list += (list.empty() ? "" : ", ") + my::privilegeSql(p);
      text = "GRANT " + list + " ON " + my::levelSql(g.level) + " TO " + my::accountSql(g.grantee);
      break;
    }
    case my::LineKind::Proxy:
      text = "GRANT PROXY ON " + my::accountSql(g.proxied) + " TO " + my::accountSql(g.grantee);
      break;
    case my::LineKind::Roles: {
      std::string list;
      for (const auto& r : g.roles) list += (list.empty() ? "" : ", ") + my::accountSql(r);
      text = "GRANT " + list + " TO " + my::accountSql(g.grantee);
      break;
    }
    default: return;
  }
  if (g.grant_option) text += " WITH GRANT OPTION";
  auto again = my::parseGrantLine(text);
  require(again.ok());
  require(again->kind == g.kind);
  require(sameAccount(again->grantee, g.grantee));
  require(again->grant_option == g.grant_option);
  if (g.kind == my::LineKind::Privileges) {
    require(samePrivileges(again->privileges, g.privileges));
    require(again->level == g.level);
  } else if (g.kind == my::LineKind::Proxy) {
    require(sameAccount(again->proxied, g.proxied));
  } else {
    require(again->roles.size() == g.roles.size());
    for (std::size_t i = 0; i < g.roles.size(); ++i) {
      // A bare role word is printed quoted; it reads back as the same name.
      require(again->roles[i].user == g.roles[i].user);
      require(again->roles[i].host == g.roles[i].host);
      require(again->roles[i].has_host == g.roles[i].has_host);
    }
  }
}

void checkFindings(const std::vector<my::GrantFinding>& findings, bool canary_allowed) {
  using Sev = my::GrantFinding::Severity;
  std::size_t oks = 0;
  for (const auto& f : findings) {
    require(!f.message.empty() && !f.check.empty());
    for (char c : f.message) require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
    if (!canary_allowed) {
      require(f.message.find(kCanary) == std::string::npos);
      require(f.fix.find(kCanary) == std::string::npos);
    }
    if (f.severity == Sev::Violation) require(!f.fix.empty());
    // Every fix, of a Violation or an Inconclusive, is a REVOKE (never a guess at other SQL).
    if (!f.fix.empty()) require(f.fix.rfind("REVOKE ", 0) == 0 && f.fix.back() == ';');
    if (f.severity == Sev::Ok) ++oks;
  }
  require(oks == 0 || findings.size() == 1);
}

std::vector<my::GrantFinding> classify(const std::vector<std::string>& mine,
                                       const std::vector<std::string>& roles, bool implicit) {
  my::GrantsInput in;
  in.lines = mine;
  // Every role gets the same lines; past 8 distinct roles the rest are unreadable, which keeps an
  // input's cost bounded (each distinct role is read once) without losing cycles or nesting.
  auto distinct = std::make_shared<std::set<std::string>>();
  in.role_grants = [&roles,
                    distinct](const my::Account& role) -> std::optional<std::vector<std::string>> {
    if (!role.user.empty() && role.user[0] == 'x') return std::nullopt;
    distinct->insert(my::accountSql(role));
    if (distinct->size() > 8) return std::nullopt;
    return roles;
  };
  in.routine_is_read_only = [](const my::Level& routine) { return routine.name.size() % 2 == 0; };
  if (implicit) in.implicit_roles = {my::Account{"PUBLIC", "", false, true}};
  return my::checkGrants(in);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Role walks multiply the work; keep single inputs small enough to run fast.
  if (size > 8192) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool canary_in_input = text.find(kCanary) != std::string_view::npos;
  std::vector<std::string> mine;
  std::vector<std::string> roles;
  bool in_roles = false;
  for (auto& line : splitLines(text)) {
    if (!in_roles && line == "--") {
      in_roles = true;
      continue;
    }
    auto g = my::parseGrantLine(line);
    if (g.ok()) roundTrip(*g);
    (in_roles ? roles : mine).push_back(std::move(line));
  }
  checkFindings(classify(mine, roles, size % 2 == 1), canary_in_input);

  // The same lines, each with a secret authentication clause where MariaDB prints one.
  const std::string secret = std::string(kCanary);
  for (const std::string& clause :
       {" IDENTIFIED BY PASSWORD '*" + secret + "' ",
        " IDENTIFIED VIA ed25519 USING '" + secret + "' OR unix_socket ",
        " identified by " + secret + " "}) {
    std::vector<std::string> mine2;
    std::vector<std::string> roles2;
    for (const auto& l : mine) mine2.push_back(withSecret(l, clause));
    for (const auto& l : roles) roles2.push_back(withSecret(l, clause));
    checkFindings(classify(mine2, roles2, size % 2 == 1), canary_in_input);
  }
  return 0;
}
