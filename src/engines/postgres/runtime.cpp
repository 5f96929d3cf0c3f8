// One file, over 600 lines: a source's runtime owns its pool, its read-only proof (made, aged and
// re-made here, one prover for every waiting call) and the call path that waits on both; the
// pieces share one lock order, which is easier to check in one place. The statement exchange is
// exchange.cpp/executor.cpp, the pool pool.cpp, the proof's resolution proof.cpp.
#include "engines/postgres/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include <cstdio>

#include "embed/embedder.hpp"
#include "engines/kit/module.hpp"
#include "engines/postgres/analysis.hpp"
#include "engines/postgres/guard/guard.hpp"
#include "engines/sql/result_keys.hpp"
#include "protocol/schema.hpp"
#include "telemetry/tracer.hpp"

namespace mcpdb::postgres {
namespace {

// How long a verified embedding-model row is trusted before it is read again.
constexpr std::chrono::seconds kModelCheckTtl{60};
// A new pooled connection makes the proof stale, but not more often than this (a burst of new
// connections while the pool fills up costs one proof, not one each).
constexpr std::chrono::seconds kReproveAfterConnect{1};
// oid[] (pg_type.dat), for the type-name lookup.
constexpr Oid kOidArray = 1028;
// How many allowed statements the guardrail verdict cache keeps.
constexpr std::size_t kMaxRememberedStatements = 1024;

Json envelope(ExecResult& r, const std::string& rows_key) {
  Json out = Json::object();  // member by member: cheaper than an initializer list
  out.emplace(rows_key, std::move(r.rows));
  out.emplace("row_count", r.row_count);
  out.emplace("truncated", r.truncated);
  if (r.truncated) out["note"] = r.note;
  if (!r.cut.empty()) out["cut"] = std::move(r.cut);
  return out;
}

}  // namespace

ProofAge judgeProofAge(Clock::duration age, std::chrono::seconds interval, bool new_connection) {
  if (age > interval) return ProofAge::Expired;
  if (age * 4 > interval * 3 || (new_connection && age > kReproveAfterConnect))
    return ProofAge::Refresh;
  return ProofAge::Fresh;
}

Runtime::Runtime(Settings section, Env env, TokenSource token)
    : section_(std::move(section)),
      env_(std::move(env)),
      source_(section_.sources.empty() ? implicitSource() : section_.sources.front()) {
  section_.pool = poolFor(section_.pool, source_);
  if (!token && iamAuthEnabled(section_.pool, env_)) token = rdsTokenSource(env_);
  auto params = [pool = section_.pool, env = env_, token, source = source_]() {
    return buildConnParams(pool, env, token, source);
  };
  pool_ = std::make_unique<Pool>(section_.pool, params);
}

Result<Pool::Lease> Runtime::leaseConnection(Clock::time_point deadline,
                                             const std::stop_token& stop, CallWaits* waits) {
  auto leased = pool_->acquire(deadline, stop, waits);
  if (leased || source_.implicit) return leased;
  Error e = engines::kit::sourceError(leased.error().code, "PostgreSQL", source_.name,
                                      leased.error().message);
  e.detail = leased.error().detail;
  return e;
}

Result<std::size_t> Runtime::checkStatement(const std::string& sql, CallWaits* waits) {
  {
    std::shared_lock<std::shared_mutex> lock(allowed_mu_);
    if (auto it = allowed_.find(sql); it != allowed_.end()) return it->second;
  }
  handOn(waits);  // the parser's thread may be busy with the proof's parses
  // The verdict is a pure function of the text: the same text gets the same verdict, so a lookup
  // by the whole text is the check (parsing costs about a hundred microseconds; the proof far
  // more).
  const guard::Verdict verdict = guard::checkTemplate(sql);
  if (!verdict.allowed) return guard::toStatus(verdict).error();
  std::unique_lock<std::shared_mutex> lock(allowed_mu_);
  // Bounded: the configured statements are a few dozen; anything beyond is checked every time.
  if (allowed_.size() < kMaxRememberedStatements)
    allowed_.emplace(sql, verdict.placeholders.size());
  return verdict.placeholders.size();
}

Result<ExecResult> Runtime::run(const std::string& sql, const BoundParams& params,
                                const Limits& limits, const std::stop_token& stop,
                                Clock::time_point deadline, const RunOptions& options) {
  const CappedStatement* capped = options.capped;
  const std::string& text = capped != nullptr ? capped->sql : sql;
  // Defence in depth: the template was checked at startup; it is checked again before every run.
  auto placeholders = checkStatement(text, options.waits);
  if (!placeholders) return placeholders.error();
  if (*placeholders != params.values.size()) {
    return makeError(Code::Internal,
                     "the statement's placeholders do not match its bound parameters");
  }
  for (int attempt = 0;; ++attempt) {
    auto lease = leaseConnection(deadline, stop, options.waits);
    if (!lease) return lease.error();
    // A span per round trip when the call is traced (a null test otherwise). Its attributes are
    // the shape of the call, never the statement's text or values.
    telemetry::ChildSpan db(options.span, "postgresql SELECT");
    std::string application_name;
    if (db) {
      db->setString("db.system.name", "postgresql");
      db->setString("db.operation.name", "SELECT");
      db->setString("mcpdb.source", source_.name);
      if (db->tracer().options().postgres_application_name) {
        const telemetry::SpanContext& c = db->context();
        application_name = telemetry::formatTraceparent(c.trace_id, c.span_id, c.flags);
      }
    }
    ExecOutcome outcome;
    const bool prepare = section_.pool.prepared_statements && options.prepare;
    const ExecRequest request{.sql = text,
                              .params = params,
                              .limits = limits,
                              .stop = stop,
                              .deadline = deadline,
                              .types = pool_->types(),
                              .prepared = prepare ? lease->prepared() : nullptr,
                              .capped = capped,
                              .waits = options.waits,
                              .application_name = application_name};
    auto r = executeReadOnly(lease->conn(), lease->cancel(), request, outcome);
    if (outcome.broken) lease->markBroken();
    if (db && !r) {
      db->setError(codeName(r.error().code));
      // A SQLSTATE is a class of error, never a value.
      if (!outcome.sqlstate.empty()) db->setString("db.response.status_code", outcome.sqlstate);
    }
    if (!r && outcome.stale && !lease->fresh() && attempt == 0) {
      // The pooled connection was dead before the statement was sent, or its prepared statement
      // went stale; so did its idle siblings.
      pool_->dropIdle();
      continue;
    }
    if (options.reshaped != nullptr) *options.reshaped = outcome.reshaped;
    return r;
  }
}

Status Runtime::probe(Clock::time_point deadline, const std::stop_token& stop) {
  // The guardrail's verdict on it as on every statement this runtime sends (a lookup after once).
  if (auto checked = checkStatement(std::string(engines::kit::kProbeStatement)); !checked)
    return checked.error();
  const BoundParams none;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  const Limits limits{
      .max_rows = 1, .max_bytes = 1024, .timeout = std::max(left, std::chrono::milliseconds(1))};
  for (int attempt = 0;; ++attempt) {
    auto lease = leaseConnection(engines::kit::probeSlotDeadline(deadline), stop);
    if (!lease) return engines::kit::probeOutcome(lease.error());
    ExecOutcome outcome;
    const ExecRequest request{.sql = engines::kit::kProbeStatement,
                              .params = none,
                              .limits = limits,
                              .stop = stop,
                              .deadline = deadline,
                              .types = pool_->types()};
    auto r = executeReadOnly(lease->conn(), lease->cancel(), request, outcome);
    if (outcome.broken) lease->markBroken();
    if (!r && outcome.stale && !lease->fresh() && attempt == 0) {
      pool_->dropIdle();
      continue;
    }
    if (!r) return r.error();
    return {};
  }
}

std::vector<std::string> Runtime::configuredStatements() const {
  std::vector<std::string> out;
  for (const QueryTool& t : section_.tools) out.push_back(t.statement);
  if (section_.search.enabled) {
    out.push_back(section_.search.statement);
    if (!section_.search.model_statement.empty()) out.push_back(section_.search.model_statement);
  }
  return out;
}

Result<std::shared_ptr<const proof::Report>> Runtime::proveNow(const std::stop_token& stop) {
  // The background prover may hold the lock for as long as its connection attempt: wait for it
  // only while nobody asks this caller to stop.
  std::unique_lock<std::timed_mutex> proving(prove_mu_, std::defer_lock);
  while (!proving.try_lock_for(std::chrono::milliseconds(100))) {
    if (stop.stop_requested()) return makeError(Code::Cancelled, "stopped before the proof");
  }
  return proveLocked(stop);
}

Result<std::vector<Json>> Runtime::catalogQuery(const Json& request, const std::stop_token& stop) {
  Limits limits;
  limits.max_rows = 1'000'000;
  limits.max_bytes = std::uint64_t{256} << 20;
  limits.timeout = std::chrono::milliseconds(30000);
  BoundParams params;
  params.add(request.dump(), oid::kJsonb);
  // Not prepared: it runs once per proof, and a plan of it on every connection is waste.
  auto r = run(proof::kCatalogSql, params, limits, stop, Clock::now() + limits.timeout,
               {.prepare = false});
  if (!r) return r.error();
  if (r->truncated) {
    return makeError(Code::ResourceExhausted, "the catalog answer was too large to prove");
  }
  std::vector<Json> rows;
  for (Json& row : r->rows) rows.push_back(std::move(row));
  return rows;
}

Result<proof::Analysis> Runtime::analyzeStatement(const std::string& sql,
                                                  const std::stop_token& stop) {
  // The parameter types each configured use of the statement binds (0: the server infers it).
  std::set<std::vector<Oid>> bindings;
  for (const QueryTool& t : section_.tools) {
    if (t.statement != sql) continue;
    std::vector<Oid> types;
    for (const ParamSpec& p : t.parameters)
      types.push_back(p.is_array ? arrayOid(p.scalar.type) : scalarOid(p.scalar.type));
    bindings.insert(std::move(types));
  }
  if (section_.search.enabled && section_.search.statement == sql) {
    std::vector<Oid> types = {0, oid::kInt8};  // the query vector ($1::vector), k
    for (const SearchFilter& f : section_.search.filters) types.push_back(scalarOid(f.scalar.type));
    bindings.insert(std::move(types));
  }
  if (bindings.empty()) bindings.insert(std::vector<Oid>{});  // the model check; a test's
  const std::vector<std::vector<Oid>> lists(bindings.begin(), bindings.end());
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(30);
  auto lease = leaseConnection(deadline, stop);
  if (!lease) return lease.error();
  bool broken = false;
  auto r = postgres::analyzeStatement(lease->conn(), sql, lists, broken);
  if (broken) lease->markBroken();
  return r;
}

Result<std::shared_ptr<const proof::Report>> Runtime::proveLocked(const std::stop_token& stop) {
  std::optional<Error> run_error;  // a failure to reach the catalog is reported as it is
  // The proof's age counts from its first catalog read: a change committed after that may be
  // missed by it.
  const Clock::time_point started = Clock::now();
  auto catalog = [&](const Json& request) -> Result<std::vector<Json>> {
    auto rows = catalogQuery(request, stop);
    if (!rows) run_error = rows.error();
    return rows;
  };
  auto analyze = [&](const std::string& sql) -> Result<proof::Analysis> {
    auto a = analyzeStatement(sql, stop);
    if (!a) run_error = a.error();
    return a;
  };
  auto report = proof::prove(configuredStatements(), section_.proof, catalog, analyze);
  if (!report) {
    if (run_error) return *run_error;
    Error e = report.error();
    return Error{Code::Unavailable,
                 "the read-only proof of the PostgreSQL statements could not be made, so no "
                 "statement runs until it is",
                 operatorText(e)};
  }
  auto shared = std::make_shared<const proof::Report>(std::move(*report));
  std::unique_lock<std::shared_mutex> lock(proof_mu_);
  logNewRefusals(proof_.get(), *shared);
  proof_ = shared;
  proved_at_ = started;
  opened_at_proof_ = pool_->connectionsOpened();
  return shared;
}

void Runtime::logNewRefusals(const proof::Report* before, const proof::Report& now) const {
  // The agent's error says only that the proof refused; the operator's log says what and why,
  // once per change (not once per call or per proof).
  const auto named = [&](const std::string& sql) {
    std::string names;
    for (const QueryTool& t : section_.tools) {
      if (t.statement == sql) names += (names.empty() ? "" : ", ") + t.name;
    }
    if (section_.search.enabled &&
        (section_.search.statement == sql || section_.search.model_statement == sql)) {
      names += (names.empty() ? "" : ", ") + section_.search.tool;
    }
    return names.empty() ? std::string("a statement") : names;
  };
  for (const auto& [sql, verdict] : now.verdicts) {
    if (!verdict) continue;
    if (before != nullptr) {
      const auto it = before->verdicts.find(sql);
      if (it != before->verdicts.end() && it->second &&
          it->second->message() == verdict->message()) {
        continue;
      }
    }
    std::fprintf(stderr, "[postgres] the read-only proof refuses %s: %s\n", named(sql).c_str(),
                 verdict->message().c_str());
  }
}

engines::Finding Runtime::proofFinding(const std::stop_token& stop) {
  using Sev = engines::Finding::Severity;
  auto made = proveNow(stop);
  if (!made) {
    return {Sev::Inconclusive, "pg.proof",
            "could not prove the statements read-only, so no tool runs until it can: " +
                operatorText(made.error()),
            ""};
  }
  const proof::Report& r = **made;
  std::string refused;
  std::size_t count = 0;
  for (const QueryTool& t : section_.tools) {
    const auto it = r.verdicts.find(t.statement);
    if (it == r.verdicts.end() || !it->second) continue;
    ++count;
    refused += (refused.empty() ? "" : "; ") + t.name + ": " + it->second->message();
  }
  for (const std::string* sql : {&section_.search.statement, &section_.search.model_statement}) {
    const auto it = r.verdicts.find(*sql);
    if (!section_.search.enabled || it == r.verdicts.end() || !it->second) continue;
    ++count;
    refused += (refused.empty() ? "" : "; ") + section_.search.tool + ": " + it->second->message();
  }
  const std::string figures =
      std::to_string(r.verdicts.size()) + " statement" + (r.verdicts.size() == 1 ? "" : "s") +
      ", " + std::to_string(r.objects) + " catalog objects, " + std::to_string(r.round_trips) +
      " round trips, " + std::to_string(r.took.count() / 1000) + " ms";
  if (count > 0) {
    return {Sev::Warning, "pg.proof",
            std::to_string(count) + " statement" + (count == 1 ? " is" : "s are") +
                " refused by the read-only proof and will not run (" + figures + "): " + refused,
            "rewrite each refused statement, or list a function that cannot write under "
            "postgres.proof.allow_functions with the reason"};
  }
  return {Sev::Ok, "pg.proof",
          "every configured statement is proved read-only through everything it reaches (" +
              figures + ")"};
}

Result<std::shared_ptr<const proof::Report>> Runtime::latestProof() {
  {
    std::shared_lock<std::shared_mutex> lock(proof_mu_);
    if (proof_) return proof_;
  }
  // The first callers wait for the first proof, made once: whoever comes second finds it made.
  std::lock_guard<std::timed_mutex> proving(prove_mu_);
  {
    std::shared_lock<std::shared_mutex> lock(proof_mu_);
    if (proof_) return proof_;
  }
  return proveLocked();
}

void Runtime::requestReproof() {
  std::lock_guard<std::mutex> lock(reprove_mu_);
  // After a failed attempt, not again for a second (the catalog may be unreachable for a while).
  if (Clock::now() - reprove_failed_at_ < kReproveAfterConnect) return;
  reprove_wanted_ = true;
  if (!reprover_.joinable()) {
    reprover_ = std::jthread([this](const std::stop_token& stop) { reproveLoop(stop); });
  }
  reprove_cv_.notify_one();
}

void Runtime::reproveLoop(const std::stop_token& stop) {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(reprove_mu_);
      if (!reprove_cv_.wait(lock, stop, [this] { return reprove_wanted_; })) return;
      reprove_wanted_ = false;
    }
    Result<std::shared_ptr<const proof::Report>> made = Error{Code::Internal, ""};
    {
      // Another caller (doctor, startup) may be proving: then this attempt waits for it and
      // proves once more, which is harmless.
      std::lock_guard<std::timed_mutex> proving(prove_mu_);
      made = proveLocked(stop);
    }
    if (!made && !stop.stop_requested()) {
      std::fprintf(stderr,
                   "[postgres] the read-only proof could not be made again; once the last one is "
                   "%llds old, calls fail until it is\n",
                   static_cast<long long>(section_.proof.interval.count()));
    }
    std::lock_guard<std::mutex> lock(reprove_mu_);
    ++reprove_done_;
    reprove_error_.reset();
    if (!made) {
      reprove_error_ = made.error();
      reprove_failed_at_ = Clock::now();
    }
    proved_cv_.notify_all();
  }
}

