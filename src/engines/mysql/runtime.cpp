#include "engines/mysql/runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "common/json_integer.hpp"
#include "common/limits.hpp"
#include "common/row_budget.hpp"
#include "engines/mysql/doctor.hpp"
#include "engines/mysql/dsn.hpp"
#include "engines/mysql/iam.hpp"
#include "engines/mysql/catalog.hpp"
#include "engines/mysql/routines.hpp"
#include "engines/mysql/tool_check.hpp"
#include "engines/kit/module.hpp"
#include "engines/sql/result_keys.hpp"
#include "telemetry/span.hpp"

namespace mcpdb::mysql {
namespace {

using Clock = std::chrono::steady_clock;

guard::Dialect dialectOf(const Connection& conn) {
  return conn.server().flavour == Flavour::MariaDB ? guard::Dialect::Mariadb
                                                   : guard::Dialect::Mysql;
}

// The call's limits as the client layer takes them: the timeout never past the deadline.
CallLimits callLimits(const Limits& limits, Clock::time_point deadline) {
  CallLimits out;
  out.max_rows = limits.max_rows;
  out.max_bytes = limits.max_bytes;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  out.timeout = std::max(std::chrono::milliseconds(1), std::min(limits.timeout, left));
  return out;
}

Result<Param> bindScalar(const sql::ScalarSpec& spec, const Json& value, const std::string& path) {
  if (auto st = sql::checkScalar(spec, value, path); !st) return st.error();
  switch (spec.type) {
    case sql::ScalarType::Integer:
      if (auto n = integerValue(value)) return Param{*n};
      return makeError(Code::InvalidArgument,
                       path + (value.is_number_unsigned() ? ": must fit in a 64-bit signed integer"
                                                          : ": must be an integer"));
    case sql::ScalarType::Float: {
      const double d = value.get<double>();
      if (!std::isfinite(d))
        return makeError(Code::InvalidArgument, path + ": must be a finite number");
      return Param{d};
    }
    case sql::ScalarType::Boolean: return Param{std::int64_t{value.get<bool>() ? 1 : 0}};
    case sql::ScalarType::Timestamp: {
      // MySQL's DATETIME text has no 'T' and no zone: the schema checked RFC 3339; the value is
      // passed as the server reads it ("2024-01-15 10:20:30", UTC offsets are refused).
      std::string text = value.get<std::string>();
      if (text.size() > 10 && text[10] == 'T') text[10] = ' ';
      if (!text.empty() && (text.back() == 'Z' || text.back() == 'z')) text.pop_back();
      if (text.size() > 19 &&
          (text.find('+', 19) != std::string::npos || text.find('-', 19) != std::string::npos)) {
        return makeError(Code::InvalidArgument,
                         path + ": must be in UTC (end in Z): MySQL DATETIME has no time zone");
      }
      return Param{std::move(text)};
    }
    case sql::ScalarType::String:
    case sql::ScalarType::Date:
    case sql::ScalarType::Uuid: return Param{value.get<std::string>()};
  }
  return makeError(Code::InvalidArgument, path + ": unsupported type");
}

// The wrapper is fixed text around the vetted statement: it passes the guard as the statement did,
// with the same placeholders.
bool wrapperPassesGuard(const std::string& statement, const std::string& wrapper,
                        guard::Dialect dialect) {
  const guard::Verdict verdict = guard::checkTemplate(wrapper, dialect);
  return verdict.allowed &&
         verdict.placeholders == guard::checkTemplate(statement, dialect).placeholders;
}

}  // namespace

// ---- SourcePool ----

SourcePool::SourcePool(Source source, std::uint32_t size, Env env)
    : source_(std::move(source)),
      size_(size),
      env_(std::move(env)),
      iam_token_(rdsTokenSource(env_)) {}

SourcePool::Lease::~Lease() {
  if (pool_ != nullptr && conn_) pool_->giveBack(std::move(conn_));
}

Result<std::unique_ptr<Connection>> SourcePool::openOne() {
  const auto text = env_.get(source_.dsn_env);
  if (!text || text->empty()) {
    return engines::kit::sourceError(Code::Unavailable, "mysql", source_.name,
                                     source_.dsn_env + " is not set");
  }
  auto dsn = parseDsn(*text);
  if (!dsn) {
    return engines::kit::sourceError(Code::Unavailable, "mysql", source_.name,
                                     source_.dsn_env + ": " + dsn.error().message);
  }
  if (source_.iam_auth && !dsn->iam) {
    if (auto s = enableIam(*dsn); !s) {
      return engines::kit::sourceError(Code::Unavailable, "mysql", source_.name,
                                       source_.dsn_env + " with iam_auth: " + s.error().message);
    }
  }
  // Called for this connection and for each cancelling side connection: a fresh token each time.
  if (dsn->iam) dsn->iam_token = iam_token_;
  auto conn = Connection::open(*dsn);
  if (!conn) return conn.error();
  if (auto s = conn->beginNextCall(); !s) return s.error();
  {
    std::lock_guard<std::mutex> lock(mu_);
    database_ = dsn->database;
  }
  return std::make_unique<Connection>(std::move(*conn));
}

Result<SourcePool::Lease> SourcePool::acquire(Clock::time_point deadline,
                                              const std::stop_token& stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (stop.stop_requested()) return makeError(Code::Cancelled, "the call was cancelled");
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      ++in_use_;
      return Lease(this, std::move(conn));
    }
    if (open_ < size_) break;
    if (!freed_.wait_until(lock, stop, deadline, [&] { return !idle_.empty() || open_ < size_; })) {
      if (stop.stop_requested()) return makeError(Code::Cancelled, "the call was cancelled");
      return makeError(Code::ResourceExhausted, "every connection of mysql source '" +
                                                    source_.name +
                                                    "' stayed busy until the call's deadline");
    }
  }
  ++open_;
  ++in_use_;
  lock.unlock();
  // Connecting happens outside the lock: a slow server does not hold up calls on idle connections.
  auto conn = openOne();
  if (!conn) {
    lock.lock();
    --open_;
    --in_use_;
    freed_.notify_one();
    return conn.error();
  }
  return Lease(this, std::move(*conn));
}

