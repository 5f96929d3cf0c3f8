// A small tokenizer and recursive reader for the handful of statement shapes SHOW GRANTS prints.
// It is strict: anything it does not recognise is an error (the caller reports the line as
// Inconclusive), because a misread WITH GRANT OPTION or privilege list would be a false Ok.

#include "engines/mysql/grant_line.hpp"

#include <cstddef>
#include <optional>

namespace mcpdb::mysql {
namespace {

// SHOW GRANTS lines are short; a megabyte is far beyond any real column list and bounds the work.
constexpr std::size_t kMaxLineBytes = 1 << 20;

enum class Tok { Word, Quoted, Punct };

struct Token {
  Tok kind;
  std::string text;  // Word: as written; Quoted: the unquoted value; Punct: the character
};

bool isWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

bool isSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

Error bad(std::string message) {
  return makeError(Code::InvalidArgument, std::move(message));
}

// The value of a backslash escape in a MySQL string literal; \% and \_ keep their backslash.
std::string unescape(char c) {
  switch (c) {
    case '0': return std::string(1, '\0');
    case 'b': return "\b";
    case 'n': return "\n";
    case 'r': return "\r";
    case 't': return "\t";
    case 'Z': return "\x1a";
    case '%': return "\\%";
    case '_': return "\\_";
    default: return std::string(1, c);
  }
}

// A quoted token starting at s[i] (the quote). Backticks escape only by doubling; '...' and "..."
// also take backslash escapes.
Result<Token> readQuoted(std::string_view s, std::size_t& i) {
  const char q = s[i++];
  std::string value;
  while (i < s.size()) {
    const char c = s[i++];
    if (c == q) {
      if (i < s.size() && s[i] == q) {
        value += q;
        ++i;
        continue;
      }
      return Token{Tok::Quoted, std::move(value)};
    }
    if (c == '\\' && q != '`') {
      if (i >= s.size()) break;
      value += unescape(s[i++]);
      continue;
    }
    value += c;
  }
  return bad("a quoted name or string is not closed");
}

Result<std::vector<Token>> tokenize(std::string_view s) {
  if (s.size() > kMaxLineBytes) return bad("the line is longer than any SHOW GRANTS line");
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (isSpace(c)) {
      ++i;
    } else if (c == '`' || c == '\'' || c == '"') {
      auto t = readQuoted(s, i);
      if (!t) return t.error();
      out.push_back(std::move(*t));
    } else if (isWordByte(c)) {
      const std::size_t start = i;
      while (i < s.size() && isWordByte(static_cast<unsigned char>(s[i]))) ++i;
      out.push_back({Tok::Word, std::string(s.substr(start, i - start))});
    } else {
      out.push_back({Tok::Punct, std::string(1, s[i++])});
    }
  }
  return out;
}

// Walks the tokens. `limit_` hides everything from the first bare IDENTIFIED word until the
// grantee has been read, so no privilege, name or error can be made of the secret tail.
class Reader {
 public:
  explicit Reader(std::vector<Token> tokens) : tokens_(std::move(tokens)) {
    limit_ = tokens_.size();
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].kind == Tok::Word && upper(tokens_[i].text) == "IDENTIFIED") {
        limit_ = i;
        break;
      }
    }
  }

  Result<GrantLine> line() {
    GrantLine g;
    Status st = Status();
    if (acceptWord("GRANT")) {
      st = grant(g);
    } else if (acceptWord("REVOKE")) {
      st = revoke(g);
    } else if (acceptWord("SET")) {
      st = defaultRole(g);
    } else {
      return bad("not a GRANT, REVOKE or SET DEFAULT ROLE line");
    }
    if (!st) return st.error();
    return g;
  }

 private:
  bool atEnd() const { return pos_ >= limit_; }
  const Token* peek(std::size_t ahead = 0) const {
    return pos_ + ahead < limit_ ? &tokens_[pos_ + ahead] : nullptr;
  }
  bool isWord(const Token* t, std::string_view w) const {
    return t != nullptr && t->kind == Tok::Word && upper(t->text) == w;
  }
  bool isPunct(const Token* t, char c) const {
    return t != nullptr && t->kind == Tok::Punct && t->text.size() == 1 && t->text[0] == c;
  }
  bool acceptWord(std::string_view w) {
    if (!isWord(peek(), w)) return false;
    ++pos_;
    return true;
  }
  bool acceptPunct(char c) {
    if (!isPunct(peek(), c)) return false;
    ++pos_;
    return true;
  }

  // A name: a quoted token or a bare word.
  std::optional<std::string> name() {
    const Token* t = peek();
    if (t == nullptr || t->kind == Tok::Punct) return std::nullopt;
    ++pos_;
    return t->text;
  }

  // user[@host], a role, or PUBLIC (bare).
  Result<Account> account() {
    Account a;
    const Token* t = peek();
    if (isWord(t, "PUBLIC")) {
      ++pos_;
      a.is_public = true;
      a.user = "PUBLIC";
      return a;
    }
    auto user = name();
    if (!user) return bad("expected an account name");
    a.user = std::move(*user);
    if (acceptPunct('@')) {
      auto host = name();
      if (!host) return bad("expected a host after @");
      a.host = std::move(*host);
      a.has_host = true;
    }
    return a;
  }

  // One item of a GRANT list: a privilege (words, maybe a column list) or a role (quoted name or
  // word followed by @). `raw` keeps a bare word as written, in case it turns out to be a role.
  struct Item {
    bool role = false;
    Account account;
    Privilege privilege;
    std::string raw;
  };

  Result<std::vector<Item>> items() {
    std::vector<Item> out;
    do {
      Item item;
      const Token* t = peek();
      if (t == nullptr) return bad("the privilege list ends early");
      if (t->kind == Tok::Quoted || (t->kind == Tok::Word && isPunct(peek(1), '@'))) {
        auto a = account();
        if (!a) return a.error();
        item.role = true;
        item.account = std::move(*a);
      } else if (t->kind == Tok::Word) {
        item.raw = t->text;
        while (peek() != nullptr && peek()->kind == Tok::Word && !isWord(peek(), "ON") &&
               !isWord(peek(), "TO") && !isWord(peek(), "FROM")) {
          if (!item.privilege.name.empty()) item.privilege.name += ' ';
          item.privilege.name += upper(peek()->text);
          ++pos_;
        }
        if (item.privilege.name.empty()) return bad("expected a privilege");
        if (acceptPunct('(')) {
          auto cols = columns();
          if (!cols) return cols.error();
          item.privilege.columns = std::move(*cols);
        }
      } else {
        return bad("expected a privilege or a role");
      }
      out.push_back(std::move(item));
    } while (acceptPunct(','));
    return out;
  }

  Result<std::vector<std::string>> columns() {
    std::vector<std::string> out;
    do {
      auto n = name();
      if (!n) return bad("expected a column name");
      out.push_back(std::move(*n));
    } while (acceptPunct(','));
    if (!acceptPunct(')')) return bad("a column list is not closed");
    return out;
  }

  Result<Level> level() {
    Level l;
    if (acceptWord("TABLE")) {
      l.kind = ObjectKind::Table;
    } else if (acceptWord("PROCEDURE")) {
      l.kind = ObjectKind::Procedure;
    } else if (acceptWord("FUNCTION")) {
      l.kind = ObjectKind::Function;
    } else if (acceptWord("PACKAGE")) {
      l.kind = acceptWord("BODY") ? ObjectKind::PackageBody : ObjectKind::Package;
    }
    const bool routine = l.kind != ObjectKind::Global && l.kind != ObjectKind::Table;
    if (acceptPunct('*')) {
      // A bare * means "the current database", which SHOW GRANTS never prints.
      if (routine || !acceptPunct('.') || !acceptPunct('*')) return bad("expected *.*");
      if (l.kind == ObjectKind::Table) return bad("TABLE *.* is not a grant level");
      l.kind = ObjectKind::Global;
      return l;
    }
    auto db = name();
    if (!db) return bad("expected a database name");
    if (!acceptPunct('.')) return bad("expected a database-qualified level");
    l.db = std::move(*db);
    if (acceptPunct('*')) {
      if (routine || l.kind == ObjectKind::Table) return bad("expected an object name");
      l.kind = ObjectKind::Database;
      return l;
    }
    auto object = name();
    if (!object) return bad("expected a table or routine name");
    l.name = std::move(*object);
    if (!routine) l.kind = ObjectKind::Table;
    return l;
  }

  Status grant(GrantLine& g) {
    auto list = items();
    if (!list) return list.error();
    if (acceptWord("TO")) {
      g.kind = LineKind::Roles;
      for (auto& item : *list) {
        if (item.role) {
          g.roles.push_back(std::move(item.account));
        } else if (!item.privilege.columns.empty() ||
                   item.privilege.name.find(' ') != std::string::npos) {
          return bad("a privilege list without ON");
        } else {
          g.roles.push_back(Account{item.raw, {}, false, false});
        }
      }
      return grantee(g);
    }
    if (!acceptWord("ON")) return bad("expected ON or TO after the privilege list");
    for (auto& item : *list) {
      if (item.role) return bad("a role in a privilege list");
      g.privileges.push_back(std::move(item.privilege));
    }
    if (g.privileges.size() == 1 && g.privileges[0].name == "PROXY" &&
        g.privileges[0].columns.empty()) {
      g.kind = LineKind::Proxy;
      auto proxied = account();
      if (!proxied) return proxied.error();
      g.proxied = std::move(*proxied);
    } else {
      auto l = level();
      if (!l) return l.error();
      g.level = std::move(*l);
    }
    if (!acceptWord("TO")) return bad("expected TO after the grant level");
    return grantee(g);
  }

  Status revoke(GrantLine& g) {
    g.kind = LineKind::PartialRevoke;
    auto list = items();
    if (!list) return list.error();
    if (!acceptWord("ON")) return bad("expected ON in a REVOKE line");
    for (auto& item : *list) {
      if (item.role) return bad("a role in a REVOKE line");
      g.privileges.push_back(std::move(item.privilege));
    }
    auto l = level();
    if (!l) return l.error();
    g.level = std::move(*l);
    if (!acceptWord("FROM")) return bad("expected FROM in a REVOKE line");
    return grantee(g);
  }

  Status defaultRole(GrantLine& g) {
    g.kind = LineKind::DefaultRole;
    if (!acceptWord("DEFAULT") || !acceptWord("ROLE")) return bad("expected SET DEFAULT ROLE");
    if (!acceptWord("NONE") && !acceptWord("ALL")) {
      do {
        auto role = account();
        if (!role) return role.error();
        g.roles.push_back(std::move(*role));
      } while (acceptPunct(','));
    }
    if (!acceptWord("FOR") && !acceptWord("TO")) return bad("expected FOR in SET DEFAULT ROLE");
    return grantee(g);
  }

  // The grantee, then the clauses that may follow it (the secret tail becomes visible here).
  Status grantee(GrantLine& g) {
    auto who = account();
    if (!who) return who.error();
    g.grantee = std::move(*who);
    limit_ = tokens_.size();
    return tail(g);
  }

  // [IDENTIFIED ...] [REQUIRE ...] [WITH option...] [;]
  Status tail(GrantLine& g) {
    while (!atEnd()) {
      if (acceptWord("IDENTIFIED")) {
        // Skipped unread: the authentication clause carries the password hash.
        while (!atEnd() && !isWord(peek(), "REQUIRE") && !isWord(peek(), "WITH")) ++pos_;
      } else if (acceptWord("REQUIRE")) {
        Status st = require();
        if (!st) return st;
      } else if (acceptWord("WITH")) {
        Status st = withOptions(g);
        if (!st) return st;
      } else if (acceptPunct(';')) {
        if (!atEnd()) return bad("words after the end of the statement");
      } else {
        return bad("unexpected words after the grantee");
      }
    }
    return {};
  }

  // REQUIRE NONE | SSL | X509 | {ISSUER 'x' | SUBJECT 'x' | CIPHER 'x'} [AND] ...
  Status require() {
    if (acceptWord("NONE") || acceptWord("SSL") || acceptWord("X509")) return {};
    bool any = false;
    while (acceptWord("ISSUER") || acceptWord("SUBJECT") || acceptWord("CIPHER")) {
      const Token* t = peek();
      if (t == nullptr || t->kind != Tok::Quoted) return bad("expected a quoted REQUIRE value");
      ++pos_;
      any = true;
      acceptWord("AND");
    }
    return any ? Status() : bad("an unknown REQUIRE clause");
  }

  Status withOptions(GrantLine& g) {
    bool any = false;
    for (;;) {
      if (acceptWord("GRANT")) {
        if (!acceptWord("OPTION")) return bad("expected GRANT OPTION");
        g.grant_option = true;
      } else if (acceptWord("ADMIN")) {
        if (!acceptWord("OPTION")) return bad("expected ADMIN OPTION");
        g.admin_option = true;
      } else if (acceptWord("MAX_QUERIES_PER_HOUR") || acceptWord("MAX_UPDATES_PER_HOUR") ||
                 acceptWord("MAX_CONNECTIONS_PER_HOUR") || acceptWord("MAX_USER_CONNECTIONS") ||
                 acceptWord("MAX_STATEMENT_TIME")) {
        Status st = number();
        if (!st) return st;
      } else {
        break;
      }
      any = true;
    }
    return any ? Status() : bad("an unknown WITH option");
  }

  // A resource limit: digits, maybe with a fraction (MAX_STATEMENT_TIME 0.5).
  Status number() {
    auto digits = [](const Token* t) {
      if (t == nullptr || t->kind != Tok::Word || t->text.empty()) return false;
      for (char c : t->text) {
        if (c < '0' || c > '9') return false;
      }
      return true;
    };
    if (!digits(peek())) return bad("expected a number");
    ++pos_;
    if (isPunct(peek(), '.') && digits(peek(1))) pos_ += 2;
    return {};
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  std::size_t limit_ = 0;
};

}  // namespace

