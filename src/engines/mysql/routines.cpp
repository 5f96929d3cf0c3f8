#include "engines/mysql/routines.hpp"

#include <algorithm>
#include <utility>

#include "engines/mysql/doctor.hpp"
#include "engines/mysql/names.hpp"

namespace mcpdb::mysql {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return text;
}

char kindLetter(CatalogObject::Kind kind) {
  return kind == CatalogObject::Kind::View ? 'v' : 'f';
}

std::string keyOf(char kind, const guard::Name& resolved) {
  // Routine names are case-insensitive; view names are not (Linux servers).
  return std::string(1, kind) + resolved[0] + '\x1f' +
         (kind == 'f' ? lower(resolved[1]) : resolved[1]);
}

std::string shownOf(const CatalogObject& o) {
  return (o.kind == CatalogObject::Kind::View ? "view " : "function ") + guard::displayName(o.name);
}

bool judged(const CatalogObject& o) {
  return o.kind == CatalogObject::Kind::View || o.kind == CatalogObject::Kind::Function;
}

// The visible function `resolved` denotes among `objects` (schema exact, name any case).
const CatalogObject* findFunction(const std::vector<CatalogObject>& objects,
                                  const guard::Name& resolved) {
  for (const CatalogObject& o : objects) {
    if (o.kind == CatalogObject::Kind::Function && o.name[0] == resolved[0] &&
        lower(o.name[1]) == lower(resolved[1])) {
      return &o;
    }
  }
  return nullptr;
}

const CatalogObject* findView(const std::vector<CatalogObject>& objects,
                              const guard::Name& resolved) {
  for (const CatalogObject& o : objects) {
    if (o.kind == CatalogObject::Kind::View && o.name == resolved) return &o;
  }
  return nullptr;
}

RoutineVerdict refused(const guard::Name& name, std::string reason,
                       RefusalKind kind = RefusalKind::Unchecked) {
  return RoutineVerdict{name, false, std::move(reason), kind};
}