// The call's answer is on its way back while the cleaner resets: the reset's round trips are off
// the caller's latency. When the cleaner is busy, the giving thread resets in place.
void SourcePool::giveBack(std::unique_ptr<Connection> conn) {
  std::unique_lock<std::mutex> lock(mu_);
  --in_use_;
  if (conn->usable() && !closing_ && !cleaning_ && !dirty_) {
    dirty_ = std::move(conn);
    if (!cleaner_.joinable()) {
      cleaner_ = std::jthread([this](const std::stop_token& stop) { cleanLoop(stop); });
    }
    dirtied_.notify_one();
    return;
  }
  lock.unlock();
  const bool reset = conn->usable() && conn->resetSession().ok();
  lock.lock();
  settle(conn, reset);
}

void SourcePool::cleanLoop(const std::stop_token& stop) {
  std::unique_lock<std::mutex> lock(mu_);
  while (dirtied_.wait(lock, stop, [this] { return dirty_ != nullptr; })) {
    auto conn = std::move(dirty_);
    cleaning_ = true;
    lock.unlock();
    const bool reset = conn->resetSession().ok();
    lock.lock();
    cleaning_ = false;
    settle(conn, reset);
  }
}

void SourcePool::settle(std::unique_ptr<Connection>& conn, bool reset) {
  if (reset && !closing_) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
    conn.reset();  // closed: its session state never reaches another call
  }
  freed_.notify_one();
}

SourcePool::~SourcePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  if (cleaner_.joinable()) {
    cleaner_.request_stop();
    cleaner_.join();
  }
  // A connection given back but never reset is closed with the pool, like the idle ones.
}