std::shared_ptr<const proof::Report> Runtime::usableProof() {
  std::shared_ptr<const proof::Report> current;
  ProofAge age = ProofAge::Expired;
  {
    std::shared_lock<std::shared_mutex> lock(proof_mu_);
    current = proof_;
    if (current) {
      age = judgeProofAge(Clock::now() - proved_at_, section_.proof.interval,
                          pool_->connectionsOpened() != opened_at_proof_);
    }
  }
  if (age == ProofAge::Fresh) return current;
  requestReproof();
  return age == ProofAge::Refresh ? current : nullptr;
}

// One prover for every waiting call (no herd on the catalog); each call waits at most until its
// own deadline, so a hung catalog query stalls no call beyond it. An attempt that fails ends the
// wait of every call that waited for it with that failure; after one, the next attempt is made
// no sooner than a second later (requestReproof), and calls meanwhile fail at once.
Result<std::shared_ptr<const proof::Report>> Runtime::awaitFreshProof(Clock::time_point deadline,
                                                                      const std::stop_token& stop,
                                                                      CallWaits* waits) {
  const auto expired = [this] {
    // The call's own deadline passed while it waited (as the first call of a short-timeout tool
    // on a cold server would have timed out waiting for the first proof): a timeout, retryable.
    return Error{Code::TimedOut,
                 "the read-only proof of the PostgreSQL statements is being made again and was "
                 "not ready before the call's deadline, so the statement did not run; retry",
                 "no proof younger than postgres.proof.interval_s (" +
                     std::to_string(section_.proof.interval.count()) + " s) was made in time"};
  };
  for (;;) {
    std::unique_lock<std::mutex> lock(reprove_mu_);
    const std::uint64_t seen = reprove_done_;
    if (reprove_error_ && Clock::now() - reprove_failed_at_ < kReproveAfterConnect)
      return *reprove_error_;
    lock.unlock();
    if (auto current = usableProof()) return current;  // asks for one when none may be used
    // About to wait on the prover, which watches nothing of the call's: hand on first.
    handOn(waits);
    lock.lock();
    if (!proved_cv_.wait_until(lock, stop, deadline, [&] { return reprove_done_ != seen; })) {
      if (stop.stop_requested()) return makeError(Code::Cancelled, "the call was cancelled");
      return expired();
    }
    if (reprove_error_) return *reprove_error_;
    // Made: usable unless it began longer than an interval ago (a very slow attempt); then again.
  }
}

