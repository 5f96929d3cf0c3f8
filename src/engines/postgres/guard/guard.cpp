#include "engines/postgres/guard/guard.hpp"

#include <pg_query.h>
#include <pthread.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <functional>
#include <mutex>
#include "common/json.hpp"
#include <optional>
#include <set>
#include <utility>

#include "common/qualified_name.hpp"
#include "common/utf8.hpp"
#include "engines/postgres/guard/denylist.hpp"

namespace mcpdb::postgres::guard {
namespace {

using Json = nlohmann::json;

// libpg_query writes its tree out recursively (one C frame per tree level, without a depth
// check), and a chain like `1+1+1...` is one level per two bytes of text (the least any
// construct takes: a unary chain or nested parentheses hit the grammar's own depth limit first).
// The whole analysis runs on a thread whose stack is sized for the longest text allowed
// (kMaxBodyBytes), whatever stack the caller has; everything else on it (reading the JSON tree,
// walking it) is iterative. Measured on Debian's libpg_query 15-4.0 (x86-64), a 128 KiB chain
// needs 10-12 MiB, the same with and without ASan (the library is not instrumented): 64 MiB keeps
// a margin of five. Only the pages touched are committed, but under strict overcommit
// (vm.overcommit_memory=2) the whole reservation counts while a statement is parsed.
constexpr std::size_t kParserStackBytes = std::size_t{64} << 20;

// The parser's thread: one long-lived thread with kParserStackBytes of stack runs every parse,
// one at a time, for the whole process. A thread per parse cost a thread's creation and, under
// ASan, clearing the shadow of its whole stack each time; parses are rare (configuration, the
// proof; a call looks its verdict up), so one thread is never the bottleneck. libpg_query keeps
// its per-thread memory context on it between parses.
class ParserThread {
 public:
  static ParserThread& instance() {
    static ParserThread thread;
    return thread;
  }

  ParserThread(const ParserThread&) = delete;
  ParserThread& operator=(const ParserThread&) = delete;

  // Runs fn on the parser's thread and waits for it. False when the thread cannot be started (fn
  // did not run); starting is tried again on the next call.
  bool run(const std::function<void()>& fn) {
    std::lock_guard<std::mutex> one_at_a_time(run_mu_);
    if (!started_ && !start()) return false;
    std::unique_lock<std::mutex> lock(mu_);
    job_ = &fn;
    cv_.notify_all();
    cv_.wait(lock, [this] { return job_ == nullptr; });
    return true;
  }

 private:
  ParserThread() = default;