std::string SourcePool::database() const {
  std::lock_guard<std::mutex> lock(mu_);
  return database_;
}

PoolStats SourcePool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {open_, in_use_, size_};
}

// ---- Runtime ----

Runtime::Runtime(Settings settings, Source source, Env env)
    : settings_(std::move(settings)),
      pool_(std::move(source), settings_.pool.size, std::move(env)) {}

Status Runtime::probe(Clock::time_point deadline, const std::stop_token& stop) {
  auto lease = pool_.acquire(engines::kit::probeSlotDeadline(deadline), stop);
  if (!lease) return engines::kit::probeOutcome(lease.error());
  const Limits one{.max_rows = 1, .max_bytes = 1024, .timeout = std::chrono::hours(1)};
  auto r = lease->conn().run(engines::kit::kProbeStatement, {}, callLimits(one, deadline), stop);
  if (!r) return r.error();
  return {};
}

Result<Runtime::ToolLease> Runtime::leaseFor(const QueryTool& tool, protocol::CallContext& ctx) {
  ctx.audit.source = source().name;
  const Limits& limits = ctx.limits;  // the call's, built once by the session
  const Clock::time_point deadline = ctx.deadlineFor(limits);
  auto lease = pool_.acquire(deadline, ctx.stop);
  if (!lease) return lease.error();
  if (auto st = vet(tool, lease->conn()); !st) return st.error();
  return ToolLease{std::move(*lease), limits, callLimits(limits, deadline)};
}

Result<protocol::ToolOutput> Runtime::callQuery(const QueryTool& tool, const Json& arguments,
                                                protocol::CallContext& ctx) {
  ctx.audit.source = source().name;  // in the audit line also when the arguments are refused
  auto params = bindArguments(tool.parameters, arguments);
  if (!params) return params.error();
  auto held = leaseFor(tool, ctx);
  if (!held) return held.error();
  // A span around the statement's run when the call is traced (a null test otherwise): START
  // TRANSACTION READ ONLY, prepare, execute. Never the statement's text or values.
  telemetry::ChildSpan db(ctx.span, "mysql SELECT");
  if (db) {
    db->setString("db.system.name", "mysql");
    db->setString("db.operation.name", "SELECT");
    db->setString("mcpdb.source", source().name);
  }
  auto r = runCapped(tool, *params, *held, ctx.stop);
  if (db && !r) db->setError(codeName(r.error().code));
  if (!r) return r.error();
  ctx.audit.truncated = r->truncated || !r->cut.empty();
  protocol::ToolOutput out;
  out.rows = r->rows.size();
  out.free_text = carriesDatabaseText(tool.statement, r->columns);
  out.structured = resultEnvelope(*r, held->limits);
  return out;
}

Result<QueryResult> Runtime::runCapped(const QueryTool& tool, const std::vector<Param>& params,
                                       ToolLease& held, const std::stop_token& stop) {
  Connection& conn = held.lease.conn();
  for (int attempt = 0;; ++attempt) {
    bool described = false;
    auto capped = cappedStatement(tool, conn, held.call_limits, attempt > 0, &described);
    if (!capped) return capped.error();
    if (*capped == nullptr) return conn.run(tool.statement, params, held.call_limits, stop);
    Connection::SourceCapRun cap{capped->get()};
    auto r = conn.run(tool.statement, params, held.call_limits, stop, &cap);
    if (r || !conn.usable() || (!cap.reshaped && !cap.refused)) return r;
    // Nothing ran. A wrapper written from an older description is written again from a new one;
    // one the server refuses for the statement as it is now leaves the statement unwrapped.
    if (attempt > 0 || (cap.refused && described)) {
      if (cap.reshaped) return r;
      markUnwrappable(tool);
      return conn.run(tool.statement, params, held.call_limits, stop);
    }
  }
}

