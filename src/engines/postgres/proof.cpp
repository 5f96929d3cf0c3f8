// One file, over 600 lines: the read-only proof is one recursive resolution (statement ->
// relations, functions, operators, casts, defaults, triggers, policies -> their definitions) over
// one catalog snapshot, and the Prover's steps share its work list and its verdicts; the catalog
// queries it sends are in runtime.cpp (catalogQuery), the parse in guard/.
#include "engines/postgres/proof.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <utility>

#include "engines/postgres/guard/denylist.hpp"
#include "engines/postgres/guard/guard.hpp"
#include "engines/postgres/query_tree.hpp"

namespace mcpdb::postgres::proof {

// clang-format off
const char* const kCatalogSql = R"sql(
WITH req AS (SELECT $1::jsonb AS r),
ids AS (
  SELECT DISTINCT k.kind, (x)::oid AS oid
  FROM req, (VALUES ('fn'), ('op'), ('rel'), ('type')) AS k(kind),
       pg_catalog.jsonb_array_elements_text(req.r->(k.kind || '_oids')) AS x
),
names AS (
  SELECT k.kind, w.i, w.e->'n' AS name, w.e->'p' AS path, (w.e->>'m')::boolean AS main
  FROM req, (VALUES ('funcs'), ('attrs'), ('ops'), ('rels'), ('types'), ('tsm')) AS k(kind),
       pg_catalog.jsonb_array_elements(req.r->k.kind) WITH ORDINALITY AS w(e, i)
),
named_nsp AS (
  SELECT n.kind, n.i, n.name, n.main, s.oid AS nsp
  FROM names n JOIN pg_catalog.pg_namespace s
    ON CASE WHEN pg_catalog.jsonb_array_length(n.name) = 1
            THEN s.nspname::text IN (SELECT pg_catalog.jsonb_array_elements_text(n.path))
            ELSE s.nspname::text = n.name->>-2 END
)
SELECT 'name' AS k, n.kind || ':' || n.i::text AS ref, pg_catalog.jsonb_build_object('fn', p.oid::int8) AS info
FROM named_nsp n JOIN pg_catalog.pg_proc p ON p.pronamespace = n.nsp AND p.proname = n.name->>-1
WHERE n.kind = 'funcs' OR (n.kind = 'attrs' AND p.pronargs = 1)
   OR (n.kind = 'tsm' AND p.prorettype = 'pg_catalog.tsm_handler'::pg_catalog.regtype)
UNION ALL
SELECT 'name', n.kind || ':' || n.i::text, pg_catalog.jsonb_build_object('op', o.oid::int8)
FROM named_nsp n JOIN pg_catalog.pg_operator o ON o.oprnamespace = n.nsp AND o.oprname = n.name->>-1
WHERE n.kind = 'ops'
  AND (pg_catalog.jsonb_array_length(n.name) > 1 OR NOT n.main OR (o.oprnamespace = 'pg_catalog'::pg_catalog.regnamespace AND o.oprowner = 10)
       OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_operator b WHERE b.oprname = o.oprname
                        AND b.oprnamespace = 'pg_catalog'::pg_catalog.regnamespace AND b.oprowner = 10))