Status Runtime::requireProof(const std::string& sql, Clock::time_point deadline,
                             const std::stop_token& stop, CallWaits* waits) {
  std::shared_ptr<const proof::Report> current = usableProof();
  if (!current) {
    auto made = awaitFreshProof(deadline, stop, waits);
    if (!made) return made.error();
    current = *made;
  }
  const auto it = current->verdicts.find(sql);
  if (it == current->verdicts.end()) {
    return makeError(Code::PermissionDenied, "the statement is not one the read-only proof covers");
  }
  if (it->second) {
    // The agent learns that the proof refused the statement; what it reaches and why (schema,
    // function, view and type names, catalog-controlled text) stays in the operator's detail.
    return Error{Code::PermissionDenied,
                 "refused by the read-only proof: the statement reaches something that could "
                 "write or keep state (the server's log and `doctor` say what)",
                 it->second->message()};
  }
  return {};
}

Result<ExecResult> Runtime::explain(const std::string& sql, const BoundParams& params,
                                    ExecOutcome& outcome, const std::stop_token& stop) {
  auto placeholders = checkStatement(sql);
  if (!placeholders) return placeholders.error();
  if (*placeholders != params.values.size()) {
    return makeError(Code::Internal,
                     "the statement's placeholders do not match its bound parameters");
  }
  Limits limits;
  limits.max_rows = 1000;
  limits.max_bytes = 1 << 20;
  limits.timeout = std::chrono::milliseconds(10000);
  const Clock::time_point deadline = Clock::now() + limits.timeout;
  auto lease = leaseConnection(deadline, stop);
  if (!lease) return lease.error();
  const std::string explain_sql = "EXPLAIN " + sql;
  const ExecRequest request{.sql = explain_sql,
                            .params = params,
                            .limits = limits,
                            .stop = stop,
                            .deadline = deadline,
                            .types = pool_->types()};
  auto r = executeReadOnly(lease->conn(), lease->cancel(), request, outcome);
  if (outcome.broken) lease->markBroken();
  return r;
}