  ~ParserThread() {
    if (!started_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    pthread_join(thread_, nullptr);
  }

  bool start() {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    started_ = pthread_attr_setstacksize(&attr, kParserStackBytes) == 0 &&
               pthread_create(&thread_, &attr, &ParserThread::main, this) == 0;
    pthread_attr_destroy(&attr);
    return started_;
  }

  static void* main(void* arg) {
    auto* self = static_cast<ParserThread*>(arg);
    std::unique_lock<std::mutex> lock(self->mu_);
    while (true) {
      self->cv_.wait(lock, [self] { return self->job_ != nullptr || self->stopping_; });
      if (self->stopping_) break;
      lock.unlock();
      // The job writes its verdict; one that throws leaves the caller's refusal in place.
      try {
        (*self->job_)();
      } catch (...) {  // NOLINT(bugprone-empty-catch): the caller's default verdict refuses
      }
      lock.lock();
      self->job_ = nullptr;
      self->cv_.notify_all();
    }
    // The parser's per-thread memory context is freed by libpg_query's own thread-exit hook
    // (calling pg_query_exit() here as well frees it twice in libpg_query 15-4.0).
    return nullptr;
  }

  std::mutex run_mu_;  // one caller at a time
  std::mutex mu_;      // guards job_ and stopping_
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;
  bool stopping_ = false;
  bool started_ = false;
  pthread_t thread_{};
};

bool runOnLargeStack(const std::function<void()>& fn) {
  return ParserThread::instance().run(fn);
}

Verdict deny(Rule rule, std::string message) {
  Verdict v;
  v.rule = rule;
  v.message = std::move(message);
  return v;
}

// The parser reports a 1-based position in characters (UTF-8 code points); turn it into a line
// and column (both 1-based, the column in characters). Invalid UTF-8 counts one byte per char.
std::pair<int, int> lineColumn(std::string_view text, int cursorpos) {
  int line = 1, column = 1, chars = 1;
  for (std::size_t i = 0; i < text.size() && chars < cursorpos; ++chars) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    std::size_t len = c < 0x80           ? 1
                      : (c >> 5) == 0x6  ? 2
                      : (c >> 4) == 0xe  ? 3
                      : (c >> 3) == 0x1e ? 4
                                         : 1;
    i += std::min(len, text.size() - i);
  }
  return {line, column};
}

// "InsertStmt" -> "INSERT"; the statement kinds an operator is likely to write, else generic.
std::string statementKind(std::string_view node) {
  static constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
      {"InsertStmt", "INSERT"},
      {"UpdateStmt", "UPDATE"},
      {"DeleteStmt", "DELETE"},
      {"MergeStmt", "MERGE"},
      {"CopyStmt", "COPY"},
      {"CallStmt", "CALL"},
      {"DoStmt", "DO"},
      {"ExplainStmt", "EXPLAIN"},
      {"VariableSetStmt", "SET"},
      {"VariableShowStmt", "SHOW"},
      {"TransactionStmt", "a transaction command"},
      {"TruncateStmt", "TRUNCATE"},
      {"LockStmt", "LOCK"},
      {"NotifyStmt", "NOTIFY"},
      {"ListenStmt", "LISTEN"},
      {"PrepareStmt", "PREPARE"},
      {"ExecuteStmt", "EXECUTE"},
      {"CreateStmt", "CREATE TABLE"},
      {"CreateTableAsStmt", "CREATE TABLE AS"},
      {"DropStmt", "DROP"},
      {"GrantStmt", "GRANT or REVOKE"},
      {"VacuumStmt", "VACUUM or ANALYZE"},
  };
  for (const auto& [key, kind] : kKinds) {
    if (key == node) return std::string(kind);
  }
  if (node.starts_with("Create")) return "a CREATE statement";
  if (node.starts_with("Alter")) return "an ALTER statement";
  return "not a SELECT";
}

std::string lockingStrength(std::string_view strength) {
  if (strength == "LCS_FORKEYSHARE") return "FOR KEY SHARE";
  if (strength == "LCS_FORSHARE") return "FOR SHARE";
  if (strength == "LCS_FORNOKEYUPDATE") return "FOR NO KEY UPDATE";
  return "FOR UPDATE";
}

bool isStatementNode(std::string_view key) {
  return key.size() > 4 && key.ends_with("Stmt") && key[0] >= 'A' && key[0] <= 'Z';
}

// A list of {"String":{"sval":...}} nodes as a Name; other nodes (A_Star) end it.
Name nameOf(const Json& list) {
  Name out;
  if (!list.is_array()) return out;
  for (const Json& item : list) {
    const auto s = item.find("String");
    if (s == item.end() || !s->is_object()) break;
    out.push_back(s->value("sval", std::string()));
  }
  return out;
}

// Keeps each name once, in first-seen order.
struct NameList {
  std::vector<Name>* out;
  std::set<Name> seen;
  void add(Name name) {
    if (name.empty() || !seen.insert(name).second) return;
    out->push_back(std::move(name));
  }
};

// What the walk found that a rule forbids (the first of each kind, in walk order).
struct Findings {
  std::string data_modifying;  // the statement kind
  bool into = false;
  std::string locking;  // "FOR UPDATE", ...
  const DeniedFunction* denied = nullptr;
};

struct Walker {
  References refs;
  NameList functions{&refs.functions, {}};
  NameList attribute_functions{&refs.attribute_functions, {}};
  NameList operators{&refs.operators, {}};
  NameList relations{&refs.relations, {}};
  NameList types{&refs.types, {}};
  NameList tablesample{&refs.tablesample, {}};
  std::set<std::uint32_t> params;
  Findings found;

