#pragma once
// A typed config section declared once: each key with its type, bounds, whether it is required,
// and one line of documentation. The one declaration drives
//   - parsing into the engine's struct (`parse`), with located errors through config::Node
//     (unknown keys with a did-you-mean, "is required", wrong type, out of range),
//   - the JSON Schema of the section (`jsonSchema`), and
//   - its reference text (`reference`),
// so the config reference and the schema an editor validates against cannot drift from what the
// server accepts. Rules that relate several keys are code (`check`), documented on the keys.
//
// Usage (an engine's config.cpp):
//   const config::Section<Target>& targetSection() {
//     static const auto s = config::Section<Target>("a table agents may read")
//         .string("table", &Target::table, "the DynamoDB table", config::kRequired, tableProblem)
//         .choice("fence", &Target::fence, {{"auto", Fence::Auto}, ...}, "fencing of its items");
//     return s;
//   }
//   Target t;  bool ok = targetSection().parse(node, t);   // errors went to node.diag()
//
// Hand-written: no Debian package declares YAML schemas for C++ (yaml-cpp only parses).

#include <cstdint>
#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/json.hpp"
#include "config/node.hpp"

namespace mcpdb::config {

inline constexpr bool kRequired = true;
inline constexpr bool kOptional = false;

// What is wrong with a value ("" when nothing): the message reported at the key.
using Problem = std::function<std::string(std::string_view)>;

namespace section_detail {
Json withDoc(Json schema, const std::string& doc);
std::string typeName(const Json& schema);
void missing(const Node& parent, std::string_view key, const std::string& hint);
}  // namespace section_detail

template <class T>
class Section {
 public:
  // One declared key. `read` reads `parent.child(key)`, which is present; it returns false when
  // the value was refused (the error is already reported).
  struct Field {
    std::string key;
    std::string doc;
    bool required = false;
    std::string missing_hint;  // appended to "is required"
    // Built on demand: start-up reads the section and never needs its schema.
    std::function<Json()> schema;
    std::function<bool(T&, const Node& parent)> read;
    // Nested sections' reference lines (indented by the caller).
    std::function<std::vector<std::string>()> nested_reference;
  };

  explicit Section(std::string doc) : doc_(std::move(doc)) {}

  const std::string& doc() const { return doc_; }
  const std::vector<Field>& fields() const { return fields_; }

  // "is required" gets this explanation for the key declared last, e.g. "(a map of ...)".
  Section& missingHint(std::string hint) {
    fields_.back().missing_hint = " " + std::move(hint);
    return *this;
  }

  Section& string(std::string key, std::string T::*member, std::string doc, bool required = false,
                  Problem problem = {}) {
    return add(
        std::move(key), std::move(doc), required,
        [] {
          return Json{{"type", "string"}};
        },
        [member, problem](T& out, const Node& parent, const std::string& k) {
          auto v = parent.string(k);
          if (!v) return false;
          if (problem) {
            if (auto p = problem(*v); !p.empty()) {
              parent.child(k).error(p);
              out.*member = std::move(*v);
              return false;
            }
          }
          out.*member = std::move(*v);
          return true;
        });
  }

  // The member is a bool, or a std::optional<bool> whose absence means something of its own
  // (e.g. "inherit the default").
  template <class B>
  Section& boolean(std::string key, B T::*member, std::string doc, bool required = false) {
    static_assert(std::is_same_v<B, bool> || std::is_same_v<B, std::optional<bool>>);
    return add(
        std::move(key), std::move(doc), required,
        [] {
          return Json{{"type", "boolean"}};
        },
        [member](T& out, const Node& parent, const std::string& k) {
          auto v = parent.boolean(k);
          if (v) out.*member = *v;
          return v.has_value();
        });
  }

  template <class I>
  Section& integer(std::string key, I T::*member, std::int64_t min, std::int64_t max,
                   std::string doc, bool required = false) {
    static_assert(std::is_integral_v<I>);
    auto schema = [min, max] {
      return Json{{"type", "integer"}, {"minimum", min}, {"maximum", max}};
    };
    return add(std::move(key), std::move(doc), required, schema,
               [member, min, max](T& out, const Node& parent, const std::string& k) {
                 auto v = parent.integer(k, min, max);
                 if (v) out.*member = static_cast<I>(*v);
                 return v.has_value();
               });
  }

  // One of the named values; the struct holds the value (an enum), the file its name.
  template <class E>
  Section& choice(std::string key, E T::*member, std::vector<std::pair<std::string, E>> values,
                  std::string doc, bool required = false) {
    std::vector<std::string> names;
    for (const auto& [name, value] : values) names.push_back(name);
    auto schema = [names] { return Json{{"type", "string"}, {"enum", names}}; };
    return add(std::move(key), std::move(doc), required, schema,
               [member, values, names](T& out, const Node& parent, const std::string& k) {
                 auto v = parent.choice(k, names);
                 if (!v) return false;
                 for (const auto& [name, value] : values) {
                   if (name == *v) out.*member = value;
                 }
                 return true;
               });
  }

  Section& strings(std::string key, std::vector<std::string> T::*member, std::string doc,
                   bool required = false) {
    auto schema = [] { return Json{{"type", "array"}, {"items", {{"type", "string"}}}}; };
    return add(std::move(key), std::move(doc), required, schema,
               [member](T& out, const Node& parent, const std::string& k) {
                 auto v = parent.stringList(k);
                 if (v) out.*member = std::move(*v);
                 return v.has_value();
               });
  }

