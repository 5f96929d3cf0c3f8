#include "engines/mysql/routines.hpp"

#include <algorithm>
#include <utility>

namespace mcpdb::mysql {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return text;
}

std::string keyOf(char kind, const guard::Name& resolved) {
  return std::string(1, kind) + resolved[0] + '\x1f' + resolved[1];
}

// Reads information_schema as the principal, in the client's read-only statement path.
Result<QueryResult> lookUp(Connection& conn, std::string_view sql, const guard::Name& resolved) {
  const std::vector<Param> params{resolved[0], resolved[1]};
  CallLimits limits;
  limits.max_rows = 16;
  limits.max_bytes = std::uint64_t{4} * guard::kMaxBodyBytes;
  return conn.run(sql, params, limits);
}

std::optional<std::string> textCell(const Json& cell) {
  if (!cell.is_string()) return std::nullopt;
  return cell.get<std::string>();
}

RoutineVerdict refused(const guard::Name& name, std::string reason) {
  return RoutineVerdict{name, false, std::move(reason)};
}

}  // namespace

RoutineChecker::RoutineChecker(Connection& conn, RoutineCheckOptions options)
    : conn_(conn), options_(std::move(options)) {}

guard::Name RoutineChecker::resolve(const guard::Name& name, const std::string& schema) const {
  if (name.size() >= 2) return {name[name.size() - 2], name.back()};
  return {schema, name.empty() ? std::string() : name.back()};
}

bool RoutineChecker::allowlisted(const guard::Name& resolved) const {
  for (const std::string& entry : options_.allowlist) {
    const auto dot = entry.find('.');
    const std::string schema =
        dot == std::string::npos ? options_.default_schema : entry.substr(0, dot);
    const std::string name = dot == std::string::npos ? entry : entry.substr(dot + 1);
    if (schema == resolved[0] && lower(name) == lower(resolved[1])) return true;
  }
  return false;
}

std::vector<RoutineVerdict> RoutineChecker::checkFunctions(
    const std::vector<guard::Name>& functions) {
  std::vector<RoutineVerdict> out;
  for (const guard::Name& f : functions) {
    std::vector<std::string> stack;
    out.push_back(judgeFunction(resolve(f, options_.default_schema), stack));
  }
  return out;
}

std::vector<RoutineVerdict> RoutineChecker::checkViews(const std::vector<guard::Name>& relations) {
  std::vector<RoutineVerdict> out;
  for (const guard::Name& r : relations) {
    std::vector<std::string> stack;
    if (auto v = judgeView(resolve(r, options_.default_schema), stack)) out.push_back(*v);
  }
  return out;
}

RoutineVerdict RoutineChecker::checkFunction(const std::string& schema, const std::string& name) {
  std::vector<std::string> stack;
  return judgeFunction({schema, lower(name)}, stack);
}

RoutineVerdict RoutineChecker::judgeFunction(const guard::Name& resolved,
                                             std::vector<std::string>& stack) {
  const std::string shown = "function " + guard::displayName(resolved);
  const std::string key = keyOf('f', resolved);
  if (auto it = done_.find(key); it != done_.end()) return it->second;
  if (std::find(stack.begin(), stack.end(), key) != stack.end()) {
    // Not remembered: the function that started the cycle is refused (and remembered) on return.
    return refused(resolved, shown +
                                 " is recursive (it calls itself, directly or through "
                                 "others): refused");
  }
  const int cutoffsBefore = cutoffs_;
  // A verdict that met the depth limit below it depends on the path it was reached by: not kept.
  auto remember = [&](RoutineVerdict v) {
    if (cutoffs_ == cutoffsBefore) done_.emplace(key, v);
    return v;
  };
  if (allowlisted(resolved)) {
    return remember({resolved, true, shown + " is allowlisted by name in the configuration"});
  }
  if (static_cast<int>(stack.size()) >= kMaxRoutineDepth) {
    ++cutoffs_;
    return remember(refused(resolved, shown + " is reached through more than " +
                                          std::to_string(kMaxRoutineDepth) +
                                          " nested functions and views: not checked; allowlist "
                                          "it by name if it only reads"));
  }
  auto rows = lookUp(conn_,
                     "SELECT ROUTINE_TYPE, ROUTINE_DEFINITION FROM information_schema.ROUTINES "
                     "WHERE ROUTINE_SCHEMA = ? AND ROUTINE_NAME = ?",
                     resolved);
  if (!rows) {
    return refused(resolved,
                   shown + ": its definition could not be read (" + rows.error().message + ")");
  }
  const std::vector<Json>* row = nullptr;
  for (const auto& r : rows->rows) {
    if (r.size() == 2 && textCell(r[0]) == "FUNCTION") row = &r;
  }
  if (row == nullptr) {
    return remember(refused(
        resolved, shown + " is an unknown function or not visible to this account (it needs "
                          "EXECUTE on it to call it)"));
  }
  const auto body = textCell((*row)[1]);
  if (!body) {
    return remember(refused(
        resolved,
        shown + ": its definition is hidden from this account, so it cannot be checked. MariaDB "
                "shows it to the function's definer, with SELECT on mysql.proc, or (11.3+) with "
                "SHOW CREATE ROUTINE; MySQL with SHOW_ROUTINE or global SELECT. Grant one of "
                "those, or allowlist the function by name if it only reads"));
  }
  const guard::Verdict v = guard::checkRoutineBody(*body, options_.dialect);
  if (!v.allowed) {
    return remember(refused(resolved, shown + " may write: its body is refused (" +
                                          std::string(guard::ruleId(v.rule)) + ": " + v.message +
                                          ")"));
  }
  stack.push_back(key);
  auto calls = judgeCalls(v, resolved, shown, stack);
  stack.pop_back();
  if (calls) return remember(*calls);
  return remember({resolved, true, shown + " only reads (its body was checked)"});
}