  void operatorOf(const Json& aexpr) {
    Name name = nameOf(aexpr.value("name", Json::array()));
    if (name.empty()) return;
    const std::string& last = name.back();
    // BETWEEN and its variants are written as words; the parser turns them into >= and <=.
    if (!last.empty() && std::isalpha(static_cast<unsigned char>(last[0])) != 0) {
      operators.add({">="});
      operators.add({"<="});
      return;
    }
    operators.add(std::move(name));
  }

  void funcCall(const Json& call) {
    Name name = nameOf(call.value("funcname", Json::array()));
    if (name.empty()) return;
    if (found.denied == nullptr) found.denied = findDeniedFunction(name.back());
    functions.add(std::move(name));
  }

  // One node: {"Kind": {...fields}} or a bare struct; only the keys matter here.
  void visitObject(const Json& obj) {
    for (const auto& [key, value] : obj.items()) {
      if (key == "FuncCall") {
        funcCall(value);
      } else if (key == "A_Expr") {
        operatorOf(value);
      } else if (key == "SubLink") {
        operators.add(nameOf(value.value("operName", Json::array())));
      } else if (key == "CaseExpr") {
        if (value.contains("arg")) operators.add({"="});  // CASE x WHEN v compares with =
      } else if (key == "typeName" && value.is_object()) {
        types.add(nameOf(value.value("names", Json::array())));
      } else if (key == "RangeVar") {
        Name name;
        for (const char* part : {"catalogname", "schemaname", "relname"}) {
          if (value.contains(part)) name.push_back(value.value(part, std::string()));
        }
        relations.add(std::move(name));
      } else if (key == "RangeTableSample") {
        tablesample.add(nameOf(value.value("method", Json::array())));
      } else if (key == "ColumnRef") {
        const Name fields = nameOf(value.value("fields", Json::array()));
        if (fields.size() >= 2) attribute_functions.add({fields.back()});
      } else if (key == "A_Indirection") {
        for (const Json& item : value.value("indirection", Json::array())) {
          Name one = nameOf(Json::array({item}));
          if (!one.empty()) attribute_functions.add(std::move(one));
        }
      } else if (key == "ParamRef") {
        const auto n = value.value("number", std::int64_t{0});
        params.insert(
            static_cast<std::uint32_t>(std::clamp<std::int64_t>(n, 0, kMaxPlaceholder + 1)));
      } else if (key == "intoClause") {
        found.into = true;
      } else if (key == "LockingClause" && found.locking.empty()) {
        found.locking = lockingStrength(value.value("strength", std::string()));
      } else if (isStatementNode(key) && key != "SelectStmt" && found.data_modifying.empty()) {
        found.data_modifying = statementKind(key);
      }
    }
  }

