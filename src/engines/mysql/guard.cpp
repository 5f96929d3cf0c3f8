// One file, over 600 lines: the MySQL-dialect guard is one walk over one token stream, and its
// rules (statement shape, denylisted functions, comments, hints, quoting) read each other's
// state; split, each rule would need the walker's internals in a header. The lexer it walks is
// lexer.cpp; the names it collects are judged elsewhere (names.*, routines.*).
#include "engines/mysql/guard.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

#include "common/qualified_name.hpp"
#include "common/utf8.hpp"
#include "engines/mysql/lexer.hpp"

namespace mcpdb::mysql::guard {
namespace {

// ---------------------------------------------------------------------------------------------
// Data: the denylist, the built-in read functions, and the keywords that may precede '('
// without being a call. Kept together so that a review reads one list at a time.

// Each entry says in a few words why a read-only query must never call it.
constexpr DeniedFunction kDenied[] = {
    {"load_file", false, "it reads a file on the database server"},
    {"sleep", false, "it stalls the connection"},
    {"benchmark", false, "it burns server CPU for as long as asked"},
    {"get_lock", false, "it takes a named lock the session keeps between calls"},
    {"release_lock", false, "it changes the session's named locks"},
    {"release_all_locks", false, "it changes the session's named locks"},
    {"is_free_lock", false, "it probes other sessions' named locks"},
    {"is_used_lock", false, "it probes other sessions' named locks"},
    {"master_pos_wait", false, "it waits on replication"},
    {"source_pos_wait", false, "it waits on replication"},
    {"master_gtid_wait", false, "it waits on replication"},
    {"wait_for_executed_gtid_set", false, "it waits on replication"},
    {"wait_until_sql_thread_after_gtids", false, "it waits on replication"},
    {"name_const", false, "it exists for replicating stored routines; no query needs it"},
    // LAST_INSERT_ID() without an argument is a harmless read; the guard refuses only the
    // one-argument form, which sets the session's value (see callFinding).
    {"last_insert_id", false, "with an argument it sets the session's LAST_INSERT_ID"},
    {"nextval", false, "it advances a sequence (a write)"},
    {"setval", false, "it sets a sequence (a write)"},
    {"lastval", false, "it reads sequence state left in the session by earlier calls"},
    // Loadable functions (plugins, components) that change server state; they are not built-in
    // and so would be listed as unknown anyway, but they must never be allowlisted either.
    {"sys_exec", false, "a known shell-command UDF (lib_mysqludf_sys)"},
    {"sys_eval", false, "a known shell-command UDF (lib_mysqludf_sys)"},
    {"version_tokens_", true, "version-token functions change server state"},
    {"keyring_key_", true, "keyring functions store, generate or remove keys"},
    {"audit_log_", true, "audit-log functions change the audit configuration"},
    {"service_get_", true, "locking-service functions take named locks"},
    {"service_release_", true, "locking-service functions release named locks"},
    {"gen_dictionary_", true, "data-masking dictionary functions load and drop dictionaries"},
    {"load_rewrite_rules", false, "it reloads the query rewriter's rules"},
    {"flush_rewrite_rules", false, "it reloads the query rewriter's rules"},
    {"mysql_firewall_", true, "firewall functions change the firewall's state"},
    {"set_firewall_", true, "firewall functions change the firewall's state"},
    {"group_replication_", true, "group-replication functions change the replication setup"},
    {"asynchronous_connection_failover_", true, "failover functions change replication sources"},
};

// Built-in functions that only compute or read. A name missing here is not refused: it is
// reported in called_functions for the engine to vet. An unqualified call to a name that is not
// built into the server reaches a loadable function or a stored function of the current
// database, so a name built into only one of the two servers counts as built-in only when the
// dialect says which server it is.
const std::unordered_set<std::string_view>& builtinsOfBoth() {
  // clang-format off
  static const std::unordered_set<std::string_view> kBuiltins = {
      // aggregate
      "avg", "bit_and", "bit_or", "bit_xor", "count", "group_concat", "json_arrayagg",
      "json_objectagg", "max", "min", "std", "stddev", "stddev_pop", "stddev_samp", "sum",
      "var_pop", "var_samp", "variance",
      // window
      "cume_dist", "dense_rank", "first_value", "lag", "last_value", "lead", "nth_value", "ntile",
      "percent_rank", "rank", "row_number",
      // string
      "ascii", "bin", "bit_length", "char", "char_length", "character_length", "concat",
      "concat_ws", "elt", "export_set", "field", "find_in_set", "format", "from_base64", "hex",
      "insert", "instr", "lcase", "left", "length", "locate", "lower", "lpad", "ltrim",
      "make_set", "mid", "oct", "octet_length", "ord", "position", "quote", "regexp_instr",
      "regexp_replace", "regexp_substr", "repeat", "replace", "reverse", "right", "rpad",
      "rtrim", "soundex", "space", "strcmp", "substr", "substring", "substring_index",
      "to_base64", "trim", "ucase", "unhex", "upper", "weight_string", "match", "against",
      "extractvalue", "updatexml",
      // numeric and comparison
      "abs", "acos", "asin", "atan", "atan2", "ceil", "ceiling", "conv", "cos", "cot", "crc32",
      "degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power",
      "radians", "rand", "round", "sign", "sin", "sqrt", "tan", "truncate", "greatest", "least",
      "coalesce", "ifnull", "nullif", "if", "isnull", "interval", "bit_count",
      // date and time
      "adddate", "addtime", "convert_tz", "curdate", "current_date", "current_time",
      "current_timestamp", "curtime", "date", "date_add", "date_format", "date_sub", "datediff",
      "day", "dayname", "dayofmonth", "dayofweek", "dayofyear", "extract", "from_days",
      "from_unixtime", "get_format", "hour", "last_day", "localtime", "localtimestamp",
      "makedate", "maketime", "microsecond", "minute", "month", "monthname", "now",
      "period_add", "period_diff", "quarter", "sec_to_time", "second", "str_to_date", "subdate",
      "subtime", "sysdate", "time", "time_format", "time_to_sec", "timediff", "timestamp",
      "timestampadd", "timestampdiff", "to_days", "to_seconds", "unix_timestamp", "utc_date",
      "utc_time", "utc_timestamp", "week", "weekday", "weekofyear", "year", "yearweek",
      // cast and character sets
      "cast", "convert", "charset", "collation", "coercibility",
      // JSON
      "json_array", "json_array_append", "json_array_insert", "json_contains",
      "json_contains_path", "json_depth", "json_extract", "json_insert", "json_keys",
      "json_length", "json_merge", "json_merge_patch", "json_merge_preserve", "json_object",
      "json_quote", "json_remove", "json_replace", "json_search", "json_set", "json_table",
      "json_type", "json_unquote", "json_valid", "json_value", "json_overlaps",
      // identifiers, network, hashing
      "uuid", "uuid_short", "inet_aton", "inet_ntoa", "inet6_aton", "inet6_ntoa", "is_ipv4",
      "is_ipv6", "is_ipv4_compat", "is_ipv4_mapped", "md5", "sha", "sha1", "sha2", "compress",
      "uncompress", "uncompressed_length",
      // session information (reads)
      "database", "schema", "user", "current_user", "session_user", "system_user", "version",
      "connection_id", "found_rows", "row_count", "last_insert_id", "current_role", "default",
      // spatial (a common subset)
      "point", "st_astext", "st_aswkt", "st_geomfromtext", "st_geomfromwkb", "st_distance",
      "st_contains", "st_within", "st_intersects", "st_x", "st_y", "st_srid", "st_buffer",
      "st_area", "st_length", "st_asgeojson", "st_geomfromgeojson",
  };
  // clang-format on
  return kBuiltins;
}

const std::unordered_set<std::string_view>& builtinsOfMysqlOnly() {
  // clang-format off
  static const std::unordered_set<std::string_view> kBuiltins = {
      "any_value", "grouping", "regexp_like", "json_schema_valid",
      "json_schema_validation_report", "json_storage_free", "json_storage_size", "json_pretty",
      "uuid_to_bin", "bin_to_uuid", "is_uuid", "random_bytes", "st_distance_sphere",
  };
  // clang-format on
  return kBuiltins;
}

const std::unordered_set<std::string_view>& builtinsOfMariadbOnly() {
  // clang-format off
  static const std::unordered_set<std::string_view> kBuiltins = {
      "median", "percentile_cont", "percentile_disc", "chr", "sformat", "natural_sort_key",
      "nvl", "nvl2", "add_months", "json_compact", "json_detailed", "json_loose",
      "json_exists", "json_query", "json_equals", "json_normalize",
  };
  // clang-format on
  return kBuiltins;
}

// Built-ins that MySQL reads as a plain name when a space follows them and IGNORE_SPACE is off
// ("Function Name Parsing and Resolution"): `COUNT (x)` may then reach a stored function named
// count (checked by hand on MariaDB 10.11: `SELECT COUNT (1)` looks for FUNCTION db.COUNT).
// Whatever the session's sql_mode, such a spaced call is reported, not trusted.
const std::unordered_set<std::string_view>& spaceSensitiveBuiltins() {
  // clang-format off
  static const std::unordered_set<std::string_view> kNames = {
      "adddate", "bit_and", "bit_or", "bit_xor", "cast", "count", "curdate", "curtime",
      "date_add", "date_sub", "extract", "group_concat", "max", "mid", "min", "now",
      "position", "session_user", "std", "stddev", "stddev_pop", "stddev_samp", "subdate",
      "substr", "substring", "sum", "sysdate", "system_user", "trim", "variance", "var_pop",
      "var_samp",
  };
  // clang-format on
  return kNames;
}

// Reserved words (in both servers) that may stand right before '(' without calling anything:
// clause and operator words, the row constructor, and reserved type names (CAST(x AS
// DECIMAL(10, 2)), JSON_TABLE columns). Non-reserved words are never on this list, since an
// unqualified call to them reaches a stored function of that name; a few are judged by their
// context instead (notCallInContext).
const std::unordered_set<std::string_view>& notCallKeywords() {
  // clang-format off
  static const std::unordered_set<std::string_view> kWords = {
      "select", "from", "join", "on", "using", "as", "where", "and", "or", "not", "xor", "when",
      "then", "else", "case", "by", "having", "union", "distinct", "distinctrow", "all", "in",
      "exists", "partition", "index", "key", "limit", "return", "div", "like", "regexp",
      "rlike", "between", "is", "with", "order", "group", "binary", "collate", "dual",
      "straight_join", "row", "asc", "desc", "primary", "varchar", "varbinary", "decimal", "dec",
      "numeric", "float", "double", "real", "int", "integer", "tinyint", "smallint",
      "mediumint", "bigint", "unsigned",
  };
  // clang-format on
  return kWords;
}

// Statement words named in a not_select refusal; any other first word is "not a SELECT".
// clang-format off
constexpr std::string_view kStatementKinds[] = {
    "insert", "replace", "update", "delete", "call", "do", "set", "load", "handler", "show",
    "explain", "describe", "desc", "table", "values", "create", "alter", "drop", "rename",
    "truncate", "grant", "revoke", "lock", "unlock", "start", "begin", "commit", "rollback",
    "savepoint", "release", "xa", "prepare", "execute", "deallocate", "use", "kill", "flush",
    "reset", "purge", "install", "uninstall", "analyze", "optimize", "repair", "check",
    "checksum", "cache", "change", "binlog", "import", "signal", "resignal", "get", "help",
    "shutdown", "restart", "clone", "backup", "with",
};
// clang-format on

// ---------------------------------------------------------------------------------------------

std::string upperAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

struct Position {
  int line = 1;
  int column = 1;
};

Position positionOf(std::string_view text, std::size_t offset) {
  Position p;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

// At most kExcerptBytes of the text from offset, cut at a character boundary, control
// characters shown as spaces: enough for the operator to find the spot, never the whole text.
constexpr std::size_t kExcerptBytes = 32;

std::string excerpt(std::string_view text, std::size_t offset) {
  if (offset >= text.size()) return {};
  std::size_t end = std::min(text.size(), offset + kExcerptBytes);
  while (end > offset && end < text.size() &&
         (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  std::string out(text.substr(offset, end - offset));
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  out = withInvalidUtf8Replaced(out);
  if (end < text.size()) out += "...";
  return out;
}

Verdict deny(Rule rule, std::string message) {
  Verdict v;
  v.rule = rule;
  v.message = std::move(message);
  return v;
}

Verdict denyAt(std::string_view text, std::size_t offset, Rule rule, std::string message) {
  Verdict v = deny(rule, std::move(message));
  const Position p = positionOf(text, offset);
  v.line = p.line;
  v.column = p.column;
  v.message += " (line " + std::to_string(p.line) + ", column " + std::to_string(p.column) + ")";
  v.detail = "near: " + excerpt(text, offset);
  return v;
}

// A refusal found while reading the tokens: the first one in text order wins.
struct Finding {
  Rule rule;
  std::string message;
  std::size_t offset;
};

Verdict fromLexError(std::string_view text, const LexResult& lexed) {
  const std::size_t at = lexed.error_offset;
  switch (lexed.error) {
    case LexError::None: break;
    case LexError::Unterminated:
      return denyAt(text, at, Rule::ParseError, "a string, quoted name or comment is not closed");
    case LexError::ExecutableComment:
      return denyAt(text, at, Rule::ExecutableComment,
                    "executable comments (/*! ... */, /*M! ... */) are not allowed: the server "
                    "runs their content");
    case LexError::OptimizerHint:
      return denyAt(text, at, Rule::OptimizerHint,
                    "optimizer hints (/*+ ... */) are not allowed: SET_VAR changes session "
                    "variables");
    case LexError::AmbiguousQuoting:
      return denyAt(text, at, Rule::AmbiguousQuoting,
                    "double quotes and backslash escapes are not allowed: their meaning depends "
                    "on sql_mode; write strings as '...' (a quote as '') and names as `...`");
    case LexError::AmbiguousComment:
      return denyAt(text, at, Rule::AmbiguousComment,
                    "a comment holding /* or a carriage return is not allowed: where it ends "
                    "depends on the server");
    case LexError::BadCharacter:
      return denyAt(text, at, Rule::ParseError, "a character that starts no MySQL token");
    case LexError::BadLiteral:
      return denyAt(text, at, Rule::ParseError, "a malformed number, X'..' or B'..' literal");
  }
  return deny(Rule::ParseError, "the statement could not be read");
}

// The text is read as tokens plus, for each parenthesis, its partner and depth.
class Judge {
 public:
  Judge(const std::vector<Token>& tokens, Dialect dialect, Verdict& out)
      : t_(tokens), dialect_(dialect), out_(out), match_(tokens.size(), 0) {}

  // Pairs the parentheses in [0, end); a refusal when unbalanced or too deep.
  std::optional<Finding> pairParentheses(std::size_t end) {
    std::vector<std::size_t> open;
    for (std::size_t i = 0; i < end; ++i) {
      if (t_[i].kind == TokenKind::LParen) {
        if (open.size() >= static_cast<std::size_t>(kMaxDepth)) {
          return Finding{Rule::TooDeep,
                         "parentheses are nested deeper than " + std::to_string(kMaxDepth),
                         t_[i].offset};
        }
        open.push_back(i);
      } else if (t_[i].kind == TokenKind::RParen) {
        if (open.empty()) {
          return Finding{Rule::ParseError, "a ')' without its '('", t_[i].offset};
        }
        match_[open.back()] = i;
        match_[i] = open.back();
        open.pop_back();
      }
    }
    if (!open.empty()) {
      return Finding{Rule::ParseError, "a '(' without its ')'", t_[open.back()].offset};
    }
    return std::nullopt;
  }

  std::size_t partner(std::size_t i) const { return match_[i]; }

  // Reads [begin, end) in order and returns the first refusal; collects placeholders, calls
  // and relations on the way.
  std::optional<Finding> scan(std::size_t begin, std::size_t end) {
    std::vector<int> from_depths;   // depth of each open FROM list
    std::vector<bool> call_parens;  // for each open '(': whether it holds a call's arguments
    int depth = 0;
    bool expect_relation = false;
    for (std::size_t i = begin; i < end; ++i) {
      const Token& tok = t_[i];
      const bool in_from = !from_depths.empty() && from_depths.back() == depth;
      switch (tok.kind) {
        case TokenKind::Variable:
          return Finding{Rule::Variable,
                         "user and system variables (@x, @@x) are not allowed: their values "
                         "persist in the session between calls",
                         tok.offset};
        case TokenKind::Assign:
          return Finding{Rule::Variable, ":= assigns a user variable, which is not allowed",
                         tok.offset};
        case TokenKind::Placeholder: ++out_.placeholders; break;
        case TokenKind::Semicolon:
          // Only a function body's top level separates statements with ';' (split before the
          // scan); anywhere else it ends a statement early.
          return Finding{Rule::MultipleStatements, "only one statement is allowed", tok.offset};
        case TokenKind::LParen:
          if (auto f = callFinding(i, begin)) return f;
          call_parens.push_back(paren_is_call_);
          ++depth;
          expect_relation = false;
          break;
        case TokenKind::RParen:
          --depth;
          if (!call_parens.empty()) call_parens.pop_back();
          while (!from_depths.empty() && from_depths.back() > depth) from_depths.pop_back();
          break;
        case TokenKind::Comma:
          if (in_from) expect_relation = true;
          break;
        case TokenKind::Word:
        case TokenKind::QuotedIdent:
          if (auto f = sequenceAttribute(i)) return f;
          if (isKeyword(i)) {
            const std::string kw = lowerAscii(tok.text);
            if (auto f = keywordFinding(i, end, kw)) return f;
            const bool in_call = !call_parens.empty() && call_parens.back();
            if ((kw == "from" || kw == "join" || kw == "straight_join") && !in_call) {
              while (!from_depths.empty() && from_depths.back() >= depth) from_depths.pop_back();
              from_depths.push_back(depth);
              expect_relation = true;
              break;
            }
            if (in_from && endsFromList(kw)) {
              from_depths.pop_back();
              expect_relation = false;
              break;
            }
            if (kw == "lateral") break;  // the relation, if any, follows
            if (kw == "dual") {
              expect_relation = false;
              break;
            }
          }
          if (expect_relation) relation(i, end);
          expect_relation = false;
          break;
        default: expect_relation = false; break;
      }
    }
    return std::nullopt;
  }

  // Whether token i is an unquoted word read as a keyword: not a name written right after a
  // '.' (t.select is a column), where MySQL reads any word as an identifier.
  bool isKeyword(std::size_t i) const {
    if (t_[i].kind != TokenKind::Word) return false;
    return !(i > 0 && t_[i - 1].kind == TokenKind::Dot && !t_[i].spaced_before);
  }

  bool wordIs(std::size_t i, std::size_t end, std::string_view kw) const {
    return i < end && isKeyword(i) && lowerAscii(t_[i].text) == kw;
  }

 private:
  static bool endsFromList(std::string_view kw) {
    static constexpr std::string_view kEnds[] = {
        "where",     "group", "having", "order", "limit", "window", "union", "except",
        "intersect", "on",    "using",  "into",  "for",   "lock",   "select"};
    return std::find(std::begin(kEnds), std::end(kEnds), kw) != std::end(kEnds);
  }

  // MariaDB's seq.NEXTVAL / seq.CURRVAL / seq.LASTVAL (sequence attributes, written after a dot).
  std::optional<Finding> sequenceAttribute(std::size_t i) const {
    if (t_[i].kind != TokenKind::Word || i == 0 || t_[i - 1].kind != TokenKind::Dot) {
      return std::nullopt;
    }
    const std::string w = lowerAscii(t_[i].text);
    if (w != "nextval" && w != "currval" && w != "lastval") return std::nullopt;
    return Finding{Rule::DeniedFunction,
                   "sequence." + upperAscii(w) + " is not allowed: it uses a sequence",
                   t_[i].offset};
  }

  std::optional<Finding> keywordFinding(std::size_t i, std::size_t end, const std::string& kw) {
    const std::size_t at = t_[i].offset;
    const bool call_follows = i + 1 < end && t_[i + 1].kind == TokenKind::LParen;
    if (kw == "into") {
      return Finding{Rule::SelectInto,
                     "SELECT ... INTO is not allowed (it writes a file or sets variables)", at};
    }
    if ((kw == "for" && (wordIs(i + 1, end, "update") || wordIs(i + 1, end, "share"))) ||
        kw == "lock" || kw == "nowait" || (kw == "skip" && wordIs(i + 1, end, "locked"))) {
      return Finding{Rule::LockingClause,
                     "locking reads (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE) are not allowed",
                     at};
    }
    if (kw == "update" || kw == "delete" ||
        ((kw == "insert" || kw == "replace") && !call_follows)) {
      return Finding{Rule::NotSelect, upperAscii(kw) + " is not allowed: only SELECT is", at};
    }
    if (kw == "table") {
      return Finding{Rule::NotSelect, "TABLE is not allowed: write SELECT ... FROM", at};
    }
    if (kw == "values") {
      return Finding{Rule::NotSelect, "VALUES is not allowed in a query template", at};
    }
    if (kw == "procedure") {
      return Finding{Rule::NotSelect, "SELECT ... PROCEDURE is not allowed", at};
    }
    if ((kw == "next" || kw == "previous") && wordIs(i + 1, end, "value")) {
      return Finding{Rule::DeniedFunction,
                     upperAscii(kw) + " VALUE FOR is not allowed: it uses a sequence", at};
    }
    return std::nullopt;
  }

  // The '(' at i: when a name stands before it, that is a call (or a name shaped like one).
  // Sets paren_is_call_ for the scan (a FROM inside EXTRACT(... FROM x) starts no FROM list).
  std::optional<Finding> callFinding(std::size_t i, std::size_t begin) {
    paren_is_call_ = false;
    if (i == begin) return std::nullopt;
    const std::size_t last = i - 1;
    const TokenKind k = t_[last].kind;
    if (k != TokenKind::Word && k != TokenKind::QuotedIdent) return std::nullopt;
    std::size_t first = last;
    while (
        first >= begin + 2 && t_[first - 1].kind == TokenKind::Dot &&
        (t_[first - 2].kind == TokenKind::Word || t_[first - 2].kind == TokenKind::QuotedIdent)) {
      first -= 2;
    }
    const bool qualified = first != last;
    const bool unquoted = k == TokenKind::Word;
    const std::string lower = lowerAscii(t_[last].text);
    if (!qualified && isKeyword(last) &&
        (notCallKeywords().contains(lower) || notCallInContext(lower, last, i))) {
      return std::nullopt;
    }
    paren_is_call_ = true;
    // The server compares routine names under a Unicode collation that folds some non-ASCII
    // letters to ASCII ones (U+017F long s to s, U+212A Kelvin sign to k), so a name with
    // non-ASCII letters might be a denylisted built-in in disguise.
    if (std::any_of(lower.begin(), lower.end(),
                    [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
      return Finding{Rule::DeniedFunction,
                     "a function name with non-ASCII characters is not allowed: it may fold to "
                     "a built-in's name",
                     t_[first].offset};
    }
    // The denylist applies to every spelling: any case, quoted, qualified, spaced, and a
    // backquoted name with trailing spaces (which the server ignores in names).
    std::string_view trimmed = lower;
    while (!trimmed.empty() && trimmed.back() == ' ') trimmed.remove_suffix(1);
    if (const DeniedFunction* d = findDeniedFunction(trimmed)) {
      const bool has_argument = t_[i + 1].kind != TokenKind::RParen;
      if (d->name != "last_insert_id" || has_argument) {
        return Finding{Rule::DeniedFunction,
                       upperAscii(d->prefix ? std::string(d->name) + "*" : std::string(d->name)) +
                           " is not allowed: " + std::string(d->reason),
                       t_[first].offset};
      }
    }
    if (nameShapedNotCall(first, i)) {
      paren_is_call_ = false;
      return std::nullopt;
    }
    // A backquoted name is never trusted as a built-in: `if`(...) is a generic call that reaches
    // a stored function named if (checked by hand on MariaDB 10.11), `concat`(...) is not.
    const bool spaced = t_[i].spaced_before && spaceSensitiveBuiltins().contains(lower);
    if (!qualified && unquoted && !spaced && isBuiltinFunction(lower, dialect_)) {
      return std::nullopt;
    }
    Name name;
    for (std::size_t p = first; p <= last; p += 2) name.push_back(t_[p].text);
    name.back() = lower;  // routine names are case-insensitive; schema names may not be
    if (std::find(out_.called_functions.begin(), out_.called_functions.end(), name) ==
        out_.called_functions.end()) {
      out_.called_functions.push_back(std::move(name));
    }
    return std::nullopt;
  }

  // Non-reserved words before '(' that are not calls where they stand: `= ANY (`, `> SOME (`
  // (a comparison with a subquery), `'$[*]' COLUMNS (` (JSON_TABLE), `MEMBER OF (`,
  // `) OVER (` (a window), and LATERAL, EXCEPT, INTERSECT before a parenthesised query (no
  // function takes a bare SELECT as its argument).
  bool notCallInContext(const std::string& word, std::size_t name, std::size_t lparen) const {
    const Token* before = name > 0 ? &t_[name - 1] : nullptr;
    if (word == "any" || word == "some") {
      return before != nullptr && before->kind == TokenKind::Operator;
    }
    if (word == "columns") {
      return before != nullptr &&
             (before->kind == TokenKind::String || before->kind == TokenKind::Placeholder);
    }
    if (word == "of") {
      return before != nullptr && isKeyword(name - 1) && lowerAscii(before->text) == "member";
    }
    if (word == "over") return before != nullptr && before->kind == TokenKind::RParen;
    if (word == "lateral" || word == "except" || word == "intersect") {
      const std::size_t next = lparen + 1;
      return next < t_.size() &&
             (t_[next].kind == TokenKind::LParen || lowerAscii(t_[next].text) == "select" ||
              lowerAscii(t_[next].text) == "with") &&
             t_[next].kind != TokenKind::QuotedIdent;
    }
    return false;
  }

  // Names before '(' that are not calls: a derived table's alias with column names
  // (`AS t (a, b)`, `) t (a, b)`), a cast target (`AS DECIMAL(10, 2)`), and a CTE's name with
  // column names (`c (a, b) AS (`). Only the unknown-function report skips them; the denylist
  // still applies.
  bool nameShapedNotCall(std::size_t first, std::size_t lparen) const {
    if (first > 0) {
      const std::size_t before = first - 1;
      if (t_[before].kind == TokenKind::RParen) return true;
      if (isKeyword(before) && lowerAscii(t_[before].text) == "as") return true;
    }
    const std::size_t close = match_[lparen];
    return close + 2 < t_.size() && isKeyword(close + 1) &&
           lowerAscii(t_[close + 1].text) == "as" && t_[close + 2].kind == TokenKind::LParen;
  }

  void relation(std::size_t i, std::size_t end) {
    std::size_t last = i;
    while (last + 2 < end && t_[last + 1].kind == TokenKind::Dot &&
           (t_[last + 2].kind == TokenKind::Word || t_[last + 2].kind == TokenKind::QuotedIdent)) {
      last += 2;
    }
    // A table function (JSON_TABLE(...)) is not a relation.
    if (last + 1 < end && t_[last + 1].kind == TokenKind::LParen) return;
    Name name;
    for (std::size_t p = i; p <= last; p += 2) name.push_back(t_[p].text);
    if (std::find(out_.relations.begin(), out_.relations.end(), name) == out_.relations.end()) {
      out_.relations.push_back(std::move(name));
    }
  }

  const std::vector<Token>& t_;
  Dialect dialect_;
  Verdict& out_;
  std::vector<std::size_t> match_;
  bool paren_is_call_ = false;
};

std::string statementKind(const Token& tok) {
  if (tok.kind != TokenKind::Word) return {};
  const std::string kw = lowerAscii(tok.text);
  for (std::string_view kind : kStatementKinds) {
    if (kind == kw) return upperAscii(kw);
  }
  return {};
}

std::optional<Finding> notSelectAt(const Token& tok) {
  const std::string kind = statementKind(tok);
  return Finding{Rule::NotSelect,
                 kind.empty() ? "the statement is not a SELECT"
                              : "the statement is " + kind + "; only SELECT is allowed",
                 tok.offset};
}

// Whether [i, end) starts, after any '(', with SELECT or WITH; else the refusal.
std::optional<Finding> expectQuery(const Judge& judge, const std::vector<Token>& t, std::size_t i,
                                   std::size_t end) {
  while (i < end && t[i].kind == TokenKind::LParen) ++i;
  if (i >= end) return Finding{Rule::NotSelect, "the statement is not a SELECT", t[end - 1].offset};
  if (judge.wordIs(i, end, "select") || judge.wordIs(i, end, "with")) return std::nullopt;
  return notSelectAt(t[i]);
}

// WITH [RECURSIVE] name [(cols)] AS (query) [, ...] followed by the main query: every CTE body
// and the main query must be a SELECT (MySQL has WITH ... UPDATE and WITH ... DELETE).
std::optional<Finding> checkWith(const Judge& judge, const std::vector<Token>& t, std::size_t i,
                                 std::size_t end) {
  const std::size_t with_at = i;
  ++i;
  if (judge.wordIs(i, end, "recursive")) ++i;
  auto malformed = [&] {
    return Finding{Rule::ParseError, "a WITH clause the guard cannot read", t[with_at].offset};
  };
  while (true) {
    if (i >= end || (t[i].kind != TokenKind::Word && t[i].kind != TokenKind::QuotedIdent)) {
      return malformed();
    }
    ++i;
    if (i < end && t[i].kind == TokenKind::LParen) i = judge.partner(i) + 1;
    if (!judge.wordIs(i, end, "as")) return malformed();
    ++i;
    if (i >= end || t[i].kind != TokenKind::LParen) return malformed();
    const std::size_t close = judge.partner(i);
    if (close == i + 1) return malformed();
    if (auto f = expectQuery(judge, t, i + 1, close)) return f;
    i = close + 1;
    if (i < end && t[i].kind == TokenKind::Comma) {
      ++i;
      continue;
    }
    break;
  }
  if (i >= end) return Finding{Rule::NotSelect, "WITH without a query", t[with_at].offset};
  if (t[i].kind == TokenKind::LParen || judge.wordIs(i, end, "select")) {
    return expectQuery(judge, t, i, end);
  }
  const std::string kind = statementKind(t[i]);
  return Finding{Rule::NotSelect,
                 kind.empty() ? "WITH must be followed by a SELECT"
                              : "WITH ... " + kind + " is not allowed; only SELECT is",
                 t[i].offset};
}

// Size, NUL and UTF-8 checks shared by templates and bodies.
std::optional<Verdict> checkBytes(std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    return deny(Rule::TooLong,
                "the statement is longer than " + std::to_string(max_bytes / 1024) + " KiB");
  }
  // The connection's character set is utf8mb4; other bytes would be read differently. Checked
  // first, so that every excerpt below is cut from valid UTF-8.
  if (!isValidUtf8(text)) return deny(Rule::ParseError, "the statement is not valid UTF-8");
  if (text.find('\0') != std::string_view::npos) {
    return denyAt(text, text.find('\0'), Rule::ParseError, "the statement contains a NUL byte");
  }
  return std::nullopt;
}

Verdict refuse(std::string_view text, Finding f, Verdict partial) {
  Verdict v = denyAt(text, f.offset, f.rule, std::move(f.message));
  v.placeholders = partial.placeholders;
  v.called_functions = std::move(partial.called_functions);
  v.relations = std::move(partial.relations);
  return v;
}

// Strips one trailing ';' (only whitespace may follow it); a refusal for any other ';'.
std::optional<Finding> trailingSemicolon(std::string_view text, const std::vector<Token>& t,
                                         std::size_t& end) {
  end = t.size();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != TokenKind::Semicolon) continue;
    const std::string_view rest = text.substr(t[i].offset + 1);
    if (i + 1 != t.size() || rest.find_first_not_of(" \t\n\r\f\v") != std::string_view::npos) {
      return Finding{Rule::MultipleStatements, "only one statement is allowed", t[i].offset};
    }
    end = i;
  }
  return std::nullopt;
}

Verdict judgeTemplate(std::string_view text, Dialect dialect) {
  if (auto bad = checkBytes(text, kMaxTemplateBytes)) return *bad;
  const LexResult lexed = lex(text);
  if (lexed.error != LexError::None) return fromLexError(text, lexed);
  const std::vector<Token>& t = lexed.tokens;
  Verdict v;
  std::size_t end = 0;
  if (auto f = trailingSemicolon(text, t, end)) return refuse(text, *f, std::move(v));
  if (end == 0) return deny(Rule::Empty, "the statement is empty");
  Judge judge(t, dialect, v);
  if (auto f = judge.pairParentheses(end)) return refuse(text, *f, std::move(v));
  if (auto f = expectQuery(judge, t, 0, end)) return refuse(text, *f, std::move(v));
  // Each WITH that starts a query (at the start or after '(') is checked: its CTEs and main
  // query must be SELECTs. WITH ROLLUP and the like are not followed by a name.
  for (std::size_t i = 0; i < end; ++i) {
    if (!judge.wordIs(i, end, "with")) continue;
    if (i > 0 && t[i - 1].kind != TokenKind::LParen) continue;
    if (auto f = checkWith(judge, t, i, end)) return refuse(text, *f, std::move(v));
  }
  if (auto f = judge.scan(0, end)) return refuse(text, *f, std::move(v));
  v.allowed = true;
  return v;
}

// --- stored function bodies -----------------------------------------------------------------

class BodyJudge {
 public:
  BodyJudge(const std::vector<Token>& t, Judge& judge) : t_(t), judge_(judge) {}

  std::optional<Finding> compound(std::size_t begin, std::size_t end) {
    std::size_t start = begin;
    int depth = 0;
    for (std::size_t i = begin; i <= end; ++i) {
      if (i < end && t_[i].kind == TokenKind::LParen) ++depth;
      if (i < end && t_[i].kind == TokenKind::RParen) --depth;
      if (i == end || (depth == 0 && t_[i].kind == TokenKind::Semicolon)) {
        if (i > start) {
          if (auto f = statement(start, i)) return f;
        }
        start = i + 1;
      }
    }
    return std::nullopt;
  }

  std::optional<Finding> expression(std::size_t begin, std::size_t end, std::size_t at) {
    if (begin >= end) return Finding{Rule::RoutineStatement, "an empty expression", at};
    return judge_.scan(begin, end);
  }

 private:
  std::optional<Finding> unjudgeable(std::size_t at) const {
    return Finding{Rule::RoutineStatement,
                   "a function body may hold only DECLARE and SET of local variables, RETURN "
                   "and SELECT",
                   t_[at].offset};
  }

  std::optional<Finding> statement(std::size_t begin, std::size_t end) {
    if (judge_.wordIs(begin, end, "declare")) return declare(begin, end);
    if (judge_.wordIs(begin, end, "set")) return assign(begin, end);
    if (judge_.wordIs(begin, end, "return")) return expression(begin + 1, end, t_[begin].offset);
    if (judge_.wordIs(begin, end, "select")) return judge_.scan(begin, end);
    return unjudgeable(begin);
  }

  // DECLARE a[, b] type [DEFAULT expr]: cursors, handlers and conditions are refused.
  std::optional<Finding> declare(std::size_t begin, std::size_t end) {
    std::size_t i = begin + 1;
    std::vector<std::string> names;
    while (i < end && t_[i].kind == TokenKind::Word) {
      names.push_back(lowerAscii(t_[i].text));
      ++i;
      if (i < end && t_[i].kind == TokenKind::Comma) {
        ++i;
        continue;
      }
      break;
    }
    if (names.empty() || i >= end) return unjudgeable(begin);
    std::size_t default_at = end;
    for (std::size_t k = i; k < end; ++k) {
      // The type (INT, DECIMAL(10, 2), VARCHAR(20) CHARACTER SET x, ENUM('a')) holds only
      // words, numbers, strings and parentheses; DEFAULT starts an expression.
      const TokenKind kind = t_[k].kind;
      if (default_at == end && kind != TokenKind::Word && kind != TokenKind::Number &&
          kind != TokenKind::String && kind != TokenKind::LParen && kind != TokenKind::RParen &&
          kind != TokenKind::Comma) {
        return unjudgeable(begin);
      }
      if (!judge_.isKeyword(k)) continue;
      const std::string kw = lowerAscii(t_[k].text);
      if (kw == "cursor" || kw == "handler" || kw == "condition") return unjudgeable(begin);
      if (kw == "default" && default_at == end) default_at = k;
    }
    for (const std::string& n : names) {
      if (n == "cursor" || n == "handler" || n == "condition" || n == "continue" || n == "exit" ||
          n == "undo") {
        return unjudgeable(begin);
      }
    }
    declared_.insert(declared_.end(), names.begin(), names.end());
    if (default_at != end) return expression(default_at + 1, end, t_[default_at].offset);
    return std::nullopt;
  }

  // SET local = expr[, local = expr]: only variables this body declared.
  std::optional<Finding> assign(std::size_t begin, std::size_t end) {
    std::size_t i = begin + 1;
    while (i < end) {
      std::size_t stop = i;
      int depth = 0;
      while (stop < end && !(depth == 0 && t_[stop].kind == TokenKind::Comma)) {
        if (t_[stop].kind == TokenKind::LParen) ++depth;
        if (t_[stop].kind == TokenKind::RParen) --depth;
        ++stop;
      }
      const bool is_local = stop > i + 2 && t_[i].kind == TokenKind::Word &&
                            std::find(declared_.begin(), declared_.end(), lowerAscii(t_[i].text)) !=
                                declared_.end() &&
                            t_[i + 1].kind == TokenKind::Operator && t_[i + 1].text == "=";
      if (!is_local) {
        return Finding{Rule::RoutineStatement, "SET of anything but a declared local variable",
                       t_[i].offset};
      }
      if (auto f = expression(i + 2, stop, t_[i].offset)) return f;
      i = stop + 1;
    }
    return std::nullopt;
  }

  const std::vector<Token>& t_;
  Judge& judge_;
  std::vector<std::string> declared_;
};

Verdict judgeBody(std::string_view text, Dialect dialect) {
  if (auto bad = checkBytes(text, kMaxBodyBytes)) return *bad;
  const LexResult lexed = lex(text);
  if (lexed.error != LexError::None) return fromLexError(text, lexed);
  const std::vector<Token>& t = lexed.tokens;
  Verdict v;
  if (t.empty()) return deny(Rule::Empty, "the function body is empty");
  Judge judge(t, dialect, v);
  if (auto f = judge.pairParentheses(t.size())) return refuse(text, *f, std::move(v));
  BodyJudge body(t, judge);
  std::size_t end = t.size();
  if (t[end - 1].kind == TokenKind::Semicolon) --end;
  std::optional<Finding> f;
  if (judge.wordIs(0, end, "return")) {
    for (std::size_t i = 0; i < end; ++i) {
      if (t[i].kind == TokenKind::Semicolon) {
        return refuse(text,
                      {Rule::MultipleStatements, "RETURN must be the only statement", t[i].offset},
                      std::move(v));
      }
    }
    f = body.expression(1, end, t[0].offset);
  } else if (judge.wordIs(0, end, "begin") && end >= 2 && judge.wordIs(end - 1, end, "end")) {
    f = body.compound(1, end - 1);
  } else {
    f = Finding{Rule::RoutineStatement,
                "a function body must be RETURN <expression> or BEGIN ... END", t[0].offset};
  }
  if (f) return refuse(text, *f, std::move(v));
  v.allowed = true;
  return v;
}

bool needsBackquotes(const std::string& part) {
  if (part.empty()) return true;
  return !std::all_of(part.begin(), part.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
  });
}

}  // namespace

std::string_view ruleId(Rule rule) {
  switch (rule) {
    case Rule::None: return "";
    case Rule::ParseError: return "parse_error";
    case Rule::TooLong: return "too_long";
    case Rule::TooDeep: return "too_deep";
    case Rule::Empty: return "empty";
    case Rule::MultipleStatements: return "multiple_statements";
    case Rule::NotSelect: return "not_select";
    case Rule::SelectInto: return "select_into";
    case Rule::LockingClause: return "locking_clause";
    case Rule::DeniedFunction: return "denied_function";
    case Rule::Variable: return "variable";
    case Rule::ExecutableComment: return "executable_comment";
    case Rule::OptimizerHint: return "optimizer_hint";
    case Rule::AmbiguousQuoting: return "ambiguous_quoting";
    case Rule::AmbiguousComment: return "ambiguous_comment";
    case Rule::RoutineStatement: return "routine_statement";
  }
  return "unknown";
}

Verdict checkTemplate(std::string_view sql, Dialect dialect) {
  Verdict v = judgeTemplate(sql, dialect);
  if (!v.allowed && v.rule == Rule::None) v.rule = Rule::ParseError;  // never allow by accident
  return v;
}

Verdict checkRoutineBody(std::string_view body, Dialect dialect) {
  Verdict v = judgeBody(body, dialect);
  if (!v.allowed && v.rule == Rule::None) v.rule = Rule::ParseError;
  return v;
}

Status toStatus(const Verdict& verdict) {
  if (verdict.allowed) return {};
  return Error{Code::PermissionDenied,
               "statement refused by the SQL guard (" + std::string(ruleId(verdict.rule)) +
                   "): " + verdict.message,
               verdict.detail};
}

const DeniedFunction* findDeniedFunction(std::string_view name) {
  const std::string lower = lowerAscii(name);
  for (const DeniedFunction& d : kDenied) {
    if (d.prefix ? std::string_view(lower).starts_with(d.name) : lower == d.name) return &d;
  }
  return nullptr;
}

bool isBuiltinFunction(std::string_view name, Dialect dialect) {
  const std::string lower = lowerAscii(name);
  if (builtinsOfBoth().contains(lower)) return true;
  switch (dialect) {
    case Dialect::Either: return false;
    case Dialect::Mysql: return builtinsOfMysqlOnly().contains(lower);
    case Dialect::Mariadb: return builtinsOfMariadbOnly().contains(lower);
  }
  return false;
}

std::string displayName(const Name& name) {
  return qualifiedName(name, '`', needsBackquotes);
}

}  // namespace mcpdb::mysql::guard