std::optional<std::string> Runtime::definitionsEpoch() {
  std::lock_guard<std::mutex> lock(vet_mu_);
  if (!epoch_) return std::nullopt;
  return epoch_->epoch.definitions;
}

Result<std::shared_ptr<const CappedStatement>> Runtime::cappedStatement(const QueryTool& tool,
                                                                        Connection& conn,
                                                                        const CallLimits& limits,
                                                                        bool fresh,
                                                                        bool* described) {
  const std::optional<std::string> epoch = definitionsEpoch();
  CapShape shape;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(cap_mu_);
    auto it = caps_.find(tool.name);
    // Without counters the statement is described on every call (as it is vetted).
    if (!fresh && epoch && it != caps_.end() && it->second.epoch == epoch) {
      if (it->second.unwrappable) return std::shared_ptr<const CappedStatement>();
      const auto& c = it->second.capped;
      if (c && c->cap == limits.max_bytes) return c;
      shape = it->second;
      known = true;
    }
  }
  if (!known) {
    auto columns = conn.describeColumns(tool.statement, limits);
    if (!columns) return columns.error();
    *described = true;
    shape.epoch = epoch;
    shape.columns = std::move(*columns);
  }
  auto capped = std::make_shared<const CappedStatement>(
      capAtSource(tool.statement, shape.columns, limits.max_bytes));
  // Defence in depth: the wrapper is fixed text around the vetted statement; it passes the guard
  // as the statement did, with the same placeholders.
  if (capped->unwrappable ||
      (capped->wrapped && !wrapperPassesGuard(tool.statement, capped->sql, dialectOf(conn)))) {
    std::lock_guard<std::mutex> lock(cap_mu_);
    caps_[tool.name] = shape;
    markUnwrappableLocked(tool);
    return std::shared_ptr<const CappedStatement>();
  }
  shape.capped = capped;
  shape.unwrappable = false;
  std::lock_guard<std::mutex> lock(cap_mu_);
  caps_[tool.name] = std::move(shape);
  return capped;
}

void Runtime::markUnwrappable(const QueryTool& tool) {
  std::lock_guard<std::mutex> lock(cap_mu_);
  markUnwrappableLocked(tool);
}

void Runtime::markUnwrappableLocked(const QueryTool& tool) {
  CapShape& shape = caps_[tool.name];
  if (unwrappable_noted_.insert(tool.name).second) {  // once per tool: the operator's note
    std::fprintf(stderr,
                 "[mysql] tool %s: its values are capped as they arrive, not in the database "
                 "(the statement cannot be wrapped)\n",
                 tool.name.c_str());
  }
  shape.unwrappable = true;
  shape.capped = nullptr;
}

Result<StatementShape> Runtime::describeTool(const QueryTool& tool, protocol::CallContext& ctx) {
  auto held = leaseFor(tool, ctx);
  if (!held) return held.error();
  return held->lease.conn().describe(tool.statement, held->call_limits, ctx.stop);
}

// ---- vetting and doctor ----

namespace {

RoutineCheckOptions routineOptions(const Settings& settings, const Connection& conn,
                                   const SourcePool& pool) {
  RoutineCheckOptions o;
  o.allowlist = settings.allowed_functions;
  o.default_schema = pool.database();
  o.dialect = dialectOf(conn);
  return o;
}

engines::Finding toFinding(const GrantFinding& g) {
  using S = engines::Finding::Severity;
  using G = GrantFinding::Severity;
  const S severity = g.severity == G::Ok          ? S::Ok
                     : g.severity == G::Violation ? S::Violation
                     : g.severity == G::Warning   ? S::Warning
                                                  : S::Inconclusive;
  return {severity, g.check, g.message, g.fix};
}

}  // namespace

