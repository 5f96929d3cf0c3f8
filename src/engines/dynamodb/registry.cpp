#include "engines/dynamodb/registry.hpp"

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
// start (docs/BENCHMARKS.md "Startup profile"); registry_test checks them against the regexes.
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

std::string_view keyTypeName(KeyType type) {
  switch (type) {
    case KeyType::S: return "S";
    case KeyType::N: return "N";
    case KeyType::B: return "B";
  }
  return "S";
}

const Target* Registry::find(std::string_view name) const {
  for (const auto& t : targets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

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

const config::Section<Registry>& registrySection() {
  static const auto s =
      config::Section<Registry>("the DynamoDB tables agents may read")
          .custom("limits", "rows, bytes and time for every target (at most the server's)",
                  &config::limitsSchema, config::kOptional,
                  [](Registry& r, const config::Node& n) { return readLimits(r.limits, n); })
          .named("targets", &Registry::targets, &Target::name, targetSection(),
                 "the tables, by the name agents see (1-64 of A-Z a-z 0-9 _ -, starting with a "
                 "letter)",
                 config::kRequired, targetNameProblem, "must map a target name to its table",
                 [](Target& t, const Registry& r) { t.limits = r.limits; })
          .missingHint("(a map of target name to table)")
          .check([](Registry& r, const config::Node& node) {
            if (r.targets.empty() && node.diag().ok()) {
              node.child("targets").error("must declare at least one target");
              return false;
            }
            return true;
          });
  return s;
}

Registry parseRegistry(const config::Node& section, const Limits& defaults) {
  Registry reg;
  reg.limits = defaults;
  if (!section.present()) return reg;
  registrySection().parse(section, reg);
  return reg;
}

}  // namespace mcpdb::dynamodb