UNION ALL
SELECT 'name', n.kind || ':' || n.i::text, pg_catalog.jsonb_build_object('rel', c.oid::int8)
FROM named_nsp n JOIN pg_catalog.pg_class c ON c.relnamespace = n.nsp AND c.relname = n.name->>-1
WHERE n.kind = 'rels'
UNION ALL
SELECT 'name', n.kind || ':' || n.i::text, pg_catalog.jsonb_build_object('type', t.oid::int8)
FROM named_nsp n JOIN pg_catalog.pg_type t ON t.typnamespace = n.nsp AND t.typname = n.name->>-1
WHERE n.kind = 'types'
UNION ALL
SELECT 'fn', p.oid::text, pg_catalog.jsonb_build_object(
  'label', pg_catalog.quote_ident(s.nspname) || '.' || pg_catalog.quote_ident(p.proname) || '(' || pg_catalog.oidvectortypes(p.proargtypes) || ')',
  'schema', s.nspname::text, 'name', p.proname::text, 'lang', l.lanname::text,
  'volatile', p.provolatile::text, 'secdef', p.prosecdef, 'kind', p.prokind::text,
  'builtin', b.builtin,
  'types', (SELECT pg_catalog.jsonb_agg(DISTINCT x::int8) FROM pg_catalog.unnest(p.proargtypes::pg_catalog.oid[] || p.prorettype) AS x),
  'ext', CASE WHEN NOT b.builtin THEN (SELECT e.extname::text FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
          WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid
            AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e' LIMIT 1) END,
  'src', CASE WHEN l.lanname = 'sql' AND p.prosqlbody IS NULL THEN p.prosrc END,
  'atomic', p.prosqlbody IS NOT NULL,
  'body', CASE WHEN p.prosqlbody IS NOT NULL THEN pg_catalog.pg_get_functiondef(p.oid) END,
  'path', (SELECT c FROM pg_catalog.unnest(p.proconfig) AS c WHERE c LIKE 'search_path=%' LIMIT 1),
  'agg', CASE WHEN NOT b.builtin THEN (SELECT pg_catalog.jsonb_agg(f::int8) FROM pg_catalog.pg_aggregate a,
            LATERAL (VALUES (a.aggtransfn), (a.aggfinalfn), (a.aggcombinefn), (a.aggserialfn),
                            (a.aggdeserialfn), (a.aggmtransfn), (a.aggminvtransfn), (a.aggmfinalfn)) AS v(f)
          WHERE a.aggfnoid = p.oid AND v.f::oid <> 0) END,
  'deps_fn', CASE WHEN NOT b.builtin THEN (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_depend d WHERE d.deptype = 'n' AND d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass) END,
  'deps_op', CASE WHEN NOT b.builtin THEN (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_depend d WHERE d.deptype = 'n' AND d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid AND d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass) END,
  'deps_rel', CASE WHEN NOT b.builtin THEN (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_depend d WHERE d.deptype = 'n' AND d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass) END,
  'deps_type', CASE WHEN NOT b.builtin THEN (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_depend d WHERE d.deptype = 'n' AND d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid AND d.refclassid = 'pg_catalog.pg_type'::pg_catalog.regclass) END)
FROM ids i JOIN pg_catalog.pg_proc p ON p.oid = i.oid JOIN pg_catalog.pg_namespace s ON s.oid = p.pronamespace
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
CROSS JOIN LATERAL (SELECT s.nspname = 'pg_catalog' AND p.proowner = 10 AS builtin) b
WHERE i.kind = 'fn'
UNION ALL
SELECT 'op', o.oid::text, pg_catalog.jsonb_build_object('label', pg_catalog.quote_ident(s.nspname) || '.' || o.oprname::text || '(' || pg_catalog.format_type(o.oprleft, NULL) || ', ' || pg_catalog.format_type(o.oprright, NULL) || ')', 'code', o.oprcode::oid::int8,
  'estimators', pg_catalog.jsonb_build_array(o.oprrest::oid::int8, o.oprjoin::oid::int8),
  'types', pg_catalog.jsonb_build_array(o.oprleft::int8, o.oprright::int8, o.oprresult::int8))
FROM ids i JOIN pg_catalog.pg_operator o ON o.oid = i.oid JOIN pg_catalog.pg_namespace s ON s.oid = o.oprnamespace
WHERE i.kind = 'op'
UNION ALL
SELECT 'rel', c.oid::text, pg_catalog.jsonb_build_object(
  'label', pg_catalog.quote_ident(s.nspname) || '.' || pg_catalog.quote_ident(c.relname), 'kind', c.relkind::text,
  'builtin', s.nspname IN ('pg_catalog', 'information_schema') AND c.relowner = 10,
  'ext', (SELECT e.extname::text FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
          WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = c.oid
            AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e' LIMIT 1),
  'rls', c.relrowsecurity,
  'cols', (SELECT pg_catalog.jsonb_agg(DISTINCT a.atttypid::int8) FROM pg_catalog.pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
  'rowtype', c.reltype::int8,
  'viewdef', CASE WHEN c.relkind = 'v' THEN pg_catalog.pg_get_viewdef(c.oid) END,
  'deps_fn', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d ON d.deptype = 'n' AND d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = w.oid WHERE w.ev_class = c.oid AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass),
  'deps_op', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d ON d.deptype = 'n' AND d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = w.oid WHERE w.ev_class = c.oid AND d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass),
  'deps_rel', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d ON d.deptype = 'n' AND d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = w.oid WHERE w.ev_class = c.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> c.oid),
  'deps_type', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d ON d.deptype = 'n' AND d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = w.oid WHERE w.ev_class = c.oid AND d.refclassid = 'pg_catalog.pg_type'::pg_catalog.regclass),
  'policies', (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('name', pol.polname::text,
       'qual', pg_catalog.pg_get_expr(pol.polqual, pol.polrelid),
       'fn', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_depend d WHERE d.deptype = 'n' AND d.classid = 'pg_catalog.pg_policy'::pg_catalog.regclass AND d.objid = pol.oid AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass),
       'op', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_depend d WHERE d.deptype = 'n' AND d.classid = 'pg_catalog.pg_policy'::pg_catalog.regclass AND d.objid = pol.oid AND d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass),
       'rel', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_depend d WHERE d.deptype = 'n' AND d.classid = 'pg_catalog.pg_policy'::pg_catalog.regclass AND d.objid = pol.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> c.oid)))
     FROM pg_catalog.pg_policy pol WHERE pol.polrelid = c.oid AND pol.polcmd IN ('r', '*')))