namespace {

// Whether a result can carry text from the database (Fence::Auto fences it): a text-like column,
// or a key that is not the statement's own text (sql/result_keys.hpp: `SELECT *` brings the
// catalog's column names). A text-like column is any not of a numeric, boolean, date/time, uuid or
// vector type (or an array of one); a type this list does not know counts as text.
bool carriesDatabaseText(std::string_view statement, const Json& columns) {
  static const std::set<std::string, std::less<>> kNotText = {
      "int2",        "int4",     "int8", "float4", "float8",  "numeric",
      "oid",         "bool",     "date", "time",   "timetz",  "timestamp",
      "timestamptz", "interval", "uuid", "vector", "halfvec", "money"};
  if (!columns.is_array()) return true;
  std::vector<std::string_view> names;
  for (const auto& c : columns) {
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string()) return true;
    if (!c.contains("name") || !c["name"].is_string()) return true;
    names.push_back(c["name"].get_ref<const std::string&>());
    std::string_view type = c["type"].get_ref<const std::string&>();
    if (!type.empty() && type.front() == '_') type.remove_prefix(1);  // an array of the type
    if (type.size() > 2 && type.substr(type.size() - 2) == "[]") type.remove_suffix(2);
    if (kNotText.find(type) == kNotText.end()) return true;
  }
  return !sql::namesAreStatementText(statement, names);
}

}  // namespace

