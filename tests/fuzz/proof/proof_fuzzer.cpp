// libFuzzer target: the read-only proof's graph (proof.hpp) over invented catalog answers. The
// fuzz input picks the statements and, for every request the prover sends, what the "catalog"
// answers: which objects a name resolves to (a few small object ids, so graphs share nodes and
// form cycles), and each object's properties (language, volatility, SECURITY DEFINER, built-in,
// extension, SQL bodies that call further names, dependencies, view definitions, policies, domain
// checks), including malformed rows a real catalog never sends. The prover must end (no cycle or
// answer keeps it asking), never crash or throw, give every statement a verdict, keep the guard's
// refusals, and give the same verdicts for the same answers. PostgreSQL's analysis (the second
// net) is invented the same way.

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engines/postgres/guard/guard.hpp"
#include "engines/postgres/proof.hpp"

namespace {

namespace proof = mcpdb::postgres::proof;
using mcpdb::Json;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

constexpr const char* kStatements[] = {
    "SELECT f(1)",
    "SELECT * FROM v",
    "SELECT a + b FROM t WHERE x = $1",
    "SELECT s.g(x)::dom FROM s.t",
    "SELECT count(*) FROM t TABLESAMPLE m(1)",
    "SELECT t.h FROM t",
    "SELECT lo_creat(-1)",
    "INSERT INTO t VALUES (1)",
    "SELECT f(g(h(1))), v.x FROM v JOIN w USING (x)",
};

constexpr const char* kBodies[] = {
    "SELECT 1",
    "SELECT f(1)",
    "SELECT g(x) FROM v",
    "SELECT * FROM w",
    "SELECT lo_creat(-1)",
    "SELECT pg_advisory_lock(1)",
    "INSERT INTO t VALUES (1)",
    "SELECT 1; SELECT h(2)",
    "x > 0 AND f(x)",
    "CHECK (VALUE > g(0))",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT h(1); END",
    "(((",
    "",
};

constexpr const char* kNames[] = {"f", "g", "h", "lower", "random", "dblink_exec", "nextval"};

// Everything the answers are made of comes from the fuzz input, in the order the prover asks.
class FakeCatalog {
 public:
  explicit FakeCatalog(FuzzedDataProvider& in) : in_(in) {}

  mcpdb::Result<std::vector<Json>> operator()(const Json& request) {
    if (in_.ConsumeIntegralInRange<int>(0, 40) == 0) {
      return mcpdb::makeError(mcpdb::Code::Unavailable, "the catalog went away");
    }
    std::vector<Json> rows;
    for (const char* kind : {"funcs", "attrs", "ops", "rels", "types", "tsm"}) {
      const Json& names = request.value(kind, Json::array());
      for (std::size_t i = 0; i < names.size(); ++i) {
        const int n = in_.ConsumeIntegralInRange<int>(0, 3);
        for (int k = 0; k < n; ++k) {
          const char* prefix = kPrefixes[in_.ConsumeIntegralInRange<int>(0, 3)];
          rows.push_back({{"k", "name"},
                          {"ref", std::string(kind) + ":" + std::to_string(i + 1)},
                          {"info", {{prefix, oid()}}}});
        }
      }
    }
    for (const char* prefix : kPrefixes) {
      for (const Json& id : request.value(std::string(prefix) + "_oids", Json::array())) {
        if (in_.ConsumeIntegralInRange<int>(0, 15) == 0) continue;  // gone from the catalog
        rows.push_back({{"k", prefix}, {"ref", id.dump()}, {"info", describe(prefix)}});
      }
    }
    if (request.value("implicit", false) && in_.ConsumeBool()) {
      rows.push_back({{"k", "implicit"}, {"ref", "1"}, {"info", {{"fn", oid()}}}});
    }
    if (in_.ConsumeIntegralInRange<int>(0, 20) == 0) rows.push_back(malformed());
    return rows;
  }

 private:
  static constexpr const char* kPrefixes[] = {"fn", "op", "rel", "type"};

  std::int64_t oid() { return in_.ConsumeIntegralInRange<std::int64_t>(1, 24); }

  Json oids() {
    Json out = Json::array();
    const int n = in_.ConsumeIntegralInRange<int>(0, 2);
    for (int i = 0; i < n; ++i) out.push_back(oid());
    return out;
  }

  std::string body() { return kBodies[in_.ConsumeIntegralInRange<std::size_t>(0, 12)]; }

  Json describe(const std::string& prefix) {
    if (prefix == "fn") {
      static constexpr const char* kLangs[] = {"sql", "c", "internal", "plpgsql"};
      static constexpr const char* kVolatility[] = {"v", "s", "i"};
      const std::string name = kNames[in_.ConsumeIntegralInRange<std::size_t>(0, 6)];
      Json info = {{"label", "s." + name + "(integer)"},
                   {"schema", "s"},
                   {"name", name},
                   {"lang", kLangs[in_.ConsumeIntegralInRange<std::size_t>(0, 3)]},
                   {"volatile", kVolatility[in_.ConsumeIntegralInRange<std::size_t>(0, 2)]},
                   {"secdef", in_.ConsumeBool()},
                   {"kind", in_.ConsumeBool() ? "f" : "a"},
                   {"builtin", in_.ConsumeBool()},
                   {"ext", in_.ConsumeBool() ? "" : "vector"},
                   {"atomic", in_.ConsumeBool()},
                   {"src", body()},
                   {"body", body()},
                   {"agg", oids()},
                   {"deps_fn", oids()},
                   {"deps_op", oids()},
                   {"deps_rel", oids()},
                   {"deps_type", oids()}};
      if (in_.ConsumeBool()) info["path"] = "search_path=s, \"T\"";
      return info;
    }
    if (prefix == "op") return {{"label", "s.+(integer, integer)"}, {"code", oid()}};
    if (prefix == "rel") {
      static constexpr const char* kKinds[] = {"r", "v", "m", "f", "S", "p"};
      Json policies = Json::array();
      if (in_.ConsumeBool()) {
        policies.push_back(
            {{"name", "p"}, {"qual", body()}, {"fn", oids()}, {"op", oids()}, {"rel", oids()}});
      }
      return {{"label", "s.r"},
              {"kind", kKinds[in_.ConsumeIntegralInRange<std::size_t>(0, 5)]},
              {"builtin", in_.ConsumeBool()},
              {"rls", in_.ConsumeBool()},
              {"viewdef", body()},
              {"deps_fn", oids()},
              {"deps_op", oids()},
              {"deps_rel", oids()},
              {"deps_type", oids()},
              {"policies", std::move(policies)}};
    }
    Json info = {{"label", "s.d"},   {"kind", in_.ConsumeBool() ? "d" : "b"}, {"input", oid()},
                 {"casts", oids()},  {"checks", Json::array({body()})},       {"deps_fn", oids()},
                 {"deps_op", oids()}};
    if (in_.ConsumeBool()) info["base"] = oid();
    return info;
  }