FROM ids i JOIN pg_catalog.pg_class c ON c.oid = i.oid JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace
WHERE i.kind = 'rel'
UNION ALL
SELECT 'type', t.oid::text, pg_catalog.jsonb_build_object(
  'label', pg_catalog.format_type(t.oid, NULL), 'kind', t.typtype::text, 'builtin', tb.builtin,
  'io', CASE WHEN NOT tb.builtin THEN pg_catalog.jsonb_build_array(t.typinput::oid::int8, t.typoutput::oid::int8, t.typreceive::oid::int8, t.typsend::oid::int8,
          t.typmodin::oid::int8, t.typmodout::oid::int8, t.typsubscript::oid::int8) END,
  'elem', CASE WHEN NOT tb.builtin THEN pg_catalog.jsonb_build_array(t.typelem::int8, t.typarray::int8) END,
  'attrs', CASE WHEN NOT tb.builtin AND t.typrelid <> 0 THEN (SELECT pg_catalog.jsonb_agg(DISTINCT a.atttypid::int8) FROM pg_catalog.pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) END,
  'range', CASE WHEN NOT tb.builtin THEN (SELECT pg_catalog.jsonb_build_array(r.rngsubtype::int8, r.rngcanonical::oid::int8, r.rngsubdiff::oid::int8) FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid OR r.rngmultitypid = t.oid LIMIT 1) END,
  'casts', CASE WHEN NOT tb.builtin THEN (SELECT pg_catalog.jsonb_agg(DISTINCT k.castfunc::int8) FROM pg_catalog.pg_cast k
            WHERE (k.casttarget = t.oid OR k.castsource = t.oid) AND k.castfunc <> 0) END,
  'cast_types', CASE WHEN NOT tb.builtin THEN (SELECT pg_catalog.jsonb_agg(DISTINCT CASE WHEN k.casttarget = t.oid THEN k.castsource ELSE k.casttarget END::int8)
            FROM pg_catalog.pg_cast k WHERE k.casttarget = t.oid OR k.castsource = t.oid) END,
  'ops', (SELECT pg_catalog.jsonb_agg(o.oid::int8) FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace os ON os.oid = o.oprnamespace
          WHERE (o.oprleft = t.oid OR o.oprright = t.oid) AND NOT (os.nspname = 'pg_catalog' AND o.oprowner = 10)
            AND (NOT tb.builtin OR (os.nspname::text IN (SELECT pg_catalog.jsonb_array_elements_text(req.r->'path'))
                                    AND o.oprname::text IN (SELECT pg_catalog.jsonb_array_elements_text(req.r->'op_names'))
                                    AND EXISTS (SELECT 1 FROM pg_catalog.pg_operator b WHERE b.oprname = o.oprname
                                                  AND b.oprnamespace = 'pg_catalog'::pg_catalog.regnamespace AND b.oprowner = 10)))),
  'procs', CASE WHEN NOT tb.builtin THEN (SELECT pg_catalog.jsonb_agg(DISTINCT a.amproc::oid::int8) FROM pg_catalog.pg_amproc a
            WHERE a.amproclefttype = t.oid OR a.amprocrighttype = t.oid) END,
  'base', CASE WHEN t.typtype = 'd' THEN t.typbasetype::int8 END,
  'checks', (SELECT pg_catalog.jsonb_agg(pg_catalog.pg_get_constraintdef(k.oid)) FROM pg_catalog.pg_constraint k WHERE k.contypid = t.oid AND k.contype = 'c'),
  'deps_fn', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_depend d ON d.deptype = 'n' AND d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND d.objid = k.oid WHERE k.contypid = t.oid AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass),
  'deps_op', (SELECT pg_catalog.jsonb_agg(DISTINCT d.refobjid::int8) FROM pg_catalog.pg_constraint k JOIN pg_catalog.pg_depend d ON d.deptype = 'n' AND d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND d.objid = k.oid WHERE k.contypid = t.oid AND d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass))
FROM req, ids i JOIN pg_catalog.pg_type t ON t.oid = i.oid
CROSS JOIN LATERAL (SELECT (t.typnamespace = 'pg_catalog'::pg_catalog.regnamespace AND t.typowner = 10)
  OR EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
             WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND d.objid = t.oid
               AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
               AND e.extname::text IN (SELECT pg_catalog.jsonb_array_elements_text(req.r->'trusted'))) AS builtin) tb
WHERE i.kind = 'type'
)sql";
// clang-format on

