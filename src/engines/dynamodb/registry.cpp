#include "engines/dynamodb/registry.hpp"

#include <algorithm>
#include <set>

#include "config/config.hpp"

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

namespace {

std::optional<KeyAttribute> parseKey(const config::Node& parent, std::string_view key,
                                     bool required) {
  config::Node n = parent.child(key);
  if (!n.present()) {
    if (required) parent.diag().error(parent.line(), n.path(), "is required");
    return std::nullopt;
  }
  if (!n.expectMap({"name", "type"})) return std::nullopt;
  auto name = n.string("name", true);
  auto type = n.choice("type", {"S", "N", "B"}, true);
  if (!name || !type) return std::nullopt;
  if (name->empty() || name->size() > 255) {
    n.child("name").error("must be 1 to 255 characters");
    return std::nullopt;
  }
  KeyAttribute k;
  k.name = *name;
  k.type = *type == "S" ? KeyType::S : *type == "N" ? KeyType::N : KeyType::B;
  return k;
}

}  // namespace

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

Registry parseRegistry(const config::Node& section, const Limits& defaults) {
  Registry reg;
  reg.limits = defaults;
  if (!section.present()) return reg;
  if (!section.expectMap({"targets", "limits"})) return reg;
  reg.limits = config::parseLimits(section.child("limits"), defaults, &defaults);

  config::Node targets = section.child("targets");
  if (!targets.present()) {
    section.diag().error(section.line(), targets.path(),
                         "is required (a map of target name to table)");
    return reg;
  }
  if (!targets.isMap()) {
    targets.error("must map a target name to its table");
    return reg;
  }
  std::set<std::string> seen;
  for (auto& [name, node] : targets.entries()) {
    if (!seen.insert(name).second) {
      node.error("duplicate target name");
      continue;
    }
    if (!validTargetName(name)) {
      node.error("invalid target name (1-64 of A-Z a-z 0-9 _ -, starting with a letter)");
      continue;
    }
    if (!node.expectMap({"table", "description", "partition_key", "sort_key", "attributes",
                         "exact_count", "limits", "fence"})) {
      continue;
    }
    Target t;
    t.name = name;
    bool ok = true;
    if (auto table = node.string("table", true)) {
      if (!validTableName(*table)) {
        node.child("table").error("invalid DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)");
        ok = false;
      }
      t.table = *table;
    } else {
      ok = false;
    }
    if (auto d = node.string("description", true)) {
      t.description = *d;
    } else {
      ok = false;
    }
    auto pk = parseKey(node, "partition_key", true);
    auto sk = parseKey(node, "sort_key", false);
    if (!pk) ok = false;
    if (node.child("sort_key").present() && !sk) ok = false;
    if (pk) t.partition_key = *pk;
    if (sk) {
      if (pk && sk->name == pk->name) {
        node.child("sort_key").child("name").error("must differ from the partition key name");
        ok = false;
      }
      t.sort_key = *sk;
    }
    if (node.child("attributes").present()) {
      if (auto attrs = node.stringList("attributes")) {
        if (attrs->empty()) {
          node.child("attributes")
              .error("must list at least one attribute (omit it to allow all attributes)");
          ok = false;
        }
        std::set<std::string> names;
        for (const auto& a : *attrs) {
          if (a.empty() || a.size() > 255) {
            node.child("attributes").error("attribute names must be 1 to 255 characters");
            ok = false;
          } else if (!names.insert(a).second) {
            node.child("attributes").error("duplicate attribute '" + a + "'");
            ok = false;
          }
        }
        // Key attributes are always projected: scan cursors and item identity need them.
        if (pk && names.count(pk->name) == 0) attrs->insert(attrs->begin(), pk->name);
        if (sk && names.count(sk->name) == 0) attrs->insert(attrs->begin() + 1, sk->name);
        t.attributes = *attrs;
      } else {
        ok = false;
      }
    }
    config::Node ec = node.child("exact_count");
    if (ec.present() && ec.expectMap({"enabled", "max_items"})) {
      if (auto e = ec.boolean("enabled", true)) t.exact_count.enabled = *e;
      if (auto m = ec.integer("max_items", 1, 100000000))
        t.exact_count.max_items = static_cast<std::uint64_t>(*m);
    }
    t.limits = config::parseLimits(node.child("limits"), reg.limits, &reg.limits);
    if (auto f = node.choice("fence", {"auto", "always", "never"})) t.fence = *parseFence(*f);
    if (ok) reg.targets.push_back(std::move(t));
  }
  if (reg.targets.empty() && section.diag().ok()) {
    targets.error("must declare at least one target");
  }
  return reg;
}

}  // namespace mcpdb::dynamodb