std::string unknownFunction(const guard::Name& resolved) {
  return "function " + guard::displayName(resolved) +
         " is an unknown function or not visible to this account (it needs EXECUTE on it to "
         "call it)";
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

std::vector<guard::Name> RoutineChecker::lookedUp() const {
  return {looked_up_.begin(), looked_up_.end()};
}

Result<std::vector<CatalogObject>> RoutineChecker::fetch(
    const std::vector<guard::Name>& candidates) {
  looked_up_.insert(candidates.begin(), candidates.end());
  auto objects = lookUpObjects(conn_, candidates);
  if (objects) {
    for (const CatalogObject& o : *objects) fingerprints_.insert(o.fingerprint);
  }
  return objects;
}

std::vector<RoutineVerdict> RoutineChecker::checkStatement(std::string_view sql,
                                                           const std::vector<guard::Name>& calls) {
  std::vector<RoutineVerdict> out;
  std::vector<std::string> stack;
  (void)judgeReach(sql, calls, options_.default_schema, stack, &out);
  return out;
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
  return judgeFunction({schema, name}, stack);
}

RoutineVerdict RoutineChecker::judgeFunction(const guard::Name& resolved,
                                             std::vector<std::string>& stack) {
  if (auto it = done_.find(keyOf('f', resolved)); it != done_.end()) return it->second;
  auto objects = fetch({resolved});
  if (!objects) {
    return refused(resolved, "function " + guard::displayName(resolved) +
                                 ": its definition could not be read (" +
                                 operatorText(objects.error()) + ")");
  }
  const CatalogObject* f = findFunction(*objects, resolved);
  if (f == nullptr) {
    if (allowlisted(resolved)) {
      return refused(resolved, unknownFunction(resolved) +
                                   "; it is allowlisted, but whether it runs with its definer's "
                                   "rights cannot be seen");
    }
    return refused(resolved, unknownFunction(resolved));
  }
  return judgeObject(*f, stack);
}

std::optional<RoutineVerdict> RoutineChecker::judgeView(const guard::Name& resolved,
                                                        std::vector<std::string>& stack) {
  if (auto it = done_.find(keyOf('v', resolved)); it != done_.end()) return it->second;
  auto objects = fetch({resolved});
  if (!objects) {
    return refused(resolved, "view " + guard::displayName(resolved) +
                                 ": could not learn whether it is a view (" +
                                 operatorText(objects.error()) + ")");
  }
  const CatalogObject* v = findView(*objects, resolved);
  if (v == nullptr) return std::nullopt;  // a table (or unseen)
  return judgeObject(*v, stack);
}

std::optional<std::string> RoutineChecker::definerProblem(const CatalogObject& object) {
  if (!object.definer_rights) return std::nullopt;
  auto it = definers_.find(object.definer);
  if (it == definers_.end()) {
    it = definers_.emplace(object.definer, definerRefusal(conn_, object.definer)).first;
  }
  return it->second;
}

RoutineVerdict RoutineChecker::judgeObject(const CatalogObject& o,
                                           std::vector<std::string>& stack) {
  const bool isView = o.kind == CatalogObject::Kind::View;
  const std::string shown = shownOf(o);
  const std::string key = keyOf(kindLetter(o.kind), o.name);
  if (auto it = done_.find(key); it != done_.end()) return it->second;
  if (std::find(stack.begin(), stack.end(), key) != stack.end()) {
    // Not remembered: the object that started the cycle is refused (and remembered) on return.
    return refused(o.name, isView ? shown + " refers to itself: refused"
                                  : shown +
                                        " is recursive (it calls itself, directly or through "
                                        "others): refused");
  }
  const int cutoffsBefore = cutoffs_;
  // A verdict that met the depth limit below it depends on the path it was reached by: not kept.
  auto remember = [&](RoutineVerdict v) {
    if (cutoffs_ == cutoffsBefore) done_.emplace(key, v);
    return v;
  };
  if (!isView && allowlisted(o.name)) {
    if (auto problem = definerProblem(o)) {
      return remember(refused(o.name,
                              shown +
                                  " is allowlisted by name, but it runs with its definer's rights "
                                  "(SQL SECURITY DEFINER) and " +
                                  *problem,
                              RefusalKind::Definer));
    }
    return remember({o.name, true, shown + " is allowlisted by name in the configuration"});
  }
  if (static_cast<int>(stack.size()) >= kMaxRoutineDepth) {
    ++cutoffs_;
    return remember(refused(o.name, shown + " is reached through more than " +
                                        std::to_string(kMaxRoutineDepth) +
                                        " nested functions and views: not checked" +
                                        (isView ? "" : "; allowlist it by name if it only reads")));
  }
  if (!o.definition) {
    return remember(refused(
        o.name,
        isView
            ? shown + ": its definition is hidden from this account (grant SHOW VIEW on it), so "
                      "the functions it calls cannot be checked"
            : shown + ": its definition is hidden from this account, so it cannot be checked. "
                      "MariaDB shows it to the function's definer, with SELECT on mysql.proc, or "
                      "(11.3+) with SHOW CREATE ROUTINE; MySQL with SHOW_ROUTINE or global "
                      "SELECT. Grant one of those, or allowlist the function by name if it only "
                      "reads"));
  }
  const guard::Verdict v = isView ? guard::checkTemplate(*o.definition, options_.dialect)
                                  : guard::checkRoutineBody(*o.definition, options_.dialect);
  if (!v.allowed) {
    return remember(refused(o.name,
                            shown +
                                (isView ? " is refused (" : " may write: its body is refused (") +
                                std::string(guard::ruleId(v.rule)) + ": " + v.message + ")",
                            RefusalKind::MayWrite));
  }
  stack.push_back(key);
  auto reach = judgeReach(*o.definition, v.called_functions, o.name[0], stack);
  stack.pop_back();
  if (reach) {
    return remember(refused(o.name, shown + reach->reason, reach->kind));
  }
  if (auto problem = definerProblem(o)) {
    return remember(refused(
        o.name, shown + " runs with its definer's rights (SQL SECURITY DEFINER) and " + *problem,
        RefusalKind::Definer));
  }
  return remember({o.name, true,
                   shown + (isView ? " only reads (its definition was checked)"
                                   : " only reads (its body was checked)")});
}

// Collects the names of `text`, looks them up together, and judges every view and function found
// and every function `calls` names. A refusal's reason starts with " calls " or " reads " (to
// follow the owner's name) unless `all` is given (the statement: each verdict is kept there).
std::optional<RoutineVerdict> RoutineChecker::judgeReach(std::string_view text,
                                                         const std::vector<guard::Name>& calls,
                                                         const std::string& schema,
                                                         std::vector<std::string>& stack,
                                                         std::vector<RoutineVerdict>* all) {
  const guard::NameCandidates names = guard::collectNames(text, schema);
  const guard::Name none{schema, ""};
  // The statement's own failures are verdicts of their own; a body's follow its owner's name.
  auto failed = [&](std::string reason) {
    if (all == nullptr) return refused(none, std::move(reason));
    all->push_back(refused(none, "the statement" + reason));
    return all->back();
  };
  if (!names.complete) return failed(" could not be read to its end: refused");
  auto objects = fetch(names.names);
  if (!objects) {
    return failed(" reaches names that could not be looked up (" + operatorText(objects.error()) +
                  ")");
  }
  std::optional<RoutineVerdict> first;
  auto note = [&](RoutineVerdict v, const char* how) {
    const bool ok = v.allowed;
    if (all != nullptr) all->push_back(v);
    if (!ok && !first) {
      first = all != nullptr ? v
                             : refused(v.name,
                                       std::string(how) + guard::displayName(v.name) +
                                           ", which is refused: " + v.reason,
                                       v.kind);
    }
    return ok || all != nullptr;  // the statement judges everything; a body stops at the first
  };
  for (const guard::Name& call : calls) {
    const guard::Name resolved = resolve(call, schema);
    if (findFunction(*objects, resolved) == nullptr &&
        !note(refused(resolved, unknownFunction(resolved)), " calls ")) {
      return first;
    }
  }
  for (const CatalogObject& o : *objects) {
    if (!judged(o) || o.kind != CatalogObject::Kind::Function) continue;
    if (!note(judgeObject(o, stack), " calls ")) return first;
  }
  for (const CatalogObject& o : *objects) {
    if (o.kind != CatalogObject::Kind::View) continue;
    if (!note(judgeObject(o, stack), " reads ")) return first;
  }
  return first;
}

}  // namespace mcpdb::mysql
