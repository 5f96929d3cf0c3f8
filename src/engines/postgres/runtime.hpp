#pragma once
// The serving side of the Postgres engine: the pool, the guarded execution path every tool call
// takes, the tool handlers and the privilege self-check.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/env.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "engines/engine.hpp"
#include "engines/postgres/conninfo.hpp"
#include "engines/postgres/executor.hpp"
#include "engines/postgres/pg_config.hpp"
#include "engines/postgres/pool.hpp"
#include "protocol/tool.hpp"

namespace mcpdb::embed {
class Embedder;
}

namespace mcpdb::postgres {

using EmbedderFn = std::function<Result<std::shared_ptr<embed::Embedder>>()>;

// A doctor finding the operator cannot remove, reported as mitigated rather than as a violation:
// every row is PUBLIC's EXECUTE on a pg_catalog function owned by the provider's superuser of a
// managed service (`managed` names its admin role; empty: not managed), and every function is on
// the guard's denylist, so the read-only proof refuses any statement that reaches it.
bool mitigatedByProof(const Json& rows, std::string_view managed);

// What a call does with the last proof, by its age: use it (Fresh); use it and have it made again
// in the background (Refresh: older than the interval, or a new pooled connection was opened
// since and it is older than a second); make it again first, failing closed when that fails
// (Expired: older than twice the interval, so every background attempt since has failed).
enum class ProofAge { Fresh, Refresh, Expired };
ProofAge judgeProofAge(Clock::duration age, std::chrono::seconds interval, bool new_connection);

class Runtime {
 public:
  // Serves one source: `section.sources.front()` (the implicit default when there is none) with
  // the tools of `section` (sectionFor). Its pool, proof and self-check are its own, so a source
  // that cannot connect fails only its own calls, with errors that name it.
  // `token` is used only in RDS IAM mode; empty means the real AWS credential chain.
  Runtime(Section section, Env env, TokenSource token = {});

  // The one execution path of every call: the guardrail verdict on `sql` (again, right before
  // running it), a pooled connection, executeReadOnly. When a pooled connection turns out dead
  // before anything ran (e.g. the server restarted), idle connections are dropped and the call is
  // retried once on a new connection.
  // `prepare` false: never as a pooled prepared statement (for rare statements, e.g. the proof's).
  // `release_locks` false: no pg_advisory_unlock_all() after it (only for a statement the proof
  // followed all the way down; see proof::Report::opaque).
  Result<ExecResult> run(const std::string& sql, const BoundParams& params, const Limits& limits,
                         const std::stop_token& stop, Clock::time_point deadline,
                         bool prepare = true, bool release_locks = true);

  // Tool handlers (never throw).
  Result<protocol::ToolOutput> callQuery(const QueryTool& tool, const Json& arguments,
                                         protocol::CallContext& ctx);
  Result<protocol::ToolOutput> callSearch(const Json& arguments, protocol::CallContext& ctx,
                                          const EmbedderFn& embedder);

  // Describes `sql` as a call would run it, without running it (schema resources): the guardrail
  // verdict, the read-only proof (a refused statement fails closed, as its tool call does), a
  // pooled connection, describeReadOnly. `param_types` are the types a call binds.
  Result<StatementShape> describeStatement(const std::string& sql,
                                           const std::vector<Oid>& param_types,
                                           const std::stop_token& stop, Clock::time_point deadline);
  // PostgreSQL's own names (format_type) of the types `oids`, for those typeName() does not know
  // (enums, domains, extension types); one catalog query through run(), never prepared.
  Result<std::map<Oid, std::string>> typeNames(const std::vector<Oid>& oids,
                                               const std::stop_token& stop,
                                               Clock::time_point deadline);

  // The privilege self-check of the configured role (see self_check.cpp).
  std::vector<engines::Finding> selfCheck();
  // doctor: every configured statement can be planned and its relations read as the configured
  // role (see tool_check.cpp).
  std::vector<engines::Finding> checkTools();
  // `EXPLAIN sql` with `params` bound, in a READ ONLY transaction, never as a pooled prepared
  // statement: the guardrail verdict on `sql` first, as run() does. `outcome` carries the
  // server's SQLSTATE and reason when it fails.
  Result<ExecResult> explain(const std::string& sql, const BoundParams& params,
                             ExecOutcome& outcome);

