#include "engines/dynamodb/config.hpp"

#include <algorithm>
#include <set>

#include "config/config.hpp"
#include "config/section.hpp"

namespace mcpdb::dynamodb {
namespace {

bool isAsciiLetter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

bool isAsciiLetterOrDigit(char c) {
  return isAsciiLetter(c) || (c >= '0' && c <= '9');
}

}  // namespace

// Plain loops, not std::regex: compiling the two expressions was ~1.3 M instructions of every
// start (docs/BENCHMARKS.md "Startup profile"); config_test checks them against the regexes.
bool validTableName(std::string_view s) {
  return s.size() >= 3 && s.size() <= 255 && std::all_of(s.begin(), s.end(), [](char c) {
           return isAsciiLetterOrDigit(c) || c == '_' || c == '.' || c == '-';
         });
}

bool validTargetName(std::string_view s) {
  return !s.empty() && s.size() <= 64 && isAsciiLetter(s.front()) &&
         std::all_of(s.begin() + 1, s.end(),
                     [](char c) { return isAsciiLetterOrDigit(c) || c == '_' || c == '-'; });
}

bool validRegion(std::string_view region) {
  if (region.size() < 2 || !(region[0] >= 'a' && region[0] <= 'z') ||
      !(region[1] >= 'a' && region[1] <= 'z')) {
    return false;
  }
  std::size_t parts = 0;
  std::string_view last;
  std::string_view rest = region.substr(2);
  while (!rest.empty()) {
    if (rest[0] != '-') return false;
    rest.remove_prefix(1);
    const std::size_t end = std::min(rest.find('-'), rest.size());
    last = rest.substr(0, end);
    if (last.empty() || !std::all_of(last.begin(), last.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        })) {
      return false;
    }
    ++parts;
    rest.remove_prefix(end);
  }
  return parts >= 2 &&
         std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view keyTypeName(KeyType type) {
  switch (type) {
    case KeyType::S: return "S";
    case KeyType::N: return "N";
    case KeyType::B: return "B";
  }
  return "S";
}

const Target* Settings::find(std::string_view name) const {
  for (const auto& t : targets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const Source* Settings::sourceOf(const Target& target) const {
  return config::findSource(sources, target.source);
}

bool sourceUsable(const Source& source, const Env& env) {
  const auto set = [&env](const std::string& var) { return var.empty() || env.has(var); };
  return (!source.region.empty() || env.has("AWS_REGION")) && set(source.endpoint_env) &&
         set(source.access_key_id_env) && set(source.secret_access_key_env) &&
         set(source.session_token_env);
}

namespace {

std::string regionProblem(std::string_view region) {
  return validRegion(region) ? "" : "is not an AWS region name (e.g. eu-west-1)";
}

// The credential variables go together: both keys or neither, a session token only with them, and
// no variable named twice.
bool checkKeyVariables(const Source& s, const config::Node& node) {
  // Each error is reported at the key that is present.
  if (s.access_key_id_env.empty() != s.secret_access_key_env.empty()) {
    const bool has_id = !s.access_key_id_env.empty();
    node.child(has_id ? "access_key_id_env" : "secret_access_key_env")
        .error(std::string("needs ") + (has_id ? "secret_access_key_env" : "access_key_id_env") +
               " too (both, or neither for the standard AWS credential chain)");
    return false;
  }
  if (!s.session_token_env.empty() && s.access_key_id_env.empty()) {
    node.child("session_token_env")
        .error("needs access_key_id_env and secret_access_key_env (the chain finds its own token)");
    return false;
  }
  const std::pair<const char*, const std::string*> vars[] = {
      {"endpoint_env", &s.endpoint_env},
      {"access_key_id_env", &s.access_key_id_env},
      {"secret_access_key_env", &s.secret_access_key_env},
      {"session_token_env", &s.session_token_env}};
  for (std::size_t i = 0; i < std::size(vars); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (!vars[i].second->empty() && *vars[i].second == *vars[j].second) {
        node.child(vars[i].first).error(std::string("names the same variable as ") + vars[j].first);
        return false;
      }
    }
  }
  return true;
}

const config::Section<Source>& sourceSection() {
  static const auto s =
      config::Section<Source>("an AWS account and region the targets read")
          .entryNoun("source")
          .string("region", &Source::region,
                  "its AWS region, e.g. eu-west-1 (default: AWS_REGION); not a secret",
                  config::kOptional, regionProblem)
          .string("endpoint_env", &Source::endpoint_env,
                  "the environment variable holding its endpoint URL (default: "
                  "AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL, then the region's)",
                  config::kOptional, config::envNameProblem)
          .string("access_key_id_env", &Source::access_key_id_env,
                  "the environment variable holding its access key ID (with "
                  "secret_access_key_env; default: the standard AWS credential chain)",
                  config::kOptional, config::envNameProblem)
          .string("secret_access_key_env", &Source::secret_access_key_env,
                  "the environment variable holding its secret access key", config::kOptional,
                  config::envNameProblem)
          .string("session_token_env", &Source::session_token_env,
                  "the environment variable holding its session token (temporary keys)",
                  config::kOptional, config::envNameProblem)
          .check(checkKeyVariables);
  return s;
}

// Every target reads a declared source; without `sources:` that is one source `default`.
bool resolveTargetSources(Settings& r, const config::Node& node) {
  if (!node.child("sources").present()) {
    r.sources.push_back({std::string(config::kDefaultSourceName)});
  } else if (r.sources.empty()) {
    if (node.diag().ok()) node.child("sources").error("must declare at least one source");
    return false;  // every source was refused: their errors say why
  }
  bool ok = true;
  for (const auto& t : r.targets) {
    const config::Node at = node.child("targets").child(t.name);
    if (config::resolveSource(r.sources, t.source, at) == nullptr) {
      ok = false;
    }
  }
  return ok;
}

std::string keyNameProblem(std::string_view name) {
  return name.empty() || name.size() > 255 ? "must be 1 to 255 characters" : "";
}

std::string tableProblem(std::string_view table) {
  return validTableName(table) ? "" : "invalid DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)";
}

std::string targetNameProblem(std::string_view name) {
  return validTargetName(name)
             ? ""
             : "invalid target name (1-64 of A-Z a-z 0-9 _ -, starting with a letter)";
}

bool readLimits(Limits& limits, const config::Node& node) {
  const std::size_t before = node.diag().errors().size();
  limits = config::parseLimits(node, limits, &limits);
  return node.diag().errors().size() == before;
}

const config::Section<KeyAttribute>& keySection() {
  static const auto s =
      config::Section<KeyAttribute>("a key attribute")
          .string("name", &KeyAttribute::name, "the attribute name", config::kRequired,
                  keyNameProblem)
          .choice("type", &KeyAttribute::type,
                  {{"S", KeyType::S}, {"N", KeyType::N}, {"B", KeyType::B}},
                  "its type: S (string), N (number) or B (binary)", config::kRequired);
  return s;
}

const config::Section<ExactCount>& exactCountSection() {
  static const auto s =
      config::Section<ExactCount>("whether count_items may scan the table for an exact count")
          .boolean("enabled", &ExactCount::enabled, "allow the counting scan", config::kRequired)
          .integer("max_items", &ExactCount::max_items, 1, 100000000,
                   "items the scan may read before it stops and says so (default 100000)");
  return s;
}

// The attributes an agent may read: at least one, distinct; key attributes are always projected
// (scan cursors and item identity need them), so they are added when missing.
bool checkAttributes(Target& t, const config::Node& node) {
  if (!node.child("attributes").present()) return true;
  const config::Node list = node.child("attributes");
  bool ok = true;
  if (t.attributes.empty()) {
    list.error("must list at least one attribute (omit it to allow all attributes)");
    ok = false;
  }
  std::set<std::string> names;
  for (const auto& a : t.attributes) {
    if (a.empty() || a.size() > 255) {
      list.error("attribute names must be 1 to 255 characters");
      ok = false;
    } else if (!names.insert(a).second) {
      list.error("duplicate attribute '" + a + "'");
      ok = false;
    }
  }
  const bool has_pk = !t.partition_key.name.empty();
  if (has_pk && names.count(t.partition_key.name) == 0) {
    t.attributes.insert(t.attributes.begin(), t.partition_key.name);
  }
  if (t.sort_key && names.count(t.sort_key->name) == 0) {
    t.attributes.insert(t.attributes.begin() + (has_pk ? 1 : 0), t.sort_key->name);
  }
  return ok;
}

const config::Section<Target>& targetSection() {
  static const auto s =
      config::Section<Target>("a table agents may read, under the name agents see")
          .entryNoun("target")
          .string("source", &Target::source,
                  "the source it reads (default: the only one; required when there are several)")
          .string("table", &Target::table, "the DynamoDB table name", config::kRequired,
                  tableProblem)
          .string("description", &Target::description, "what the table holds, shown to agents",
                  config::kRequired)
          .object("partition_key", &Target::partition_key, keySection(),
                  "the table's partition key", config::kRequired)
          .object("sort_key", &Target::sort_key, keySection(),
                  "the table's sort key, when it has one (its name must differ from the "
                  "partition key's)")
          .strings("attributes", &Target::attributes,
                   "the top-level attributes agents may read (default: all); key attributes are "
                   "always included")
          .object("exact_count", &Target::exact_count, exactCountSection(),
                  "an exact count by scanning (off by default)")
          .custom("limits", "rows, bytes and time for this target (at most the section's)",
                  &config::limitsSchema, config::kOptional,
                  [](Target& t, const config::Node& n) { return readLimits(t.limits, n); })
          .choice("fence", &Target::fence,
                  {{"auto", Fence::Auto}, {"always", Fence::Always}, {"never", Fence::Never}},
                  "untrusted-data fencing of its items (default: the server's)")
          .check([](Target& t, const config::Node& node) {
            if (t.sort_key && t.sort_key->name == t.partition_key.name) {
              node.child("sort_key").child("name").error("must differ from the partition key name");
              return false;
            }
            return true;
          })
          .check(checkAttributes);
  return s;
}

}  // namespace

const config::Section<Settings>& settingsSection() {
  static const auto s =
      config::Section<Settings>("the DynamoDB tables agents may read")
          .boolean("optional", &Settings::optional,
                   "true: when this engine's environment is unset, the server starts without it "
                   "(its tools are not served; check-config and doctor still report it). Default "
                   "false: a config that declares tools for an engine whose environment is unset "
                   "refuses to start (exit 3)")
          .named("sources", &Settings::sources, &Source::name, sourceSection(),
                 "the AWS accounts and regions, by name (default: one source `default` from "
                 "AWS_REGION, the endpoint variables and the standard AWS credential chain)",
                 config::kOptional, config::sourceNameProblem,
                 "must map a source name to its settings")
          .custom("limits", "rows, bytes and time for every target (at most the server's)",
                  &config::limitsSchema, config::kOptional,
                  [](Settings& r, const config::Node& n) { return readLimits(r.limits, n); })
          .named("targets", &Settings::targets, &Target::name, targetSection(),
                 "the tables, by the name agents see (1-64 of A-Z a-z 0-9 _ -, starting with a "
                 "letter)",
                 config::kRequired, targetNameProblem, "must map a target name to its table",
                 [](Target& t, const Settings& r) { t.limits = r.limits; })
          .missingHint("(a map of target name to table)")
          .check([](Settings& r, const config::Node& node) {
            if (r.targets.empty() && node.diag().ok()) {
              node.child("targets").error("must declare at least one target");
              return false;
            }
            return resolveTargetSources(r, node);
          });
  return s;
}

Settings parseSettings(const config::Node& section, const Limits& defaults) {
  Settings reg;
  reg.limits = defaults;
  if (!section.present()) {
    reg.sources.push_back({std::string(config::kDefaultSourceName)});
    return reg;
  }
  settingsSection().parse(section, reg);
  return reg;
}

}  // namespace mcpdb::dynamodb