Result<StatementShape> Runtime::describeStatement(const std::string& sql,
                                                  const std::vector<Oid>& param_types,
                                                  const std::stop_token& stop,
                                                  Clock::time_point deadline, CallWaits* waits) {
  auto placeholders = checkStatement(sql, waits);
  if (!placeholders) return placeholders.error();
  if (*placeholders != param_types.size()) {
    return makeError(Code::Internal,
                     "the statement's placeholders do not match its bound parameters");
  }
  if (auto proved = requireProof(sql, deadline, stop, waits); !proved) return proved.error();
  for (int attempt = 0;; ++attempt) {
    auto lease = leaseConnection(deadline, stop, waits);
    if (!lease) return lease.error();
    ExecOutcome outcome;
    auto r = describeReadOnly(lease->conn(), lease->cancel(),
                              {.sql = sql,
                               .param_types = param_types,
                               .stop = stop,
                               .deadline = deadline,
                               .waits = waits},
                              outcome);
    if (outcome.broken) lease->markBroken();
    if (!r && outcome.stale && !lease->fresh() && attempt == 0) {
      pool_->dropIdle();  // as run(): the pooled connection was dead before anything was sent
      continue;
    }
    return r;
  }
}

Result<std::map<Oid, std::string>> Runtime::typeNames(const std::vector<Oid>& oids,
                                                      const std::stop_token& stop,
                                                      Clock::time_point deadline) {
  std::map<Oid, std::string> out;
  if (oids.empty()) return out;
  std::string list = "{";
  for (std::size_t i = 0; i < oids.size(); ++i)
    list += (i == 0 ? "" : ",") + std::to_string(oids[i]);
  list += "}";
  BoundParams params;
  params.add(list, kOidArray);
  Limits limits;
  limits.max_rows = static_cast<std::uint32_t>(oids.size());
  limits.max_bytes = 1 << 20;
  limits.timeout = std::chrono::milliseconds(10000);
  auto r =
      run("SELECT t.oid::pg_catalog.int8 AS oid, pg_catalog.format_type(t.oid, NULL) AS name "
          "FROM pg_catalog.pg_type t WHERE t.oid = ANY($1)",
          params, limits, stop, deadline, {.prepare = false});
  if (!r) return r.error();
  for (const Json& row : r->rows) {
    if (row.value("oid", Json()).is_number_integer() && row.value("name", Json()).is_string())
      out[static_cast<Oid>(row["oid"].get<std::int64_t>())] = row["name"].get<std::string>();
  }
  return out;
}

