#pragma once
// The serving side of the Postgres engine: the pool, the guarded execution path every tool call
// takes, the tool handlers and the privilege self-check.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/call_waits.hpp"
#include "common/env.hpp"
#include "common/json.hpp"
#include "common/result.hpp"
#include "engines/engine.hpp"
#include "engines/postgres/conninfo.hpp"
#include "engines/postgres/executor.hpp"
#include "engines/postgres/config.hpp"
#include "engines/postgres/pool.hpp"
#include "protocol/tool.hpp"
#include "telemetry/span.hpp"

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

// What a call does with the last proof, by its age (measured from when the proof began reading
// the catalog): use it (Fresh); use it and have it made again in the background (Refresh: older
// than three quarters of the interval, so that a busy server has the next one before this one
// expires, or a new pooled connection was opened since and it is older than a second); never run
// on it (Expired: older than the interval): the call waits for the new proof, up to its deadline.
enum class ProofAge { Fresh, Refresh, Expired };
ProofAge judgeProofAge(Clock::duration age, std::chrono::seconds interval, bool new_connection);

// How Runtime::run runs a statement, besides its bounds.
struct RunOptions {
  // false: never as a pooled prepared statement (for rare statements, e.g. the proof's).
  bool prepare = true;
  // Run its wrapper of the statement instead (source_cap.hpp), the guardrail verdict on that.
  const CappedStatement* capped = nullptr;
  // When given, tells a failure because the wrapper no longer fits the statement.
  bool* reshaped = nullptr;
  // What the call owes its runner while it waits (common/call_waits.hpp); null: nothing.
  CallWaits* waits = nullptr;
  // The call's span (protocol::CallContext::span): each round trip gets a child; null: untraced.
  telemetry::Span* span = nullptr;
};

class Runtime {
 public:
  // Serves one source: `section.sources.front()` (the implicit default when there is none) with
  // the tools of `section` (settingsFor). Its pool, proof and self-check are its own, so a source
  // that cannot connect fails only its own calls, with errors that name it.
  // `token` is used only in RDS IAM mode; empty means the real AWS credential chain.
  Runtime(Settings section, Env env, TokenSource token = {});

  // The one execution path of every call: the guardrail verdict on `sql` (again, right before
  // running it), a pooled connection, executeReadOnly. When a pooled connection turns out dead
  // before anything ran (e.g. the server restarted), idle connections are dropped and the call is
  // retried once on a new connection. `options`: see RunOptions.
  Result<ExecResult> run(const std::string& sql, const BoundParams& params, const Limits& limits,
                         const std::stop_token& stop, Clock::time_point deadline,
                         const RunOptions& options = {});

  // Tool handlers (never throw). Each honours ctx.waits (common/call_waits.hpp): every wait on
  // its path watches their descriptors or hands on first.
  Result<protocol::ToolOutput> callQuery(const QueryTool& tool, const Json& arguments,
                                         protocol::CallContext& ctx);
  Result<protocol::ToolOutput> callSearch(const Json& arguments, protocol::CallContext& ctx,
                                          const EmbedderFn& embedder);

  // Describes `sql` as a call would run it, without running it (schema resources): the guardrail
  // verdict, the read-only proof (a refused statement fails closed, as its tool call does), a
  // pooled connection, describeReadOnly. `param_types` are the types a call binds. `waits`: as
  // RunOptions::waits.
  Result<StatementShape> describeStatement(const std::string& sql,
                                           const std::vector<Oid>& param_types,
                                           const std::stop_token& stop, Clock::time_point deadline,
                                           CallWaits* waits = nullptr);
  // PostgreSQL's own names (format_type) of the types `oids`, for those typeName() does not know
  // (enums, domains, extension types); one catalog query through run(), never prepared.
  Result<std::map<Oid, std::string>> typeNames(const std::vector<Oid>& oids,
                                               const std::stop_token& stop,
                                               Clock::time_point deadline);

  // The privilege self-check of the configured role (see doctor.cpp).
  // `stop` ends it early (the server stopping): what it could not check is inconclusive.
  std::vector<engines::Finding> selfCheck(const std::stop_token& stop = {});
  // doctor: every configured statement can be planned and its relations read as the configured
  // role (see tool_check.cpp). `stop` ends it early (the server stopping): the start-up
  // self-check runs it too, and must not hold the exit for a database that never answers.
  std::vector<engines::Finding> checkTools(const std::stop_token& stop = {});
  // `EXPLAIN sql` with `params` bound, in a READ ONLY transaction, never as a pooled prepared
  // statement: the guardrail verdict on `sql` first, as run() does. `outcome` carries the
  // server's SQLSTATE and reason when it fails.
  Result<ExecResult> explain(const std::string& sql, const BoundParams& params,
                             ExecOutcome& outcome, const std::stop_token& stop = {});

  // The read-only proof of the configured statements (proof.hpp), made on first use and again, in
  // the background, before it is postgres.proof.interval_s old (judgeProofAge). No call runs on a
  // proof older than the interval: a call that finds one waits for the background prover (one
  // proof for every waiting call) until `deadline` or `stop`, and fails closed (Unavailable) when
  // the proof is not made by then or the attempt fails. Ok when `sql` is proved read-only;
  // PermissionDenied naming the object and the reason when it is refused. A call that must wait
  // hands `waits` (may be null) on first.
  Status requireProof(const std::string& sql, Clock::time_point deadline = noDeadline(),
                      const std::stop_token& stop = {}, CallWaits* waits = nullptr);
  // Makes a fresh proof of every configured statement now (doctor, startup, tests).
  Result<std::shared_ptr<const proof::Report>> proveNow(const std::stop_token& stop = {});
  // Makes a fresh proof and reports it as one finding ("pg.proof"): Ok with its figures, a Warning
  // naming each refused statement (those tools are refused at call time), or Inconclusive.
  engines::Finding proofFinding(const std::stop_token& stop = {});
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