std::optional<RoutineVerdict> RoutineChecker::judgeView(const guard::Name& resolved,
                                                        std::vector<std::string>& stack) {
  const std::string shown = "view " + guard::displayName(resolved);
  const std::string key = keyOf('v', resolved);
  if (auto it = done_.find(key); it != done_.end()) return it->second;
  if (std::find(stack.begin(), stack.end(), key) != stack.end()) {
    return refused(resolved, shown + " refers to itself: refused");
  }
  const int cutoffsBefore = cutoffs_;
  auto remember = [&](RoutineVerdict v) {
    if (cutoffs_ == cutoffsBefore) done_.emplace(key, v);
    return v;
  };
  if (static_cast<int>(stack.size()) >= kMaxRoutineDepth) {
    ++cutoffs_;
    return remember(refused(resolved, shown + " is reached through more than " +
                                          std::to_string(kMaxRoutineDepth) +
                                          " nested functions and views: not checked"));
  }
  auto rows = lookUp(conn_,
                     "SELECT VIEW_DEFINITION FROM information_schema.VIEWS "
                     "WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                     resolved);
  if (!rows) {
    return refused(resolved,
                   shown + ": could not learn whether it is a view (" + rows.error().message + ")");
  }
  if (rows->rows.empty() || rows->rows[0].empty()) return std::nullopt;  // a table (or unseen)
  const auto definition = textCell(rows->rows[0][0]);
  if (!definition || definition->empty()) {
    return remember(refused(resolved, shown + ": its definition is hidden from this account "
                                              "(grant SHOW VIEW on it), so the functions it "
                                              "calls cannot be checked"));
  }
  const guard::Verdict v = guard::checkTemplate(*definition, options_.dialect);
  if (!v.allowed) {
    return remember(refused(resolved, shown + " is refused (" + std::string(guard::ruleId(v.rule)) +
                                          ": " + v.message + ")"));
  }
  stack.push_back(key);
  auto calls = judgeCalls(v, resolved, shown, stack);
  stack.pop_back();
  if (calls) return remember(*calls);
  return remember({resolved, true, shown + " only reads (its definition was checked)"});
}

// The first refused function or view that `verdict` (of a body or a view; unqualified names are in
// its schema) reaches, as a refusal of `owner` (shown as `what`); nullopt when all pass.
std::optional<RoutineVerdict> RoutineChecker::judgeCalls(const guard::Verdict& verdict,
                                                         const guard::Name& owner,
                                                         const std::string& what,
                                                         std::vector<std::string>& stack) {
  const std::string& schema = owner[0];
  for (const guard::Name& f : verdict.called_functions) {
    RoutineVerdict callee = judgeFunction(resolve(f, schema), stack);
    if (!callee.allowed) {
      return refused(owner, what + " calls " + guard::displayName(callee.name) +
                                ", which is refused: " + callee.reason);
    }
  }
  for (const guard::Name& r : verdict.relations) {
    auto view = judgeView(resolve(r, schema), stack);
    if (view && !view->allowed) {
      return refused(owner, what + " reads " + guard::displayName(view->name) +
                                ", which is refused: " + view->reason);
    }
  }
  return std::nullopt;
}

}  // namespace mcpdb::mysql