  // Iterative, so a deep tree cannot exhaust this thread's stack either.
  void walk(const Json& root) {
    std::vector<const Json*> stack{&root};
    while (!stack.empty()) {
      const Json* node = stack.back();
      stack.pop_back();
      if (node->is_object()) {
        visitObject(*node);
        for (auto it = node->rbegin(); it != node->rend(); ++it) {
          if (it->is_structured()) stack.push_back(&*it);
        }
      } else if (node->is_array()) {
        for (auto it = node->rbegin(); it != node->rend(); ++it) {
          if (it->is_structured()) stack.push_back(&*it);
        }
      }
    }
  }
};

std::optional<Verdict> checkPlaceholders(const std::vector<std::uint32_t>& numbers) {
  if (numbers.empty()) return std::nullopt;
  if (numbers.front() == 0 || numbers.back() > kMaxPlaceholder) {
    return deny(Rule::PlaceholderRange, "placeholders must be numbered from $1 to at most $" +
                                            std::to_string(kMaxPlaceholder));
  }
  // Sorted and distinct, so contiguous from 1 exactly when the largest equals the count.
  if (numbers.back() != numbers.size()) {
    std::uint32_t missing = 1;
    while (missing - 1 < numbers.size() && numbers[missing - 1] == missing) ++missing;
    return deny(Rule::PlaceholderGap, "placeholders must be $1..$N without gaps; $" +
                                          std::to_string(missing) + " is missing");
  }
  return std::nullopt;
}

enum class Mode { Template, View, SqlFunction, AtomicFunction, Expression };

// Parses and judges on the current thread (runOnLargeStack provides the stack).
Verdict analyseHere(const std::string& text, Mode mode) {
  PgQueryParseResult parsed = pg_query_parse(text.c_str());
  if (parsed.error != nullptr) {
    Verdict v = deny(Rule::ParseError, "PostgreSQL's parser rejects the statement");
    v.detail = parsed.error->message != nullptr ? parsed.error->message : "syntax error";
    if (parsed.error->cursorpos > 0) {
      std::tie(v.line, v.column) = lineColumn(text, parsed.error->cursorpos);
      v.message += " at line " + std::to_string(v.line) + ", column " + std::to_string(v.column);
    }
    pg_query_free_parse_result(parsed);
    return v;
  }
  Json tree = Json::parse(parsed.parse_tree, nullptr, /*allow_exceptions=*/false);
  pg_query_free_parse_result(parsed);
  if (tree.is_discarded() || !tree.contains("stmts")) {
    return deny(Rule::ParseError, "the parser's output could not be read");
  }
  const Json& stmts = tree["stmts"];
  if (stmts.empty()) {
    if (mode == Mode::SqlFunction) {
      Verdict empty;
      empty.allowed = true;
      return empty;
    }
    return deny(Rule::Empty, "the statement is empty");
  }
  if (stmts.size() > 1 && mode != Mode::SqlFunction && mode != Mode::AtomicFunction) {
    return deny(Rule::MultipleStatements, "only one statement is allowed");
  }
  Walker walker;
  if (mode == Mode::AtomicFunction) {
    const Json* body = nullptr;
    const auto stmt = stmts[0].find("stmt");
    if (stmts.size() == 1 && stmt != stmts[0].end() && stmt->contains("CreateFunctionStmt")) {
      const Json& create = (*stmt)["CreateFunctionStmt"];
      if (const auto b = create.find("sql_body"); b != create.end()) body = &*b;
    }
    if (body == nullptr) return deny(Rule::NotSelect, "not a BEGIN ATOMIC function definition");
    walker.walk(*body);
  }
  for (const Json& raw : stmts) {
    if (mode == Mode::AtomicFunction) break;
    const auto stmt = raw.find("stmt");
    const bool present = stmt != raw.end() && stmt->is_object() && !stmt->empty();
    if (!present || stmt->begin().key() != "SelectStmt") {
      const std::string kind = present ? statementKind(stmt->begin().key()) : "not a SELECT";
      return deny(Rule::NotSelect, kind == "not a SELECT"
                                       ? "the statement is not a SELECT"
                                       : "the statement is " + kind + "; only SELECT is allowed");
    }
    walker.walk(*stmt);
  }
  const Findings& f = walker.found;
  Verdict v;
  if (!f.data_modifying.empty()) {
    v = deny(Rule::DataModifyingCte,
             f.data_modifying + " inside a SELECT is not allowed: a query must not modify data");
  } else if (f.into) {
    v = deny(Rule::SelectInto, "SELECT ... INTO is not allowed (it creates a table)");
  } else if (!f.locking.empty()) {
    v = deny(Rule::LockingClause,
             "locking clause " + f.locking + " is not allowed in a read-only query");
  } else if (f.denied != nullptr) {
    std::string shown(f.denied->name);
    if (f.denied->match == NameMatch::Prefix) shown += '*';
    v = deny(Rule::DeniedFunction,
             "function " + shown + " is not allowed (" + std::string(f.denied->reason) + ")");
  } else {
    v.allowed = true;
  }
  v.placeholders.assign(walker.params.begin(), walker.params.end());
  if (v.allowed && mode == Mode::Template) {
    if (auto p = checkPlaceholders(v.placeholders)) {
      p->placeholders = std::move(v.placeholders);
      v = std::move(*p);
    }
  }
  v.references = std::move(walker.refs);
  return v;
}

Verdict analyse(std::string_view text, Mode mode, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    return deny(Rule::TooLong,
                "the statement is longer than " + std::to_string(max_bytes / 1024) + " KiB");
  }
  // The parser reads a C string: a NUL byte would silently cut the text short.
  if (text.find('\0') != std::string_view::npos) {
    return deny(Rule::ParseError, "the statement contains a NUL byte");
  }
  // The session's client_encoding is UTF8; the server would refuse other bytes anyway.
  if (!isValidUtf8(text)) return deny(Rule::ParseError, "the statement is not valid UTF-8");
  const std::string owned(text);
  // Fails closed: without its thread (no thread left, or the stack's address space could not be
  // reserved, e.g. under vm.overcommit_memory=2) nothing is parsed, so nothing is allowed.
  Verdict out = deny(Rule::ParseError, "the parser's thread could not be started (" +
                                           std::to_string(kParserStackBytes >> 20) +
                                           " MiB of stack address space is reserved for it)");
  runOnLargeStack([&] { out = analyseHere(owned, mode); });
  return out;
}