Result<GrantLine> parseGrantLine(std::string_view line) {
  auto tokens = tokenize(line);
  if (!tokens) return tokens.error();
  Reader reader(std::move(*tokens));
  return reader.line();
}

std::string accountSql(const Account& account) {
  if (account.is_public) return "PUBLIC";
  auto part = [](const std::string& s) { return s.empty() ? std::string("''") : quoteName(s); };
  std::string out = part(account.user);
  if (account.has_host) out += "@" + part(account.host);
  return out;
}

std::string levelSql(const Level& level) {
  std::string qualified = quoteName(level.db) + "." + quoteName(level.name);
  switch (level.kind) {
    case ObjectKind::Global: return "*.*";
    case ObjectKind::Database: return quoteName(level.db) + ".*";
    case ObjectKind::Table: return qualified;
    case ObjectKind::Procedure: return "PROCEDURE " + qualified;
    case ObjectKind::Function: return "FUNCTION " + qualified;
    case ObjectKind::Package: return "PACKAGE " + qualified;
    case ObjectKind::PackageBody: return "PACKAGE BODY " + qualified;
  }
  return "*.*";
}

std::string privilegeSql(const Privilege& privilege) {
  if (privilege.columns.empty()) return privilege.name;
  std::string out = privilege.name + " (";
  for (std::size_t i = 0; i < privilege.columns.size(); ++i) {
    out += (i == 0 ? "" : ", ") + quoteName(privilege.columns[i]);
  }
  return out + ")";
}

}  // namespace mcpdb::mysql