Result<std::shared_ptr<const CappedStatement>> Runtime::cappedStatement(
    const std::string& tool, const std::string& statement, std::uint64_t cap,
    const BoundParams& params, const std::stop_token& stop, Clock::time_point deadline,
    CallWaits* waits) {
  std::shared_ptr<const proof::Report> proof;
  {
    std::shared_lock<std::shared_mutex> lock(proof_mu_);
    proof = proof_;
  }
  {
    std::lock_guard<std::mutex> lock(capped_mu_);
    if (auto it = capped_.find(statement); it != capped_.end() && it->second.proof == proof)
      return it->second.statement;
  }
  auto shape = describeStatement(statement, params.types, stop, deadline, waits);
  if (!shape) return shape.error();
  auto capped = std::make_shared<const CappedStatement>(
      capAtSource(statement, shape->columns, cap, shape->modifiers));
  std::shared_ptr<const CappedStatement> use = capped;
  if (!checkStatement(capped->sql, waits)) {
    // A statement the wrapper cannot hold (e.g. one ending in a semicolon and a comment).
    std::fprintf(stderr,
                 "[postgres] tool %s: its values are capped as they arrive, not in the database "
                 "(the statement cannot be wrapped)\n",
                 tool.c_str());
    use = nullptr;
  }
  std::lock_guard<std::mutex> lock(capped_mu_);
  capped_[statement] = Capped{use, proof};
  return use;
}

