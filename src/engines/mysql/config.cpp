#include "engines/mysql/config.hpp"

#include <algorithm>
#include <cctype>

#include "config/config.hpp"
#include "config/sources.hpp"
#include "engines/kit/module.hpp"
#include "engines/mysql/guard.hpp"

namespace mcpdb::mysql {
namespace {

using config::Node;

bool readLimits(Limits& limits, const Node& node) {
  const std::size_t before = node.diag().errors().size();
  limits = config::parseLimits(node, limits, &limits);
  return node.diag().errors().size() == before;
}

std::string functionNameProblem(std::string_view name) {
  const bool ok =
      !name.empty() && name.size() <= 129 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' || c == '.';
      });
  return ok ? "" : "must be a function name, optionally schema-qualified (db.fn)";
}

// The guard's verdict on the statement and the placeholder count against the parameters.
bool checkStatement(QueryTool& t, const Node& node) {
  if (t.statement.empty()) return true;  // reported as required (or empty) already
  const Node at = node.child("statement");
  const guard::Verdict v = guard::checkTemplate(t.statement);
  if (!v.allowed) {
    // The statement is the operator's own text, so the excerpt is shown (never to agents).
    std::string message = v.message;
    if (!v.detail.empty()) message += " (" + v.detail + ")";
    at.error("refused by the MySQL guard (" + std::string(guard::ruleId(v.rule)) + "): " + message);
    return false;
  }
  t.called_functions = v.called_functions;
  t.relations = v.relations;
  for (const auto& p : t.parameters) {
    if (p.is_array) {
      node.child("parameters")
          .error("parameter '" + p.name +
                 "' is an array: MySQL binds no array parameters (declare one value per ?)");
      return false;
    }
  }
  const std::size_t used = v.placeholders;
  const std::size_t declared = t.parameters.size();
  if (t.parameters_complete && used != declared) {
    at.error("uses " + std::to_string(used) + " placeholder" + (used == 1 ? "" : "s") +
             " (?) but " + std::to_string(declared) + " parameter" +
             (declared == 1 ? " is" : "s are") + " declared");
    return false;
  }
  return true;
}

const config::Section<Source>& sourceSection() {
  static const auto s = config::Section<Source>("a database the tools read")
                            .entryNoun("source")
                            .string("dsn_env", &Source::dsn_env,
                                    "the environment variable holding its DSN "
                                    "(mysql://user:password@host:port/db?ssl-mode=...)",
                                    config::kRequired, config::envNameProblem)
                            .boolean("iam_auth", &Source::iam_auth,
                                     "RDS IAM authentication: the DSN has no password; each new "
                                     "connection sends a fresh 15-minute token made with the AWS "
                                     "credential chain and AWS_REGION, over TLS VERIFY_IDENTITY "
                                     "(default false; also the DSN's ?iam=true)");
  return s;
}

const config::Section<PoolSettings>& poolSection() {
  static const auto s =
      config::Section<PoolSettings>("connections kept per source")
          .integer("size", &PoolSettings::size, 1, 64, "connections per source (default 4)");
  return s;
}

const config::Section<QueryTool>& toolSection() {
  static const auto s =
      config::Section<QueryTool>("one allowlisted statement, as a tool agents can call")
          .entryNoun("tool")
          .choice("kind", &QueryTool::kind,
                  std::vector<std::pair<std::string, std::string>>{{"mysql-sql", "mysql-sql"}},
                  "mysql-sql (the default)")
          .string("source", &QueryTool::source, "the source it reads (default: the only one)")
          .string("title", &QueryTool::title, "a short human title (default: from the name)")
          .string("description", &QueryTool::description,
                  "what it returns and when to use it, written for an agent", config::kRequired,
                  [](std::string_view d) { return d.empty() ? "must not be empty" : ""; })
          .string("statement", &QueryTool::statement,
                  "one SELECT with ? placeholders, judged by the MySQL guard", config::kRequired,
                  [](std::string_view d) { return d.empty() ? "must not be empty" : ""; })
          .custom(
              "parameters", "one per ?, in order",
              [] { return sql::paramsConfigSchema("one per ?, in order"); }, config::kOptional,
              [](QueryTool& t, const Node& n) {
                t.parameters = sql::parseParams(n, t.parameters_complete);
                return t.parameters_complete;
              },
              &sql::paramsConfigReference)
          .custom("limits", "rows, bytes and time for this tool (at most the section's)",
                  &config::limitsSchema, config::kOptional,
                  [](QueryTool& t, const Node& n) { return readLimits(t.limits, n); })
          .choice("fence", &QueryTool::fence,
                  {{"auto", Fence::Auto}, {"always", Fence::Always}, {"never", Fence::Never}},
                  "untrusted-data fencing of its results (default: the server's)")
          .check([](QueryTool& t, const Node& node) {
            if (t.title.empty()) t.title = sql::titleFromName(t.name);
            return checkStatement(t, node);
          });
  return s;
}