  // Rows a real catalog never sends: wrong types, unknown kinds, references out of range.
  Json malformed() {
    switch (in_.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: return {{"k", "name"}, {"ref", "funcs:x"}, {"info", {{"fn", "12"}}}};
      case 1: return {{"k", "name"}, {"ref", "funcs:99999999999999999999"}};
      case 2: return {{"k", "fn"}, {"ref", "not-an-oid"}, {"info", 7}};
      case 3: return {{"k", "op"}, {"ref", "3"}, {"info", {{"code", "abc"}}}};
      case 4: return {{"k", "type"}, {"ref", "4"}, {"info", {{"input", 1.5}, {"base", "x"}}}};
      case 5:
        return {{"k", "rel"}, {"ref", "5"}, {"info", {{"rls", true}, {"policies", {1, "p"}}}}};
      default: return Json::array({1, 2});
    }
  }

  FuzzedDataProvider& in_;
};

// PostgreSQL's analysis (the second net), from the fuzz input too: a tree naming a few small
// object ids (shared with the catalog's, so it meets objects the first net judged and ones it did
// not), a statement the server would not prepare, unreadable text, or no connection.
class FakeAnalysis {
 public:
  explicit FakeAnalysis(FuzzedDataProvider& in) : in_(in) {}

  mcpdb::Result<proof::Analysis> operator()(const std::string&) {
    switch (in_.ConsumeIntegralInRange<int>(0, 9)) {
      case 0: return mcpdb::makeError(mcpdb::Code::Unavailable, "the connection went away");
      case 1: return proof::Analysis{false, "", "SQLSTATE 42P01: no such relation", "42P01"};
      case 2: return proof::Analysis{true, in_.ConsumeRandomLengthString(100), "", ""};
      default: break;
    }
    std::string tree = "({QUERY :rtable ({RANGETBLENTRY :relid " + id() + " :coltypes (o " + id() +
                       ")}) :targetList ({TARGETENTRY :expr {OPEXPR " + ":opno " + id() +
                       " :opfuncid " + id() + " :opresulttype " + id() +
                       "}}) :sortClause ({SORTGROUPCLAUSE :eqop " + id() + " :sortop " + id() +
                       "})})";
    return proof::Analysis{true, tree, "", ""};
  }

 private:
  std::string id() { return std::to_string(in_.ConsumeIntegralInRange<int>(0, 24)); }

  FuzzedDataProvider& in_;
};

mcpdb::Result<proof::Report> proveOnce(const std::uint8_t* data, std::size_t size,
                                       std::vector<std::string>& statements) {
  FuzzedDataProvider in(data, size);
  statements.clear();
  const int n = in.ConsumeIntegralInRange<int>(1, 3);
  for (int i = 0; i < n; ++i) {
    statements.emplace_back(in.ConsumeBool()
                                ? kStatements[in.ConsumeIntegralInRange<std::size_t>(0, 8)]
                                : in.ConsumeRandomLengthString(200));
  }
  proof::Settings settings;
  settings.search_path = {"pg_catalog", "s"};
  if (in.ConsumeBool()) settings.allow_functions.push_back({"s.g", "reviewed"});
  FakeCatalog catalog(in);
  FakeAnalysis analysis(in);
  return proof::prove(statements, settings, std::ref(catalog), std::ref(analysis));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> statements;
  auto first = proveOnce(data, size, statements);
  if (!first) {
    // Only the catalog's own failure or a graph too deep; never an exception inside the prover.
    require(first.error().code != mcpdb::Code::Internal);
    require(!first.error().message.empty());
    return 0;
  }
  for (const std::string& sql : statements) {
    const auto it = first->verdicts.find(sql);
    require(it != first->verdicts.end());
    if (it->second) require(!it->second->object.empty() && !it->second->reason.empty());
    // What the guard refuses stays refused, whatever the catalog says.
    if (!mcpdb::postgres::guard::checkTemplate(sql).allowed) require(it->second.has_value());
  }
  require(first->round_trips <= 64);
  // The same answers, the same verdicts (a refusal names the same object each time).
  std::vector<std::string> again_statements;
  auto again = proveOnce(data, size, again_statements);
  require(again.ok());
  for (const auto& [sql, verdict] : first->verdicts) {
    const auto& other = again->verdicts.at(sql);
    require(verdict.has_value() == other.has_value());
    if (verdict) require(verdict->message() == other->message());
  }
  return 0;
}