Result<CatalogEpoch> Runtime::recentEpoch(Connection& conn, Clock::time_point now) {
  {
    std::lock_guard<std::mutex> lock(vet_mu_);
    if (epoch_ && now - epoch_->at < kEpochMaxAge) return epoch_->epoch;
  }
  auto epoch = readCatalogEpoch(conn);
  if (epoch) {
    std::lock_guard<std::mutex> lock(vet_mu_);
    epoch_ = SourceEpoch{now, *epoch};
  }
  return epoch;
}

Status Runtime::vet(const QueryTool& tool, Connection& conn) {
  const auto now = Clock::now();
  std::optional<Vetted> cached;
  {
    std::lock_guard<std::mutex> lock(vet_mu_);
    auto it = vetted_.find(tool.name);
    if (it != vetted_.end() && now - it->second.at < kVetInterval) cached = it->second;
  }
  auto epoch = recentEpoch(conn, now);
  if (cached && epoch) {
    if (*epoch == cached->epoch) return cached->status;
    // Something was defined somewhere: what this verdict read is compared (a privilege change
    // may concern a definer: judged again).
    if (epoch->privileges == cached->epoch.privileges) {
      auto current = fingerprintObjects(conn, cached->looked_up);
      if (current && *current == cached->fingerprints) {
        std::lock_guard<std::mutex> lock(vet_mu_);
        vetted_[tool.name].epoch = *epoch;
        return cached->status;
      }
    }
  }
  RoutineChecker checker(conn, routineOptions(settings_, conn, pool_));
  Vetted fresh{now, {}, {}, {}, epoch ? *epoch : CatalogEpoch{}};
  for (const auto& v : checker.checkStatement(tool.statement, tool.called_functions)) {
    if (!v.allowed) {
      // The agent learns that something was refused, never which schema, view or function:
      // catalog names are the operator's (doctor, check-config, the error's detail).
      Error e = makeError(Code::PermissionDenied,
                          "tool '" + tool.name +
                              "' reaches a view or stored function that is refused (it may "
                              "write, or could not be checked); the operator can see which "
                              "with `mcp-dbserver doctor`");
      e.detail = (v.name.size() == 2 && !v.name[1].empty()
                      ? "reaches " + guard::displayName(v.name) + ", which is refused: "
                      : std::string()) +
                 v.reason;
      fresh.status = e;
      break;
    }
  }
  if (!epoch) fresh.at = now - kVetInterval;  // without counters, never reused
  fresh.looked_up = checker.lookedUp();
  fresh.fingerprints = checker.fingerprints();
  std::lock_guard<std::mutex> lock(vet_mu_);
  vetted_[tool.name] = fresh;
  return fresh.status;
}

std::vector<engines::Finding> Runtime::checkPrivileges(const std::stop_token& stop) {
  auto lease = pool_.acquire(Clock::now() + std::chrono::seconds(30), stop);
  if (!lease) {
    // The error names the source when the source is the problem (sourceError); the module names
    // it besides when there are several.
    return {{engines::Finding::Severity::Inconclusive, "mysql.connect",
             operatorText(lease.error()) + ": nothing was proved about its account"}};
  }
  RoutineChecker checker(lease->conn(), routineOptions(settings_, lease->conn(), pool_));
  PrivilegeCheckOptions options;
  options.routine_is_read_only = routineCheckHook(checker);
  auto findings = mcpdb::mysql::checkPrivileges(lease->conn(), options);
  auto definers = definerFindings(lease->conn(), checker);
  if (std::any_of(definers.begin(), definers.end(), [](const GrantFinding& g) {
        return g.severity != GrantFinding::Severity::Warning;
      })) {
    // A definer-rights object that may write is a write path of this account too.
    std::erase_if(findings,
                  [](const GrantFinding& g) { return g.severity == GrantFinding::Severity::Ok; });
  }
  findings.insert(findings.end(), definers.begin(), definers.end());
  std::vector<engines::Finding> out;
  for (const auto& g : findings) out.push_back(toFinding(g));
  return out;
}