namespace {

using guard::Name;

// Built-in VOLATILE functions that read only the clock or the session's random state: calling
// them changes nothing another call can see.
//  - random: the next number of the session's generator (the seed is set only by setseed, which is
//    refused);
//  - gen_random_uuid: fresh bytes from the operating system's random source;
//  - clock_timestamp, timeofday: the current time.
//  - pg_relation_size, pg_table_size, pg_indexes_size, pg_total_relation_size, pg_database_size,
//    pg_tablespace_size: the size of files on disk (VOLATILE because files change under a
//    snapshot; they read file sizes and write nothing);
//  - system, bernoulli: the TABLESAMPLE methods shipped with PostgreSQL (their handlers return
//    the sampling routines, which read pages and a seeded random state of their own).
constexpr std::string_view kHarmlessVolatile[] = {
    "random",           "gen_random_uuid",    "clock_timestamp", "timeofday",
    "pg_relation_size", "pg_table_size",      "pg_indexes_size", "pg_total_relation_size",
    "pg_database_size", "pg_tablespace_size", "system",          "bernoulli"};

// pg_type ids (pg_type.dat) of the types every statement may use without naming them: those of
// literals and of bound parameters (bool, bytea, name, int8, int2, int4, text, oid, json, float4,
// float8, unknown, varchar, numeric, jsonb, and the array types a call binds) and the polymorphic
// pseudo-types (any, anyelement, anyarray, anynonarray, anyenum, anyrange, anymultirange,
// anycompatible and its kin, record), over which a user-defined operator or cast applies to
// every type.
constexpr std::int64_t kEveryStatementTypes[] = {
    16,   17,   19,   20,   21,   23,   25,   26,   114,  700,  701,  705,  1043, 1700, 3802, 1000,
    1016, 1009, 1022, 2276, 2283, 2277, 2776, 3500, 3831, 4537, 5077, 5078, 5079, 5080, 4538, 2249};

// The depth at which the proof gives up (a view over a view ... this deep is refused).
constexpr int kMaxLevels = 64;

enum class Kind { Funcs, Attrs, Ops, Rels, Types, Tsm };
constexpr std::pair<Kind, const char*> kKinds[] = {
    {Kind::Funcs, "funcs"}, {Kind::Attrs, "attrs"}, {Kind::Ops, "ops"},
    {Kind::Rels, "rels"},   {Kind::Types, "types"}, {Kind::Tsm, "tsm"},
};

std::string joined(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

std::string withoutSpaces(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += c;
  }
  return out;
}

std::vector<std::int64_t> oids(const Json& info, const char* key) {
  std::vector<std::int64_t> out;
  const auto it = info.find(key);
  if (it == info.end() || !it->is_array()) return out;
  for (const Json& v : *it) {
    if (v.is_number_integer()) out.push_back(v.get<std::int64_t>());
  }
  return out;
}

// One object id; 0 (none) when absent or not an integer. The catalog query always writes ids as
// integers; anything else is read as "no object", never as an exception.
std::int64_t oidOf(const Json& info, const char* key) {
  const auto it = info.find(key);
  return it != info.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// A decimal number in text (a reference or an id); nullopt for anything else.
std::optional<std::int64_t> number(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string text(const Json& info, const char* key) {
  const auto it = info.find(key);
  return it != info.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool flag(const Json& info, const char* key) {
  const auto it = info.find(key);
  return it != info.end() && it->is_boolean() && it->get<bool>();
}

// "search_path=a, \"B\"" -> {"a", "B"} (quotes removed); empty when absent.
std::vector<std::string> pathSetting(const std::string& setting) {
  std::vector<std::string> out;
  const auto eq = setting.find('=');
  if (eq == std::string::npos) return out;
  std::string cur;
  bool quoted = false;
  for (char c : setting.substr(eq + 1)) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ' || quoted) {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

struct Node {
  std::string label;
  std::optional<std::string> refused;  // the reason
  bool shown = true;                   // part of a "via" chain (names are not)
  std::vector<std::string> edges;
};

struct PendingName {
  std::string node;
  Name name;
  std::vector<std::string> path;
};

class Prover {
 public:
  Prover(const Settings& settings, const CatalogFn& catalog, const AnalyzeFn& analyze)
      : settings_(settings), catalog_(catalog), analyze_(analyze) {
    path_ = settings_.search_path;
  }

  Result<Report> run(const std::vector<std::string>& statements) {
    const auto start = std::chrono::steady_clock::now();
    Report report;
    std::vector<std::pair<std::string, std::string>> roots;  // statement, node id
    bool any_allowed = false;
    // Types no text names yet every statement may use (literals, parameters as bound, the
    // polymorphic pseudo-types): what is defined over them belongs to every closure.
    nodes_["implicit"] = Node{"a type every statement may use", std::nullopt, false, {}};
    for (const std::string& sql : statements) {
      if (report.verdicts.contains(sql)) continue;
      report.verdicts[sql] = std::nullopt;
      const std::string id = "stmt:" + std::to_string(roots.size());
      roots.emplace_back(sql, id);
      Node root{"the statement", std::nullopt, false, {"implicit"}};
      const guard::Verdict v = guard::checkTemplate(sql);
      if (!v.allowed) root.refused = "is refused by the SQL guard: " + v.message;
      nodes_[id] = std::move(root);
      if (v.allowed) addReferences(id, v.references, path_);
      any_allowed = any_allowed || v.allowed;
    }
    // Only when some statement is to be judged: no statements, no catalog query.
    if (any_allowed) {
      for (std::int64_t t : kEveryStatementTypes) addOid("implicit", "type", t);
    }
    // The first net: everything the statements name, and the closure of the types they reach.
    if (auto st = follow(report); !st) return st.error();
    // The second net, only for statements the first one proved (preparing one can already run a
    // type's input function or a domain's check): what PostgreSQL resolved each one to.
    std::vector<Unseen> unseen;
    for (const auto& [sql, id] : roots) {
      if (attribute(id)) continue;
      auto analysed = analyse(sql, id, report, unseen);
      if (!analysed) return analysed.error();
    }
    if (auto st = follow(report); !st) return st.error();
    // A type PostgreSQL used that the closure did not reach: its input function or check ran
    // when the statement was prepared, unjudged. Built-in types run only built-in code.
    for (const Unseen& u : unseen) {
      if (builtin_types_.contains(u.type)) continue;
      nodes_[u.node].refused = "uses " + nodes_[u.type].label +
                               ", which the proof's closure of the statement's types did not "
                               "reach (so it was not judged before the statement was prepared)";
    }
    for (const auto& [sql, id] : roots) report.verdicts[sql] = attribute(id);
    report.objects = described_.size();
    report.analysed = analysed_;
    report.unfit = unfit_;
    report.unexpected = unexpected_;
    report.took = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    return report;
  }

  // What the second net found for a statement that the first one had not reached.
  struct Unseen {
    std::string node;  // the statement's analysis node
    std::string type;  // "type:N"
  };

 private:
  // Catalog round trips until nothing is pending.
  Status follow(Report& report) {
    for (int level = 0; hasPending(); ++level) {
      if (level >= kMaxLevels) {
        return makeError(Code::FailedPrecondition,
                         "the objects the statements reach nest deeper than " +
                             std::to_string(kMaxLevels) + " levels");
      }
      auto rows = catalog_(request());
      ++report.round_trips;
      if (!rows) return rows.error();
      absorb(*rows);
    }
    return {};
  }

  // Every object id PostgreSQL's analysis of the statement names becomes an edge of the
  // statement's graph, judged by the same rules; one the first net had not reached is counted
  // (and, for a user-defined type, refused once described). False only when the analysis could
  // not be asked for at all.
  Status analyse(const std::string& sql, const std::string& root, Report& report,
                 std::vector<Unseen>& unseen) {
    const std::string node = root + ":analysis";
    nodes_[node] = Node{"PostgreSQL's analysis of the statement", std::nullopt, true, {}};
    if (!analyze_) {
      nodes_[node].refused = "could not be asked for (no analysis is configured)";
      nodes_[root].edges.push_back(node);
      return {};
    }
    const std::set<std::string> reached = reach(root);
    nodes_[root].edges.push_back(node);
    auto analysis = analyze_(sql);
    ++report.analyses;
    if (!analysis) return analysis.error();
    if (!analysis->prepared) {
      // A statement that does not fit the catalog cannot be prepared at call time either (the
      // same text, types and path): the call gets the server's own error. Any other failure (a
      // timeout, a lock) is refused: nothing says what the statement would call.
      if (analysis->sqlstate.size() == 5 && analysis->sqlstate.starts_with("42")) {
        ++unfit_;
        return {};
      }
      nodes_[node].refused =
          "failed: PostgreSQL could not prepare the statement (" + analysis->failure + ")";
      return {};
    }
    auto tree = readQueryTree(analysis->tree);
    if (!tree) {
      nodes_[node].refused = "could not be read: " + tree.error().message;
      return {};
    }
    ++analysed_;
    const auto add = [&](const char* prefix, const std::set<std::int64_t>& ids) {
      for (std::int64_t oid : ids) {
        const std::string id = std::string(prefix) + ":" + std::to_string(oid);
        if (!reached.contains(id)) {
          ++unexpected_;
          if (std::string_view(prefix) == "type") unseen.push_back(Unseen{node, id});
        }
        addOid(node, prefix, oid);
      }
    };
    add("fn", tree->functions);
    add("op", tree->operators);
    add("rel", tree->relations);
    add("type", tree->types);
    return {};
  }

  // Every node a statement's graph reaches now.
  std::set<std::string> reach(const std::string& root) const {
    std::set<std::string> seen;
    std::vector<std::string> stack{root};
    while (!stack.empty()) {
      const std::string id = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(id).second) continue;
      const auto it = nodes_.find(id);
      if (it == nodes_.end()) continue;
      for (const std::string& e : it->second.edges) stack.push_back(e);
    }
    return seen;
  }

  void addReferences(const std::string& from, const guard::References& r,
                     const std::vector<std::string>& path) {
    for (const Name& n : r.functions) addName(from, Kind::Funcs, n, path, "function ");
    for (const Name& n : r.attribute_functions) addName(from, Kind::Attrs, n, path, "function ");
    for (const Name& n : r.operators) {
      if (!n.empty()) op_names_.insert(n.back());
      addName(from, Kind::Ops, n, path, "operator ");
    }
    for (const Name& n : r.relations) addName(from, Kind::Rels, n, path, "relation ");
    for (const Name& n : r.types) addName(from, Kind::Types, n, path, "type ");
    for (const Name& n : r.tablesample) addName(from, Kind::Tsm, n, path, "TABLESAMPLE method ");
  }

  void addName(const std::string& from, Kind kind, const Name& name,
               const std::vector<std::string>& path, const char* what) {
    const std::string id = "name:" + std::to_string(static_cast<int>(kind)) + ":" +
                           joined(name, "\x1f") + ":" + joined(path, "\x1f");
    nodes_[from].edges.push_back(id);
    if (nodes_.contains(id)) return;
    nodes_[id] = Node{what + guard::displayName(name), std::nullopt, false, {}};
    // The session's temporary schema (pg_temp, or its real name pg_temp_N) holds objects no other
    // session can see, so no proof can judge them; the pinned search_path never finds them first.
    if (name.size() >= 2 && name[name.size() - 2].starts_with("pg_temp")) {
      nodes_[id].refused = "is in the session's temporary schema, which no proof can see";
      return;
    }
    pending_names_[kind].push_back(PendingName{id, name, path});
  }

  void addOid(const std::string& from, const char* prefix, std::int64_t oid) {
    if (oid == 0) return;
    const std::string id = std::string(prefix) + ":" + std::to_string(oid);
    nodes_[from].edges.push_back(id);
    if (nodes_.contains(id)) return;
    nodes_[id] = Node{id, std::nullopt, true, {}};
    pending_oids_[prefix].insert(oid);
  }

  void addOids(const std::string& from, const char* prefix, const Json& info, const char* key) {
    for (std::int64_t oid : oids(info, key)) addOid(from, prefix, oid);
  }

  bool hasPending() const {
    for (const auto& [k, v] : pending_names_) {
      if (!v.empty()) return true;
    }
    for (const auto& [k, v] : pending_oids_) {
      if (!v.empty()) return true;
    }
    return false;
  }

  Json request() {
    Json req = Json::object();
    asked_names_ = std::move(pending_names_);
    pending_names_.clear();
    for (const auto& [kind, key] : kKinds) {
      Json list = Json::array();
      for (const PendingName& p : asked_names_[kind])
        list.push_back({{"n", p.name}, {"p", p.path}, {"m", p.path == path_}});
      req[key] = std::move(list);
    }
    asked_oids_ = std::move(pending_oids_);
    pending_oids_.clear();
    for (const char* prefix : {"fn", "op", "rel", "type"}) {
      Json list = Json::array();
      for (std::int64_t oid : asked_oids_[prefix]) list.push_back(oid);
      req[std::string(prefix) + "_oids"] = std::move(list);
    }
    req["path"] = path_;
    req["trusted"] = settings_.trusted_extensions;
    req["op_names"] = op_names_;
    return req;
  }

  void absorb(const std::vector<Json>& rows) {
    std::set<std::string> answered;
    for (const Json& row : rows) {
      const std::string k = text(row, "k");
      const std::string ref = text(row, "ref");
      const Json info =
          row.contains("info") && row["info"].is_object() ? row["info"] : Json::object();
      if (k == "name") {
        const auto colon = ref.find(':');
        if (colon == std::string::npos) continue;
        const std::string kind_key = ref.substr(0, colon);
        const auto i = number(std::string_view(ref).substr(colon + 1));
        if (!i) continue;
        for (const auto& [kind, key] : kKinds) {
          if (kind_key != key || *i <= 0 ||
              static_cast<std::uint64_t>(*i) > asked_names_[kind].size()) {
            continue;
          }
          const std::string& from = asked_names_[kind][static_cast<std::size_t>(*i - 1)].node;
          for (const char* prefix : {"fn", "op", "rel", "type"})
            addOid(from, prefix, oidOf(info, prefix));
        }
      } else if (k == "fn" || k == "op" || k == "rel" || k == "type") {
        // Only answers to what was asked: an object id the request did not name is ignored.
        const auto oid = number(ref);
        if (!oid || !asked_oids_[k].contains(*oid)) continue;
        const std::string id = k + ":" + std::to_string(*oid);
        answered.insert(id);
        described_.insert(id);
        if (k == "fn") judgeFunction(id, info);
        if (k == "op") judgeOperator(id, info);
        if (k == "rel") judgeRelation(id, info);
        if (k == "type") judgeType(id, info);
      }
    }
    // Overloads in a stable order (by object id), so that a refusal names the same one each time.
    for (const auto& [kind, asked] : asked_names_) {
      for (const PendingName& p : asked) {
        auto& edges = nodes_[p.node].edges;
        std::sort(edges.begin(), edges.end(), [](const std::string& a, const std::string& b) {
          const auto ca = a.find(':'), cb = b.find(':');
          if (a.compare(0, ca, b, 0, cb) != 0) return a < b;
          return number(std::string_view(a).substr(ca + 1)).value_or(0) <
                 number(std::string_view(b).substr(cb + 1)).value_or(0);
        });
      }
    }
    for (const auto& [prefix, set] : asked_oids_) {
      for (std::int64_t oid : set) {
        const std::string id = prefix + ":" + std::to_string(oid);
        if (answered.contains(id)) continue;
        described_.insert(id);
        nodes_[id].refused = "is no longer in the catalog (it changed during the proof)";
      }
    }
  }

  bool allowlisted(const std::string& signature) const {
    const std::string sig = withoutSpaces(signature);
    const std::string bare = sig.substr(0, sig.find('('));
    return std::any_of(settings_.allow_functions.begin(), settings_.allow_functions.end(),
                       [&](const AllowedFunction& a) {
                         const std::string want = withoutSpaces(a.function);
                         return want == sig || want == bare;
                       });
  }

  void judgeFunction(const std::string& id, const Json& info) {
    Node& node = nodes_[id];
    const std::string signature = text(info, "label");
    node.label = "function " + signature;
    // Its argument and result types join the closure (what is defined over them may be called).
    addOids(id, "type", info, "types");
    const std::string name = text(info, "name");
    const std::string ext = text(info, "ext");
    const bool builtin = flag(info, "builtin");
    const bool trusted =
        builtin || (!ext.empty() && std::find(settings_.trusted_extensions.begin(),
                                              settings_.trusted_extensions.end(),
                                              ext) != settings_.trusted_extensions.end());
    if (const guard::DeniedFunction* d = guard::findDeniedFunction(name)) {
      node.refused = "is on the denylist (" + std::string(d->reason) + ")";
      return;
    }
    if (allowlisted(signature)) return;  // the operator vouches for it, with a reason
    if (flag(info, "secdef")) {
      node.refused = "is SECURITY DEFINER: it runs with its owner's privileges";
      return;
    }
    if (trusted) {
      const bool harmless =
          builtin && std::find(std::begin(kHarmlessVolatile), std::end(kHarmlessVolatile), name) !=
                         std::end(kHarmlessVolatile);
      if (text(info, "volatile") == "v" && !harmless) {
        node.refused =
            "is VOLATILE: it may change state (data elsewhere, large objects, locks, "
            "settings, sequences)";
      }
      return;  // judged by its catalog properties; nothing below it is followed
    }
    // Not trusted: follow what it reaches, and an aggregate's support functions.
    addOids(id, "fn", info, "agg");
    const std::string lang = text(info, "lang");
    if (lang != "sql") {
      node.refused = lang == "c" || lang == "internal"
                         ? "is a C function outside pg_catalog: its code cannot be inspected"
                         : "is written in " + lang +
                               ": its body cannot be proved read-only (if it is, list it in "
                               "postgres.proof.allow_functions with a reason)";
      if (text(info, "kind") == "a" && lang == "internal") node.refused.reset();  // an aggregate
      return;
    }
    std::vector<std::string> path = pathSetting(text(info, "path"));
    if (path.empty()) path = path_;
    if (flag(info, "atomic")) {
      if (!addBody(id, text(info, "body"), guard::BodyKind::AtomicFunction, path, "a body")) return;
      addOids(id, "fn", info, "deps_fn");
      addOids(id, "op", info, "deps_op");
      addOids(id, "rel", info, "deps_rel");
      return;
    }
    // A denylisted call in the body is refused as the function it resolves to (named).
    addBody(id, text(info, "src"), guard::BodyKind::SqlFunction, path, "a body");
  }

  // Names in catalog text (a view's definition, a policy's or a check's expression, an atomic
  // body): pg_depend records no dependency on built-in objects, so the text is parsed again to see
  // them. False (and the node refused) when the text is not a read-only SELECT.
  bool addBody(const std::string& id, const std::string& body, guard::BodyKind kind,
               const std::vector<std::string>& path, const char* what) {
    const guard::Verdict v = guard::analyseBody(body, kind);
    if (!v.allowed && v.rule != guard::Rule::DeniedFunction) {
      nodes_[id].refused = std::string("has ") + what + " that is not a read-only SELECT (" +
                           std::string(guard::ruleId(v.rule)) + ": " + v.message + ")";
      return false;
    }
    addReferences(id, v.references, path);
    return true;
  }

  void judgeOperator(const std::string& id, const Json& info) {
    nodes_[id].label = "operator " + text(info, "label");
    addOid(id, "fn", oidOf(info, "code"));
    // Its selectivity estimators run while a statement using it is planned.
    addOids(id, "fn", info, "estimators");
    addOids(id, "type", info, "types");
  }

  void judgeRelation(const std::string& id, const Json& info) {
    Node& node = nodes_[id];
    const std::string kind = text(info, "kind");
    const std::string what = kind == "v"   ? "view "
                             : kind == "m" ? "materialized view "
                             : kind == "f" ? "foreign table "
                             : kind == "S" ? "sequence "
                                           : "table ";
    node.label = what + text(info, "label");
    const std::string ext = text(info, "ext");
    if (flag(info, "builtin") ||
        (!ext.empty() &&
         std::find(settings_.trusted_extensions.begin(), settings_.trusted_extensions.end(), ext) !=
             settings_.trusted_extensions.end())) {
      return;
    }
    if (kind == "f") {
      node.refused = "is read through a foreign-data wrapper, which connects elsewhere";
      return;
    }
    // The types of its columns and its row type join the statement's closure.
    addOids(id, "type", info, "cols");
    addOid(id, "type", oidOf(info, "rowtype"));
    if (kind == "v" &&
        !addBody(id, text(info, "viewdef"), guard::BodyKind::View, path_, "a definition")) {
      return;
    }
    addOids(id, "fn", info, "deps_fn");
    addOids(id, "op", info, "deps_op");
    addOids(id, "rel", info, "deps_rel");
    addOids(id, "type", info, "deps_type");
    if (!flag(info, "rls")) return;
    const auto policies = info.find("policies");
    if (policies == info.end() || !policies->is_array()) return;
    for (const Json& p : *policies) {
      if (!p.is_object()) continue;
      const std::string pid = id + ":policy:" + text(p, "name");
      nodes_[id].edges.push_back(pid);
      nodes_[pid] =
          Node{"row-level security policy " + text(p, "name") + " on " + text(info, "label"),
               std::nullopt,
               true,
               {}};
      if (p.contains("qual") && p["qual"].is_string() &&
          !addBody(pid, p["qual"].get<std::string>(), guard::BodyKind::Expression, path_,
                   "an expression")) {
        continue;
      }
      addOids(pid, "fn", p, "fn");
      addOids(pid, "op", p, "op");
      addOids(pid, "rel", p, "rel");
    }
  }

  void judgeType(const std::string& id, const Json& info) {
    nodes_[id].label = "type " + text(info, "label");
    // Built-in, or of a trusted extension: judged like the built-ins (what they define is
    // judged by its catalog properties where reached), so only what users added over it counts.
    if (flag(info, "builtin")) builtin_types_.insert(id);
    // Whatever the statement's text says, PostgreSQL may call over a type in the closure: its
    // input/output functions (and type modifier, subscript), casts from and to it, operators taking
    // it (those it supplies for USING, IN, DISTINCT, sorting and grouping among them) and the
    // support functions of operator classes over it. Built-in types list only what users added.
    addOids(id, "fn", info, "io");
    addOids(id, "fn", info, "casts");
    addOids(id, "fn", info, "procs");
    addOids(id, "op", info, "ops");
    // The types it is made of or turns into: an array's element and the type's own array, a
    // composite's attributes, a domain's base, a range's subtype, the other side of its casts.
    addOids(id, "type", info, "elem");
    addOids(id, "type", info, "attrs");
    addOids(id, "type", info, "cast_types");
    if (const auto range = oids(info, "range"); !range.empty()) {
      addOid(id, "type", range[0]);
      for (std::size_t i = 1; i < range.size(); ++i) addOid(id, "fn", range[i]);
    }
    addOid(id, "type", oidOf(info, "base"));
    addOids(id, "fn", info, "deps_fn");
    addOids(id, "op", info, "deps_op");
    if (const auto checks = info.find("checks"); checks != info.end() && checks->is_array()) {
      for (const Json& c : *checks) {
        if (!c.is_string()) continue;
        std::string expr = c.get<std::string>();  // "CHECK (...)" [NOT VALID]
        if (expr.rfind("CHECK ", 0) == 0) expr = expr.substr(6);
        if (expr.ends_with(" NOT VALID")) expr.resize(expr.size() - 10);
        if (!addBody(id, expr, guard::BodyKind::Expression, path_, "a check")) return;
      }
    }
  }

  // The first refused object a statement reaches (depth first, in the order found), with the
  // chain of objects that leads to it.
  std::optional<Refusal> attribute(const std::string& root) const {
    std::set<std::string> seen;
    std::vector<std::pair<std::string, std::vector<std::string>>> stack{{root, {}}};
    while (!stack.empty()) {
      auto [id, chain] = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(id).second) continue;
      const auto it = nodes_.find(id);
      if (it == nodes_.end()) continue;
      const Node& node = it->second;
      if (node.refused) {
        if (id == root) return Refusal{"the statement", *node.refused, ""};
        return Refusal{node.label, *node.refused, joined(chain, " -> ")};
      }
      std::vector<std::string> next = chain;
      if (node.shown) next.push_back(node.label);
      for (auto e = node.edges.rbegin(); e != node.edges.rend(); ++e) stack.emplace_back(*e, next);
    }
    return std::nullopt;
  }

  const Settings& settings_;
  const CatalogFn& catalog_;
  const AnalyzeFn& analyze_;
  std::set<std::string> builtin_types_;  // "type:N" of types PostgreSQL ships
  // Operator names a user-defined operator over a built-in type may be reached by: the ones
  // PostgreSQL supplies itself (USING, IN, CASE, NULLIF, IS DISTINCT FROM, BETWEEN, LIKE, row
  // comparisons) and every name the statements and bodies write.
  std::set<std::string> op_names_ = {
      "=", "<>", "<", ">", "<=", ">=", "~~", "~~*", "!~~", "!~~*", "~", "!~"};
  int analysed_ = 0;
  int unfit_ = 0;
  std::size_t unexpected_ = 0;
  std::vector<std::string> path_;
  std::unordered_map<std::string, Node> nodes_;
  std::map<Kind, std::vector<PendingName>> pending_names_, asked_names_;
  std::map<std::string, std::set<std::int64_t>> pending_oids_, asked_oids_;
  std::set<std::string> described_;
};

}  // namespace

std::string Refusal::message() const {
  std::string out = object + " " + reason;
  if (!via.empty()) out += " (reached through " + via + ")";
  return out;
}

Result<Report> prove(const std::vector<std::string>& statements, const Settings& settings,
                     const CatalogFn& catalog, const AnalyzeFn& analyze) {
  // The prover reads every answer defensively and throws on none (its fuzz target drives it with
  // malformed answers and checks this code is never returned); the catch keeps a mistake there
  // from ending the process on the background thread that proves again. Fails closed.
  try {
    Prover prover(settings, catalog, analyze);
    return prover.run(statements);
  } catch (const std::exception&) {
    return makeError(Code::Internal, "the read-only proof failed on an unexpected catalog answer");
  }
}

}  // namespace mcpdb::postgres::proof