Result<ExecResult> Runtime::runCapped(const std::string& tool, const std::string& statement,
                                      std::uint64_t cap, const BoundParams& params,
                                      const Limits& limits, const std::stop_token& stop,
                                      Clock::time_point deadline, CallWaits* waits,
                                      telemetry::Span* span) {
  Result<ExecResult> r = Error{Code::Internal, ""};
  for (int attempt = 0;; ++attempt) {
    auto capped = cappedStatement(tool, statement, cap, params, stop, deadline, waits);
    if (!capped) return capped.error();
    bool reshaped = false;
    r = run(statement, params, limits, stop, deadline,
            {.capped = capped->get(), .reshaped = &reshaped, .waits = waits, .span = span});
    if (r || !*capped) break;
    forgetCapped(statement);  // described again by the next call
    // The statement's columns changed under the wrapper: nothing was returned; this call
    // describes it again and runs once more.
    if (!reshaped || attempt > 0) break;
  }
  return r;
}

void Runtime::forgetCapped(const std::string& sql) {
  std::lock_guard<std::mutex> lock(capped_mu_);
  capped_.erase(sql);
}

Result<protocol::ToolOutput> Runtime::callQuery(const QueryTool& tool, const Json& arguments,
                                                protocol::CallContext& ctx) {
  auto params = bindArguments(tool.parameters, arguments);
  if (!params) return params.error();
  const Limits& limits = ctx.limits;  // the call's, built once by the session
  const Clock::time_point deadline = ctx.deadlineFor(limits);
  if (auto proved = requireProof(tool.statement, deadline, ctx.stop, ctx.waits); !proved)
    return proved.error();
  Result<ExecResult> r = runCapped(tool.name, tool.statement, tool.limits.max_bytes, *params,
                                   limits, ctx.stop, deadline, ctx.waits, ctx.span);
  if (!r) return r.error();
  ctx.audit.truncated = r->truncated;
  protocol::ToolOutput out;
  out.rows = r->row_count;
  Json columns = std::move(r->columns);
  out.free_text = carriesDatabaseText(tool.statement, columns);
  out.structured = envelope(*r, "rows");
  out.structured["columns"] = std::move(columns);
  return out;
}

Status Runtime::checkModel(const embed::Embedder& embedder, const Limits& limits,
                           const std::stop_token& stop, Clock::time_point deadline,
                           CallWaits* waits) {
  const SemanticSearch& s = section_.search;
  if (s.model_statement.empty()) return {};
  const std::string want = embedder.modelId() + "/" + std::to_string(embedder.dimension());
  {
    std::lock_guard<std::mutex> lock(model_mu_);
    if (model_checked_ == want && Clock::now() - model_checked_at_ < kModelCheckTtl) return {};
  }
  Limits l = limits;
  l.max_rows = 2;
  auto r = run(s.model_statement, BoundParams{}, l, stop, deadline, {.waits = waits});
  if (!r) return r.error();
  if (r->rows.empty()) {
    return makeError(
        Code::FailedPrecondition,
        "the embedding model table is empty: load the vectors first (mcp-dbserver-load)");
  }
  if (r->rows.size() > 1) {
    return makeError(Code::FailedPrecondition,
                     "the embedding model table records more than one model");
  }
  const Json& row = r->rows[0];
  const std::string stored_model =
      row.value("model_id", Json("")).is_string() ? row["model_id"].get<std::string>() : "";
  const std::int64_t stored_dim = row.value("dimension", Json(0)).is_number_integer()
                                      ? row["dimension"].get<std::int64_t>()
                                      : 0;
  if (stored_model != embedder.modelId() ||
      stored_dim != static_cast<std::int64_t>(embedder.dimension())) {
    return makeError(Code::FailedPrecondition,
                     "the stored vectors were made by model '" + stored_model + "' (dimension " +
                         std::to_string(stored_dim) + ") but this server embeds queries with '" +
                         embedder.modelId() + "' (dimension " +
                         std::to_string(embedder.dimension()) +
                         "): reload the data or configure the same model");
  }
  std::lock_guard<std::mutex> lock(model_mu_);
  model_checked_ = want;
  model_checked_at_ = Clock::now();
  return {};
}