engines::Finding Runtime::checkTool(const QueryTool& t, const std::stop_token& stop) {
  auto lease = pool_.acquire(Clock::now() + std::chrono::seconds(30), stop);
  if (!lease) {
    return {engines::Finding::Severity::Inconclusive, toolCheckId(t.name),
            "tool '" + t.name + "': " + operatorText(lease.error())};
  }
  {
    std::lock_guard<std::mutex> lock(vet_mu_);
    vetted_.erase(t.name);  // doctor judges now, not from memory
  }
  // The vetting first: a statement reaching a function that may write is never prepared.
  if (auto st = vet(t, lease->conn()); !st) {
    return {engines::Finding::Severity::Unusable, toolCheckId(t.name),
            "tool '" + t.name + "' " + st.error().detail,
            "list the function in mysql.allowed_functions once checked that it only "
            "reads (and runs as SQL SECURITY INVOKER or with a read-only definer), let "
            "the account read its definition, or give a definer-rights object a "
            "read-only definer"};
  }
  // Then the statement as a call prepares it, with the tool's limits, never executed.
  const CallLimits limits = callLimits(t.limits, Clock::now() + t.limits.timeout);
  auto shape = lease->conn().describe(t.statement, limits, stop);
  return shape ? preparedToolOk(t.name)
               : preparedToolFinding(t.name, shape.error(), t.statement, pool_.database());
}

// ---- arguments and results ----

Result<std::vector<Param>> bindArguments(const std::vector<sql::ParamSpec>& params,
                                         const Json& arguments) {
  auto selected = sql::selectArguments(params, arguments);
  if (!selected) return selected.error();
  std::vector<Param> out;
  out.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Json* value = (*selected)[i];
    if (value == nullptr) {
      out.emplace_back(nullptr);
      continue;
    }
    if (params[i].is_array) {
      return makeError(Code::InvalidArgument,
                       "arguments." + params[i].name + ": array parameters are not supported");
    }
    auto p = bindScalar(params[i].scalar, *value, "arguments." + params[i].name);
    if (!p) return p.error();
    out.push_back(std::move(*p));
  }
  return out;
}

Json resultEnvelope(QueryResult& result, const Limits& limits) {
  Json columns = Json::array();
  for (const auto& c : result.columns) columns.push_back({{"name", c.name}, {"type", c.type}});
  Json rows = Json::array();
  for (auto& row : result.rows) {
    Json object = Json::object();
    for (std::size_t i = 0; i < row.size() && i < result.columns.size(); ++i) {
      object[result.columns[i].name] = std::move(row[i]);
    }
    rows.push_back(std::move(object));
  }
  const std::size_t count = rows.size();
  Json out{{"columns", std::move(columns)},
           {"rows", std::move(rows)},
           {"row_count", count},
           {"truncated", result.truncated}};
  if (result.truncated) {
    // The same wording as every engine, from which cap stopped the fetch.
    out["note"] = truncationNote(count, count < limits.max_rows, limits.max_bytes);
  }
  if (!result.cut.empty()) {
    // As PostgreSQL's: the values the byte cap left in the database, null in their rows.
    out["truncated"] = true;
    const std::string note = cutNote(result.cut.size(), limits.max_bytes);
    out["note"] = out.contains("note") ? out["note"].get<std::string>() + " " + note : note;
    out["cut"] = std::move(result.cut);
  }
  return out;
}

bool carriesDatabaseText(std::string_view statement, const std::vector<Column>& columns) {
  static const std::set<std::string, std::less<>> kNotText = {
      "int", "decimal", "double", "date", "time", "datetime", "timestamp", "year", "bit"};
  if (std::any_of(columns.begin(), columns.end(),
                  [](const Column& c) { return kNotText.count(c.type) == 0; })) {
    return true;
  }
  std::vector<std::string_view> names;
  names.reserve(columns.size());
  for (const auto& c : columns) names.emplace_back(c.name);
  return !sql::namesAreStatementText(statement, names);
}

}  // namespace mcpdb::mysql