// Every tool reads a declared source, under a name unique regardless of case.
bool checkTools(Settings& s, const Node& node) {
  bool ok = true;
  const Node tools = node.child("tools");
  sql::ToolNames tool_names;
  for (auto& t : s.tools) {
    const Node at = tools.child(t.name);
    ok = sql::claimToolName(tool_names, t.name, at) && ok;
    if (config::resolveSource(s.sources, t.source, at) == nullptr) ok = false;
  }
  return ok;
}

}  // namespace

const Source* Settings::sourceOf(const QueryTool& tool) const {
  return config::findSource(sources, tool.source);
}

const config::Section<Settings>& settingsSection() {
  static const auto s =
      config::Section<Settings>("the MySQL/MariaDB statements agents may run")
          .boolean("optional", &Settings::optional,
                   "true: when this engine's environment is unset, the server starts without it "
                   "(its tools are not served; check-config and doctor still report it). Default "
                   "false: a config that declares tools for an engine whose environment is unset "
                   "refuses to start (exit 3)")
          .named("sources", &Settings::sources, &Source::name, sourceSection(),
                 "the databases, by name (default: `default` from MYSQL_DSN)", config::kOptional,
                 config::sourceNameProblem, "must map a source name to its settings")
          .object("pool", &Settings::pool, poolSection(), "connections")
          .custom("limits", "rows, bytes and time for every tool (at most the server's)",
                  &config::limitsSchema, config::kOptional,
                  [](Settings& st, const Node& n) { return readLimits(st.limits, n); })
          .custom(
              "allowed_functions",
              "stored functions the statements may call, checked by you to only read "
              "(MySQL does not enforce READS SQL DATA)",
              [] {
                return Json{{"type", "array"}, {"items", {{"type", "string"}}}};
              },
              config::kOptional,
              [](Settings& st, const Node& n) {
                bool ok = true;
                for (const auto& e : n.isSequence() ? n.elements() : std::vector<Node>{}) {
                  auto name = e.asString();
                  if (!name) {
                    ok = false;
                    continue;
                  }
                  if (auto p = functionNameProblem(*name); !p.empty()) {
                    e.error(p);
                    ok = false;
                    continue;
                  }
                  st.allowed_functions.push_back(*name);
                }
                if (!n.isSequence()) {
                  n.error("must be a list of function names");
                  ok = false;
                }
                return ok;
              })
          .named("tools", &Settings::tools, &QueryTool::name, toolSection(), "the tools, by name",
                 config::kOptional, engines::kit::toolNameProblem,
                 "must map a tool name to its statement",
                 [](QueryTool& t, const Settings& st) { t.limits = st.limits; })
          .check([](Settings& st, const Node& node) {
            if (st.sources.empty()) {
              st.sources.push_back({std::string(kDefaultSource), std::string(kDefaultDsnEnv)});
            }
            return checkTools(st, node);
          });
  return s;
}

Settings parseSettings(const config::Node& section, const Limits& defaults) {
  Settings s;
  s.limits = defaults;
  if (!section.present()) {
    s.sources.push_back({std::string(kDefaultSource), std::string(kDefaultDsnEnv)});
    return s;
  }
  settingsSection().parse(section, s);
  return s;
}

std::vector<std::string> sourceEnvNames(const Settings& settings) {
  std::vector<std::string> out;
  for (const auto& s : settings.sources) out.push_back(s.dsn_env);
  if (out.empty()) out.emplace_back(kDefaultDsnEnv);
  return out;
}

}  // namespace mcpdb::mysql
