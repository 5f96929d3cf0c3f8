#pragma once
// Assembles the server from the config and the engine modules; used by main.cpp and tests.

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/scope.hpp"
#include "common/env.hpp"
#include "config/config.hpp"
#include "engines/engine.hpp"
#include "app/telemetry.hpp"
#include "observe/audit_log.hpp"
#include "observe/readiness.hpp"
#include "protocol/tool_registry.hpp"
#include "transport/http/http_config.hpp"

namespace mcpdb::app {

// Documented exit codes (README "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitConfig = 3;
inline constexpr int kExitSelfCheck = 4;
inline constexpr int kExitDoctorViolation = 5;
inline constexpr int kExitDoctorInconclusive = 6;   // a check could not be made: nothing proved
inline constexpr int kExitDoctorToolsUnusable = 7;  // read-only, but a configured tool cannot run
inline constexpr int kExitToolError = 8;            // invoke: the tool ran and reported an error
inline constexpr int kExitCallRefused = 9;  // invoke: refused before the tool ran (name, arguments)

struct Assembly;

struct AppOptions {
  std::optional<std::string> config_path;  // --config, else MCPDB_CONFIG, else the built-in default
  std::string version = "0.0.0";
  std::optional<std::string> log_format;  // --log-format: "text" or "json" (checked by the CLI)
  // A config reload (app/reload.hpp) only: the file's text as read once (the bytes checked are
  // the bytes validated), and the running assembly, whose cursor signing key is kept (cursors
  // handed out stay valid) and whose embedder is kept when the embedding settings are unchanged
  // (the model is not loaded twice).
  std::optional<std::string> config_text;
  const Assembly* inherit = nullptr;
};

// A validated configuration with its engines configured and tools registered.
struct Assembly {
  config::Config config;
  std::vector<engines::EngineModulePtr> modules;
  std::vector<bool> enabled;  // parallel to modules
  std::shared_ptr<protocol::ToolRegistry> registry;
  engines::EngineServices services;
  std::vector<std::string> warnings;
  bool preload_embedder = true;
  transport::http::HttpSettings http;  // the `http:` section
  observe::AuditSettings audit;        // the `audit:` section
  TelemetrySettings telemetry;         // the `telemetry:` section (app/telemetry.hpp)
  std::vector<std::string> sections;   // top-level keys allowed besides the generic ones
  std::optional<std::string> config_path;
  // Its token is services.stopping; requested when serving ends (see DelayedTask).
  std::stop_source stopping;
  // What /readyz reports (serve --http only; app/readiness.hpp); null elsewhere.
  std::shared_ptr<observe::Readiness> readiness;
};

// Whether two YAML values are the same: absent or null alike, scalars by text, sequences in order,
// maps by key whatever their order; comments, quoting and block or flow style do not count.
bool sameYaml(const YAML::Node& a, const YAML::Node& b);
// sameYaml of the top-level section `key` of both documents. Reloads use it.
bool sameSection(const YAML::Node& before, const YAML::Node& after, std::string_view key);

// The built-in allowlist (every engine's demo section).
std::string builtInConfigText(const std::vector<engines::EngineModulePtr>& modules);
// The document yaml-cpp would parse from builtInConfigText(), built without parsing: each part is
// prebuilt at build time (src/config/prebuilt.hpp).
YAML::Node builtInConfigDocument(const std::vector<engines::EngineModulePtr>& modules);
// The built-in allowlist's first lines (builtin_header.yaml), as text and as a document.
std::string_view builtInHeaderText();
YAML::Node builtInHeaderDocument();

// Loads and validates everything. `all_engines` registers tools of disabled engines too (for
// check-config). Errors are written to `err`; returns nullopt on any error.
std::optional<Assembly> assemble(const AppOptions& options, const Env& env, bool all_engines,
                                 std::ostream& err);

// `serve`'s refusal of a config file that declares tools for an engine whose environment is
// unset (unless its section says `optional: true`): one "file:line: engine: ..." line each, naming
// the variables; empty when it may start.
std::vector<std::string> environmentRefusals(const Assembly& a, const Env& env);

// `serve`'s refusal to start with zero tools, saying why (no engine enabled by the environment,
// with how to enable one; the config declares no tools; every engine it declares is disabled).
std::optional<std::string> zeroToolsRefusal(const Assembly& a);

// Both refusals above, written to `err` as `who` ("refusing to start", "invoke: refused") with the
// config's warnings that explain a disabled engine; true when `a` cannot serve. The one rule for
// `serve` and `invoke`: a config that cannot serve cannot run one call either.
bool refuseUnservable(const Assembly& a, const Env& env, std::string_view who, std::ostream& err);

// MCPDB_LOG_LEVEL: trace, debug, info, warn/warning, error/err, critical, off, in any case; the
// spdlog level, or nullopt.
std::optional<int> parseLogLevel(std::string_view text);

// `keys new`: the scope names only engines and tools of the config (--config, MCPDB_CONFIG or the
// built-in one) and lets the client see at least one tool. Config problems go to `err`.
Status checkScope(const AppOptions& options, const Env& env, const auth::Scope& scope,
                  std::ostream& err);

int runCheckConfig(const AppOptions& options, const Env& env, bool json, std::ostream& out,
                   std::ostream& err);
int runServeStdio(const AppOptions& options, const Env& env);

struct HttpServeOptions {
  std::string listen = "127.0.0.1:8080";  // ADDR:PORT
  bool allow_insecure = false;            // plain HTTP on a non-loopback address
};
// `serve --http ADDR:PORT`: Streamable HTTP until SIGINT/SIGTERM; SIGHUP reloads http.clients.
int runServeHttp(const AppOptions& options, const Env& env, const HttpServeOptions& http);

struct InvokeOptions {
  std::string tool;
  std::string args_json;  // a JSON object; empty: no arguments
  bool json = false;      // print the whole CallToolResult (or JSON-RPC error) as JSON
};
// `invoke TOOL --args JSON`: one call through the same path as an agent's (validation, scope,
// proof, limits, audit). Exit 0 with the result on stdout, 8 when the tool reported an error, 9
// when the call was refused before the tool ran, 2 for --args that is not a JSON object, 3 for
// an invalid config, 4 when self_check: refuse could not prove the credentials read-only.
int runInvoke(const AppOptions& options, const Env& env, const InvokeOptions& invoke,
              std::ostream& out, std::ostream& err);

// `doctor`: connects with the configured credentials of every engine the config uses, reports
// what each principal can do (with the statement that fixes each finding) and whether every
// configured tool can run. Exit 0 when proved read-only and every tool can run, 5 when a
// principal can write, 6 when a check could not be made, 7 when a tool cannot run.
int runDoctor(const AppOptions& options, const Env& env, bool json, std::ostream& out,
              std::ostream& err);

}  // namespace mcpdb::app
