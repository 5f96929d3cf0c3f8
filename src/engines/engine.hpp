#pragma once
// What an engine is: a config section validated once at startup, then an adapter whose tool
// handlers serve calls and never throw. Engines do not include each other; shared pieces live in
// src/common, src/aws, src/embed.

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/env.hpp"
#include "common/json.hpp"
#include "common/limits.hpp"
#include "common/result.hpp"
#include "config/config.hpp"
#include "config/node.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::embed {
class Embedder;
}

namespace mcpdb::engines {

// One finding of a read-only self-check (startup check and `doctor`). A check that could not be
// made is Inconclusive, never Ok: a verdict is never more confident than its evidence.
struct Finding {
  enum class Severity {
    Ok,            // proved
    Info,          // context, proves nothing
    Warning,       // weaker than it should be, but not a write path
    Violation,     // the principal can write
    Inconclusive,  // could not connect or inspect: nothing was proved
    Unusable,      // a configured tool cannot run as this principal (missing table, privilege)
  };
  Severity severity = Severity::Info;
  std::string check;     // short id, e.g. "pg.superuser"
  std::string message;   // what was found, safe to print (never a credential or a row)
  std::string fix = {};  // the statement or step that removes the finding; empty when none
};

// Services the application hands to every engine.
struct EngineServices {
  const Env* env = nullptr;
  Limits defaults;
  // The shared embedder (same model for every engine), created on first use; may fail.
  std::function<Result<std::shared_ptr<embed::Embedder>>()> embedder;
  // Whether the embedder can be made, checked without loading it (the files the model would be
  // read from): doctor's and the self-check's proof that a semantic-search tool can run.
  std::function<Status()> embedder_check;
  // Signs/verifies opaque cursors handed to agents (HMAC; see common/cursor.hpp when present).
  std::string cursor_key;
  // Set by registerTools() when a registered tool embeds text, so the application preloads the
  // model in the background (and not at all when no tool needs it).
  bool embedder_requested = false;
  // Requested when the server stops (after its calls have drained): work that may wait on a
  // database outside any call, the background start-up self-check, ends early instead of holding
  // the exit for its connection timeouts. Never requested for doctor or check-config.
  std::stop_token stopping;
};

// A value sampled whenever metrics are rendered, e.g. connection pool usage. `name` is relative
// to the engine: it is exposed as mcpdb_<engine>_<name>, and, when `by_source` is set, per source
// as mcpdb_<engine>_<name>_by_source{source="..."} (engines/kit/module.hpp). The samplers are
// cheap, thread-safe and never throw.
struct Gauge {
  std::string name;
  std::string help;
  std::function<double()> sample;
  std::function<std::vector<std::pair<std::string, double>>()> by_source = {};
};

// A cheap round trip to one source for readiness (/readyz, observe/readiness.hpp): Ok when the
// source answered by `deadline`. Thread-safe, never throws; holds what it needs (its runtime), so
// it outlives nothing of the module's. It takes at most one of the source's connections, and only
// until `deadline`: a probe never waits in a call's place for long, nor keeps a slot.
struct SourceProbe {
  std::string source;  // the operator's name for it ("default" for an engine's implicit source)
  std::function<Status(std::chrono::steady_clock::time_point deadline, const std::stop_token& stop)>
      probe;
};

class EngineModule {
 public:
  virtual ~EngineModule() = default;

  // The engine name; also its config section key ("postgres", "dynamodb", "mongodb").
  virtual std::string_view name() const = 0;
  // The environment variables that enable this engine, for messages.
  virtual std::string_view enableHint() const = 0;
  virtual bool enabled(const Env& env) const = 0;
  // How this engine enforces read-only, in one paragraph (printed by check-config / doctor).
  virtual std::string_view securityPosture() const = 0;
  // The built-in allowlist section for the demo data set (YAML text), used when no config file
  // is given.
  virtual std::string_view defaultSection() const = 0;
  // The same section as the document yaml-cpp would parse from it, built without parsing (the
  // serving path's start-up; src/config/prebuilt.hpp).
  virtual YAML::Node defaultSectionDocument() const = 0;
  // The section's declaration (its key is name()), for the config's JSON Schema and reference.
  virtual config::TopLevelKey configKey() const = 0;

  // Parses and validates the section completely; problems go to `section.diag()`.
  // `section` may be absent (no tools for this engine).
  virtual void configure(const config::Node& section, const Limits& defaults) = 0;
  // Adds this engine's tools. Must not connect: connections are opened lazily (check-config
  // registers every engine to print the surface).
  virtual Status registerTools(protocol::ToolRegistry& registry, EngineServices& services) = 0;
  // Whether the configured section declares any tool (false: the config does not use it).
  virtual bool declaresTools() const = 0;
  // The section says `optional: true`: the server may start without this engine when its
  // environment is unset (by default a config declaring its tools then refuses to start).
  virtual bool optional() const = 0;
  // The variables the configured sources read that `env` leaves unset, each once, for the
  // message that refuses the start; empty when the engine is enabled.
  virtual std::vector<std::string> unsetVariables(const Env& env) const = 0;
  // Proves (as far as the engine can) that the configured principal cannot write.
  virtual std::vector<Finding> selfCheck(EngineServices& services) = 0;
  // Proves, as the configured principal, that every configured tool can run: each statement can
  // be prepared and each target read (Unusable findings, each with its fix, otherwise Ok).
  virtual std::vector<Finding> checkTools(EngineServices& services) = 0;
  // Gauges for the metrics endpoint (pool usage); none by default. Asked after registerTools().
  virtual std::vector<Gauge> gauges() { return {}; }
  // One probe per source the configured tools read (readiness); none by default (an engine
  // without sources has nothing to wait for). Asked after registerTools(); making them never
  // connects.
  virtual std::vector<SourceProbe> probes(EngineServices& /*services*/) { return {}; }
};

using EngineModulePtr = std::unique_ptr<EngineModule>;

// Every engine this build knows, one registration line each (src/engines/all_engines.cpp).
std::vector<EngineModulePtr> allEngineModules();

}  // namespace mcpdb::engines