bool needsQuotes(const std::string& part) {
  if (!part.empty() && part.find_first_not_of("+-*/<>=~!@#%^&|`?") == std::string::npos) {
    return false;  // an operator name
  }
  if (part.empty() || !(std::islower(static_cast<unsigned char>(part[0])) || part[0] == '_')) {
    return true;
  }
  return !std::all_of(part.begin(), part.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  });
}

}  // namespace

std::string_view ruleId(Rule rule) {
  switch (rule) {
    case Rule::None: return "";
    case Rule::ParseError: return "parse_error";
    case Rule::TooLong: return "too_long";
    case Rule::Empty: return "empty";
    case Rule::MultipleStatements: return "multiple_statements";
    case Rule::NotSelect: return "not_select";
    case Rule::DataModifyingCte: return "data_modifying_cte";
    case Rule::SelectInto: return "select_into";
    case Rule::LockingClause: return "locking_clause";
    case Rule::DeniedFunction: return "denied_function";
    case Rule::PlaceholderGap: return "placeholder_gap";
    case Rule::PlaceholderRange: return "placeholder_range";
  }
  return "unknown";
}

Verdict checkTemplate(std::string_view sql) {
  return analyse(sql, Mode::Template, kMaxTemplateBytes);
}

Verdict analyseBody(std::string_view text, BodyKind kind) {
  switch (kind) {
    case BodyKind::View: return analyse(text, Mode::View, kMaxBodyBytes);
    case BodyKind::SqlFunction: return analyse(text, Mode::SqlFunction, kMaxBodyBytes);
    case BodyKind::AtomicFunction: return analyse(text, Mode::AtomicFunction, kMaxBodyBytes);
    case BodyKind::Expression:
      return analyse("SELECT " + std::string(text), Mode::Expression, kMaxBodyBytes);
  }
  return deny(Rule::ParseError, "unknown body kind");
}

Status toStatus(const Verdict& verdict) {
  if (verdict.allowed) return {};
  return Error{Code::PermissionDenied,
               "statement refused by the SQL guard (" + std::string(ruleId(verdict.rule)) +
                   "): " + verdict.message,
               verdict.detail};
}

std::string displayName(const Name& name) {
  return qualifiedName(name, '"', needsQuotes);
}

}  // namespace mcpdb::postgres::guard