Result<protocol::ToolOutput> Runtime::callSearch(const Json& arguments, protocol::CallContext& ctx,
                                                 const EmbedderFn& embedder_fn) {
  const SemanticSearch& s = section_.search;
  const Json empty = Json::object();
  const Json& args = arguments.is_null() ? empty : arguments;
  if (!args.is_object()) return makeError(Code::InvalidArgument, "arguments: must be an object");
  for (const auto& [key, v] : args.items()) {
    (void)v;
    bool known = key == "query" || key == "k";
    for (const auto& f : s.filters) known = known || f.name == key;
    if (!known)
      return makeError(Code::InvalidArgument, "arguments: unknown argument (see the input schema)");
  }
  // The query text: a bounded string (checked here too; the registry validated the schema first).
  ScalarSpec query_spec;
  query_spec.min_length = 1;
  query_spec.max_length = s.max_query_length;
  if (!args.contains("query"))
    return makeError(Code::InvalidArgument, "arguments.query: is required");
  auto query = encodeScalar(query_spec, args["query"], "arguments.query");
  if (!query) return query.error();
  ScalarSpec k_spec;
  k_spec.type = ScalarType::Integer;
  k_spec.min_int = 1;
  k_spec.max_int = s.k_max;
  std::string k = std::to_string(s.k_default);
  if (args.contains("k") && !args["k"].is_null()) {
    auto kv = encodeScalar(k_spec, args["k"], "arguments.k");
    if (!kv) return kv.error();
    k = *kv;
  }
  BoundParams params;
  params.add(std::string(), 0);  // $1: the query vector, filled below ($1::vector in the SQL)
  params.add(k, oid::kInt8);
  for (const auto& f : s.filters) {
    if (!args.contains(f.name) || args[f.name].is_null()) {
      params.add(std::nullopt, scalarOid(f.scalar.type));
      continue;
    }
    auto v = encodeScalar(f.scalar, args[f.name], "arguments." + f.name);
    if (!v) return v.error();
    params.add(std::move(*v), scalarOid(f.scalar.type));
  }

  if (!embedder_fn)
    return makeError(Code::FailedPrecondition, "semantic search is unavailable: no embedder");
  // Loading the model (on first use) and embedding the query are long steps that watch none of
  // the call's descriptors: hand on before them.
  handOn(ctx.waits);
  auto embedder = embedder_fn();
  if (!embedder) {
    return makeError(Code::FailedPrecondition,
                     "semantic search is unavailable: " + embedder.error().message);
  }
  const Limits& limits = ctx.limits;  // the call's, built once by the session
  const Clock::time_point deadline = ctx.deadlineFor(limits);
  if (auto proved = requireProof(s.statement, deadline, ctx.stop, ctx.waits); !proved)
    return proved.error();
  if (!s.model_statement.empty()) {
    if (auto model = requireProof(s.model_statement, deadline, ctx.stop, ctx.waits); !model)
      return model.error();
  }
  if (auto st = checkModel(**embedder, limits, ctx.stop, deadline, ctx.waits); !st)
    return st.error();
  auto vec = (*embedder)->embedOne(*query);
  if (!vec) return vec.error();
  if (vec->size() != (*embedder)->dimension())
    return makeError(Code::Internal, "the embedder returned a vector of the wrong size");
  std::string text = "[";
  char buf[32];
  for (std::size_t i = 0; i < vec->size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>((*vec)[i]));
    if (i > 0) text += ',';
    text += buf;
  }
  text += ']';
  params.values[0] = std::move(text);

  // The byte cap at the source, as a query tool's: a matched document's text longer than the cap
  // stays in the database (cut, null in its row).
  auto r = runCapped(s.tool, s.statement, s.limits.max_bytes, params, limits, ctx.stop, deadline,
                     ctx.waits, ctx.span);
  if (!r) return r.error();
  ctx.audit.truncated = r->truncated;
  protocol::ToolOutput out;
  out.rows = r->row_count;
  out.free_text = carriesDatabaseText(s.statement, r->columns);
  out.structured = envelope(*r, "results");
  out.structured["model"] = (*embedder)->modelId();
  out.structured["distance"] = s.distance == Distance::Cosine ? "cosine"
                               : s.distance == Distance::L2   ? "l2"
                                                              : "inner_product";
  return out;
}

}  // namespace mcpdb::postgres