  // A nested mapping read by its own section (the member is U or std::optional<U>).
  template <class M, class U>
  Section& object(std::string key, M T::*member, const Section<U>& sub, std::string doc,
                  bool required = false) {
    return add(
        std::move(key), std::move(doc), required, [&sub] { return sub.jsonSchema(); },
        [member, &sub](T& out, const Node& parent, const std::string& k) {
          U value{};
          if constexpr (std::is_same_v<M, U>) value = out.*member;
          const bool ok = sub.parse(parent.child(k), value);
          if (ok) out.*member = std::move(value);
          return ok;
        },
        [&sub] { return sub.reference(); });
  }

  // A mapping of names to entries read by `sub`, e.g. `targets: {docs: {...}}`. Each entry's
  // name is stored in `name_member`; `name_problem` judges it. `init` prepares each entry from
  // the owner before it is read (e.g. inherited limits). An entry with an error is left out.
  template <class U>
  Section& named(std::string key, std::vector<U> T::*member, std::string U::*name_member,
                 const Section<U>& sub, std::string doc, bool required, Problem name_problem,
                 std::string not_a_map_message,
                 std::type_identity_t<std::function<void(U&, const T&)>> init = {}) {
    auto schema = [&sub] {
      return Json{{"type", "object"}, {"additionalProperties", sub.jsonSchema()}};
    };
    return add(
        std::move(key), std::move(doc), required, schema,
        [=, &sub](T& out, const Node& parent, const std::string& k) {
          const Node map = parent.child(k);
          if (!map.isMap()) {
            map.error(not_a_map_message);
            return false;
          }
          bool ok = true;
          std::vector<std::string> seen;
          for (auto& [name, node] : map.entries()) {
            if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
              node.error("duplicate " + sub.entryNoun() + " name");
              ok = false;
              continue;
            }
            seen.push_back(name);
            if (name_problem) {
              if (auto p = name_problem(name); !p.empty()) {
                node.error(p);
                ok = false;
                continue;
              }
            }
            U entry{};
            if (init) init(entry, out);
            entry.*name_member = name;
            if (sub.parse(node, entry)) {
              (out.*member).push_back(std::move(entry));
            } else {
              ok = false;
            }
          }
          return ok;
        },
        [&sub] { return sub.reference(); });
  }

  // A key read by code of its own (e.g. `limits:`, shared by every section), with its schema.
  Section& custom(std::string key, std::string doc, std::function<Json()> schema, bool required,
                  std::function<bool(T&, const Node& value)> read) {
    return add(std::move(key), std::move(doc), required, std::move(schema),
               [read](T& out, const Node& parent, const std::string& k) {
                 return read(out, parent.child(k));
               });
  }

  // A rule over several keys, run after every key was read (also when some were refused:
  // it must cope with defaults). Returns false when it reported an error.
  Section& check(std::function<bool(T&, const Node& node)> rule) {
    checks_.push_back(std::move(rule));
    return *this;
  }

  // What an entry of a `named` map is called in messages ("duplicate target name").
  Section& entryNoun(std::string noun) {
    noun_ = std::move(noun);
    return *this;
  }
  const std::string& entryNoun() const { return noun_; }

  // Reads `node` (a mapping) into `out`; every problem goes to node.diag(). True when this
  // section reported no error.
  bool parse(const Node& node, T& out) const {
    std::vector<std::string> keys;
    keys.reserve(fields_.size());
    for (const auto& f : fields_) keys.push_back(f.key);
    if (!node.expectMap(keys)) return false;
    const std::size_t errors_before = node.diag().errors().size();
    bool ok = true;
    for (const auto& f : fields_) {
      if (!node.child(f.key).present()) {
        if (f.required) {
          section_detail::missing(node, f.key, f.missing_hint);
          ok = false;
        }
        continue;
      }
      ok = f.read(out, node) && ok;
    }
    for (const auto& rule : checks_) ok = rule(out, node) && ok;
    return ok && node.diag().errors().size() == errors_before;
  }

  // The JSON Schema (draft 2020-12 keywords) of a mapping this section accepts.
  Json jsonSchema() const {
    Json properties = Json::object();
    Json required = Json::array();
    for (const auto& f : fields_) {
      properties[f.key] = section_detail::withDoc(f.schema(), f.doc);
      if (f.required) required.push_back(f.key);
    }
    Json s = {{"type", "object"},
              {"description", doc_},
              {"properties", properties},
              {"additionalProperties", false}};
    if (!required.empty()) s["required"] = required;
    return s;
  }

  // One line per key ("`key` (type, required): doc"), nested sections indented below theirs.
  std::vector<std::string> reference() const {
    std::vector<std::string> lines;
    for (const auto& f : fields_) {
      lines.push_back("- `" + f.key + "` (" + section_detail::typeName(f.schema()) +
                      (f.required ? ", required" : "") + "): " + f.doc);
      if (f.nested_reference) {
        for (const auto& l : f.nested_reference()) lines.push_back("  " + l);
      }
    }
    return lines;
  }

 private:
  Section& add(std::string key, std::string doc, bool required, std::function<Json()> schema,
               std::function<bool(T&, const Node&, const std::string&)> read,
               std::function<std::vector<std::string>()> nested = {}) {
    Field f;
    f.key = key;
    f.doc = std::move(doc);
    f.required = required;
    f.schema = std::move(schema);
    f.read = [read = std::move(read), key](T& out, const Node& parent) {
      return read(out, parent, key);
    };
    f.nested_reference = std::move(nested);
    fields_.push_back(std::move(f));
    return *this;
  }

  std::string doc_;
  std::string noun_ = "entry";
  std::vector<Field> fields_;
  std::vector<std::function<bool(T&, const Node&)>> checks_;
};

}  // namespace mcpdb::config