  // The read-only proof of the configured statements (proof.hpp), made on first use and again,
  // in the background, once it is older than postgres.proof.interval_s or the pool has opened a
  // new connection since; calls go on with the last proof meanwhile and never wait for a new one,
  // unless the last one is older than twice the interval (every attempt since failed): then the
  // call proves again itself, and fails closed when it cannot. Ok when `sql` is proved read-only;
  // PermissionDenied naming the object and the reason when it is refused; Unavailable when no proof
  // can be made. The value says whether advisory locks must be released after it (it reaches
  // code the proof accepted without reading it).
  Result<bool> requireProof(const std::string& sql);
  // Makes a fresh proof of every configured statement now (doctor, startup, tests).
  Result<std::shared_ptr<const proof::Report>> proveNow();
  // Makes a fresh proof and reports it as one finding ("pg.proof"): Ok with its figures, a Warning
  // naming each refused statement (those tools are refused at call time), or Inconclusive.
  engines::Finding proofFinding();
  // The last proof, or a new one when none was made yet.
  Result<std::shared_ptr<const proof::Report>> latestProof();
  // One level of a proof: proof::kCatalogSql with `request` as its $1, through run() (guarded,
  // read-only, never a pooled prepared statement).
  Result<std::vector<Json>> catalogQuery(const Json& request, const std::stop_token& stop = {});
  // The proof's second net for one statement: PostgreSQL's analysis of it on a pooled
  // connection (analysis.hpp), once per way the configured tools bind its parameters.
  Result<proof::Analysis> analyzeStatement(const std::string& sql,
                                           const std::stop_token& stop = {});
  // The statements the proof covers: every tool's, the search statement and the model check.
  std::vector<std::string> configuredStatements() const;

  Pool& pool() { return *pool_; }
  const Section& section() const { return section_; }
  const Source& source() const { return source_; }

 private:
  // A pooled connection; a declared source's errors say which source failed.
  Result<Pool::Lease> leaseConnection(Clock::time_point deadline, const std::stop_token& stop);
  Status checkModel(const embed::Embedder& embedder, const Limits& limits,
                    const std::stop_token& stop, Clock::time_point deadline);

  // The guardrail verdict of `sql`: its placeholder count when allowed. Allowed statements are
  // remembered (by their whole text; refusals never are), so checking one again is a lookup.
  Result<std::size_t> checkStatement(const std::string& sql);
  // proveNow() with prove_mu_ already held; `stop` ends its catalog queries early.
  Result<std::shared_ptr<const proof::Report>> proveLocked(const std::stop_token& stop = {});
  // Writes each refusal of `now` that `before` did not have to stderr (the operator's log).
  void logNewRefusals(const proof::Report* before, const proof::Report& now) const;
  // Wakes the background prover (started on first use); never waits for it.
  void requestReproof();
  void reproveLoop(const std::stop_token& stop);

  Section section_;
  Env env_;
  Source source_;  // after section_: initialised from it
  std::unique_ptr<Pool> pool_;
  std::shared_mutex allowed_mu_;
  std::unordered_map<std::string, std::size_t> allowed_;  // statement -> placeholder count
  std::mutex prove_mu_;                                   // one proof at a time
  std::shared_mutex proof_mu_;                            // guards proof_ and proved_at_
  std::shared_ptr<const proof::Report> proof_;
  Clock::time_point proved_at_{};
  std::uint64_t opened_at_proof_ = 0;  // pool_->connectionsOpened() when proof_ was made
  std::mutex model_mu_;
  std::string model_checked_;  // "<model id>/<dimension>" verified against the model table
  Clock::time_point model_checked_at_{};
  std::mutex reprove_mu_;  // guards reprove_wanted_, reprove_failed_at_, reprover_'s start
  std::condition_variable_any reprove_cv_;
  bool reprove_wanted_ = false;
  Clock::time_point reprove_failed_at_{};
  // Last member: stopped and joined before anything it uses is destroyed.
  std::jthread reprover_;
};

}  // namespace mcpdb::postgres