  // Readiness (EngineModule::probes): kit::kProbeStatement on a pooled connection, waiting for
  // one only briefly (kit::probeSlotDeadline) and holding it until `deadline` at most. A dead
  // pooled connection is retried once on a new one, as a call is.
  Status probe(Clock::time_point deadline, const std::stop_token& stop);

  Pool& pool() { return *pool_; }
  const Settings& section() const { return section_; }
  const Source& source() const { return source_; }

 private:
  // A pooled connection; a declared source's errors say which source failed. `waits`: as
  // Pool::acquire's.
  Result<Pool::Lease> leaseConnection(Clock::time_point deadline, const std::stop_token& stop,
                                      CallWaits* waits = nullptr);
  // A tool's statement wrapped for the tool's byte cap `cap` (source_cap.hpp), from its
  // description (one round trip, made again under each new proof or after a failed call); null
  // when the wrapper does not pass the guardrail (then the statement runs as written, its values
  // capped only as they arrive). `tool` names it in the operator's note.
  Result<std::shared_ptr<const CappedStatement>> cappedStatement(
      const std::string& tool, const std::string& statement, std::uint64_t cap,
      const BoundParams& params, const std::stop_token& stop, Clock::time_point deadline,
      CallWaits* waits);
  // Runs a tool's statement (a query tool's or the semantic search's) under the byte cap at the
  // source: wrapped for `cap`, described again and run once more when its columns changed under
  // the wrapper (nothing was returned).
  Result<ExecResult> runCapped(const std::string& tool, const std::string& statement,
                               std::uint64_t cap, const BoundParams& params, const Limits& limits,
                               const std::stop_token& stop, Clock::time_point deadline,
                               CallWaits* waits, telemetry::Span* span = nullptr);
  void forgetCapped(const std::string& sql);
  Status checkModel(const embed::Embedder& embedder, const Limits& limits,
                    const std::stop_token& stop, Clock::time_point deadline, CallWaits* waits);

  // The guardrail verdict of `sql`: its placeholder count when allowed. Allowed statements are
  // remembered (by their whole text; refusals never are), so checking one again is a lookup.
  // A statement not remembered is parsed on the guard's one parser thread, which the proof uses
  // too: `waits` (may be null) are handed on before waiting for it.
  Result<std::size_t> checkStatement(const std::string& sql, CallWaits* waits = nullptr);
  // proveNow() with prove_mu_ already held; `stop` ends its catalog queries early.
  Result<std::shared_ptr<const proof::Report>> proveLocked(const std::stop_token& stop = {});
  // Writes each refusal of `now` that `before` did not have to stderr (the operator's log).
  void logNewRefusals(const proof::Report* before, const proof::Report& now) const;
  // Wakes the background prover (started on first use); never waits for it.
  void requestReproof();
  void reproveLoop(const std::stop_token& stop);
  // The last proof when it may be used now (not older than the interval), after asking for the
  // next one when it is due; null when a call must wait for a new one.
  std::shared_ptr<const proof::Report> usableProof();
  // Waits for the background prover to make a proof a call may use, until `deadline` or `stop`.
  Result<std::shared_ptr<const proof::Report>> awaitFreshProof(Clock::time_point deadline,
                                                               const std::stop_token& stop,
                                                               CallWaits* waits);
  // What requireProof's default deadline stands for: an hour from now (no call waits longer).
  static Clock::time_point noDeadline() { return Clock::now() + std::chrono::hours(1); }

  Settings section_;
  Env env_;
  Source source_;  // after section_: initialised from it
  std::unique_ptr<Pool> pool_;
  std::shared_mutex allowed_mu_;
  std::unordered_map<std::string, std::size_t> allowed_;  // statement -> placeholder count
  std::timed_mutex prove_mu_;                             // one proof at a time
  std::shared_mutex proof_mu_;                            // guards proof_ and proved_at_
  std::shared_ptr<const proof::Report> proof_;
  Clock::time_point proved_at_{};
  std::uint64_t opened_at_proof_ = 0;  // pool_->connectionsOpened() when proof_ was made
  struct Capped {
    std::shared_ptr<const CappedStatement> statement;  // null: runs unwrapped
    std::shared_ptr<const proof::Report> proof;        // the proof it was described under
  };
  std::mutex capped_mu_;
  std::unordered_map<std::string, Capped> capped_;  // by the configured statement
  std::mutex model_mu_;
  std::string model_checked_;  // "<model id>/<dimension>" verified against the model table
  Clock::time_point model_checked_at_{};
  // Guards reprove_wanted_, reprove_failed_at_, reprove_done_, reprove_error_, reprover_'s start.
  std::mutex reprove_mu_;
  std::condition_variable_any reprove_cv_;  // the prover waits on it for a request
  std::condition_variable_any proved_cv_;   // calls wait on it for an attempt to end
  bool reprove_wanted_ = false;
  Clock::time_point reprove_failed_at_{};
  std::uint64_t reprove_done_ = 0;      // background attempts ended (made or failed)
  std::optional<Error> reprove_error_;  // why the last one failed; empty when it made a proof
  // Last member: stopped and joined before anything it uses is destroyed.
  std::jthread reprover_;
};

}  // namespace mcpdb::postgres
