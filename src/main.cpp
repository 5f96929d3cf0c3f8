// The command line: the only code no test links. Everything else lives in libraries.
#include <CLI/CLI.hpp>

#include <iostream>

#include "app/app.hpp"
#include "app/config_keys.hpp"
#include "app/import_toolbox.hpp"
#include "auth/keys_command.hpp"
#include "mcpdb_build_info.hpp"

#ifdef MCPDB_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#ifndef MCPDB_VERSION
#define MCPDB_VERSION "0.0.0"
#endif

namespace {

// The allocator the binary runs on, for --version (release builds link jemalloc; sanitizer and
// fuzz builds use the sanitizer's).
std::string allocator() {
#ifdef MCPDB_JEMALLOC
  const char* version = nullptr;
  std::size_t size = sizeof version;
  if (mallctl("version", static_cast<void*>(&version), &size, nullptr, 0) == 0 &&
      version != nullptr)
    return std::string("jemalloc ") + version;
  return "jemalloc";
#else
  return "default";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mcpdb;
  CLI::App cli{
      "mcp-dbserver: read-only, least-privilege MCP access to PostgreSQL (+pgvector), "
      "MySQL/MariaDB, DynamoDB and MongoDB (+Atlas Vector Search)"};
  cli.set_version_flag("--version", std::string("mcp-dbserver ") + MCPDB_VERSION + " (commit " +
                                        MCPDB_COMMIT + ")\nallocator: " + allocator());
  cli.footer(
      "Exit codes: 0 ok, 1 runtime error, 2 usage error, 3 invalid configuration, 4 self-check "
      "refused start,\n"
      "5 doctor found write capability, 6 doctor could not make a check (nothing proved),\n"
      "7 doctor: read-only, but a configured tool cannot run,\n"
      "8 invoke: the tool reported an error, 9 invoke: the call was refused before the tool ran.\n"
      "Credentials come only from the environment; see .env.example.");
  app::AppOptions options;
  options.version = MCPDB_VERSION;
  std::string config_path;
  cli.add_option("-c,--config", config_path,
                 "Allowlist config file (default: $MCPDB_CONFIG, else built-in)");
  std::string log_format;

  auto* serve = cli.add_subcommand("serve", "Serve MCP (default: stdio)");
  auto* check = cli.add_subcommand("check-config",
                                   "Validate the config and print the resulting tool surface");
  auto* doctor = cli.add_subcommand(
      "doctor",
      "Prove the configured credentials read-only and every tool runnable (exit 5 write, 6 "
      "inconclusive, 7 a tool cannot run)");
  bool json = false;
  std::string http_listen;
  app::HttpServeOptions http;
  serve->add_option(
      "--http", http_listen,
      "Serve MCP Streamable HTTP on ADDR:PORT (e.g. 127.0.0.1:8080) instead of stdio");
  serve
      ->add_option("--log-format", log_format,
                   "The log on stderr: text (default) or json (one object per line); both with UTC "
                   "timestamps. Overrides server.log_format")
      ->check(CLI::IsMember({"text", "json"}));
  serve->add_flag("--allow-insecure-http", http.allow_insecure,
                  "Allow plain HTTP (no http.tls) on a non-loopback address (prints a warning)");
  auto* invoke = cli.add_subcommand(
      "invoke",
      "Run one tool as an agent's call would run (validation, proof, limits, audit) and print its "
      "result (exit 8 the tool reported an error, 9 the call was refused)");
  app::InvokeOptions invoke_opts;
  invoke->add_option("tool", invoke_opts.tool, "The tool's name (check-config lists them)")
      ->required();
  invoke->add_option("--args", invoke_opts.args_json,
                     "The arguments as a JSON object, e.g. '{\"id\": \"doc-01\"}'");
  invoke->add_flag("--json", invoke_opts.json,
                   "Print the whole result (or the refusal) as JSON, as an agent receives it");
  auto* import = cli.add_subcommand(
      "import-toolbox",
      "Convert a Google MCP Toolbox tools file into this server's config (credentials go to a "
      ".env template, never into the config; what has no safe equivalent is listed as refused)");
  std::string import_file;
  std::string import_out;
  import->add_option("file", import_file, "The Toolbox tools file (either of its forms)")
      ->required();
  import->add_option("-o,--output", import_out,
                     "Write the config here and its .env template to OUT.env (default: the "
                     "config on stdout, the template and the report on stderr)");
  auto* keys = cli.add_subcommand("keys", "Manage HTTP client API keys");
  keys->require_subcommand(1);
  auto* keys_new =
      keys->add_subcommand("new", "Create a client API key; prints it once and the config lines");
  auth::KeysNewOptions key_opts;
  keys_new->add_option("--name", key_opts.name, "Client name (audit log, metrics)")->required();
  keys_new
      ->add_option("--scope", key_opts.scope,
                   "Engines and tools: postgres,mongodb:get_mongodb_document,...")
      ->required();
  keys_new->add_option("--rate", key_opts.rate,
                       "Requests per second for this client (default: http.rate_limit)");
  keys_new->add_option("--burst", key_opts.burst, "Burst size for this client");
  keys_new->add_option("--max-concurrent", key_opts.max_concurrent,
                       "Concurrent tool calls for this client");
  check->add_flag("--json", json, "Print the tool surface as JSON");
  bool print_default = false;
  check->add_flag("--print-default", print_default,
                  "Print the built-in allowlist (a starting point for your own)");
  bool print_schema = false;
  bool print_reference = false;
  auto* schema_flag = check->add_flag(
      "--schema", print_schema,
      "Print the config file's JSON Schema (draft 2020-12), for an editor to validate against");
  check
      ->add_flag("--reference", print_reference,
                 "Print the reference of every config key in Markdown (docs/CONFIG.md)")
      ->excludes(schema_flag);
  doctor->add_flag("--json", json, "Print the findings as JSON");
  for (auto* sub : {serve, check, doctor, invoke, keys_new}) {
    sub->add_option("-c,--config", config_path, "Allowlist config file");
  }
  cli.require_subcommand(0, 1);

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = cli.exit(e);
    return rc == 0 ? app::kExitOk : app::kExitUsage;
  }
  if (!config_path.empty()) options.config_path = config_path;
  if (!log_format.empty()) options.log_format = log_format;
  const Env env = Env::process();
  try {
    if (check->parsed() && print_schema) {
      std::cout << app::configSchema(engines::allEngineModules()).dump(2) << "\n";
      return app::kExitOk;
    }
    if (check->parsed() && print_reference) {
      std::cout << app::configReference(engines::allEngineModules());
      return app::kExitOk;
    }
    if (check->parsed() && print_default) {
      std::cout << app::builtInConfigText(engines::allEngineModules());
      return app::kExitOk;
    }
    if (check->parsed()) return app::runCheckConfig(options, env, json, std::cout, std::cerr);
    if (doctor->parsed()) return app::runDoctor(options, env, json, std::cout, std::cerr);
    if (import->parsed())
      return app::runImportToolbox(import_file, import_out, std::cout, std::cerr);
    if (invoke->parsed()) return app::runInvoke(options, env, invoke_opts, std::cout, std::cerr);
    if (keys_new->parsed()) {
      key_opts.check_scope = [&](const auth::Scope& scope) {
        return app::checkScope(options, env, scope, std::cerr);
      };
      return auth::runKeysNew(key_opts, std::cout, std::cerr);
    }
    if (!http_listen.empty()) {
      http.listen = http_listen;
      return app::runServeHttp(options, env, http);
    }
    return app::runServeStdio(options, env);
  } catch (const std::exception& e) {
    std::cerr << "mcp-dbserver: fatal: " << e.what() << "\n";
    return app::kExitRuntime;
  }
}
