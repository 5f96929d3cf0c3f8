#pragma once
// A typed config section declared once: each key with its type, bounds, whether it is required,
// and one line of documentation. The one declaration drives
//   - parsing into the engine's struct (`parse`), with located errors through config::Node
//     (unknown keys with a did-you-mean, "is required", wrong type, out of range),
//   - the JSON Schema of the section (`jsonSchema`), and
//   - its reference text (`reference`: type, allowed values, default, example, what it does),
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
#include <chrono>
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
// A bound as the operator writes it: 100 rather than 100.0 or 1e+02.
std::string numberText(double v);
// "- `key` (type, required, default `v`): doc Example: `v`." from the key's finished schema.
std::string referenceLine(const std::string& key, const Json& schema, bool required,
                          const std::string& default_text);

// The member a key is read into: a pointer to a member of T, or a function T& -> M& for a member
// of a member (e.g. `[](Http& h) -> auto& { return h.auth.required; }`).
template <class T, class A>
decltype(auto) at(T& t, const A& access) {
  if constexpr (std::is_member_object_pointer_v<A>) {
    return (t.*access);
  } else {
    return access(t);
  }
}
template <class M>
struct ValueOf {
  using type = M;
};
template <class M>
struct ValueOf<std::optional<M>> {
  using type = M;
};
template <class T, class A>
using MemberOf = std::remove_cvref_t<decltype(at(std::declval<T&>(), std::declval<const A&>()))>;
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
    // Built on demand: start-up reads the section and never needs its schema. The default and
    // the example are added to it (JSON Schema's `default` and `examples`).
    std::function<Json()> schema;
    std::function<Json()> default_value;  // null: none to show
    std::string default_text;             // a default no value can say ("three quarters of ...")
    Json example;                         // null: none
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
  // The default of the key declared last in words, where the struct's value is a placeholder
  // (e.g. 0 meaning "computed from workers").
  Section& byDefault(std::string text) {
    fields_.back().default_text = std::move(text);
    fields_.back().default_value = [] { return Json(); };
    return *this;
  }
  // An example value of the key declared last, for the reference and the schema.
  Section& example(Json value) {
    fields_.back().example = std::move(value);
    return *this;
  }
  // A whole example of this section (YAML, under its key), for the reference.
  Section& exampleYaml(std::string yaml) {
    example_yaml_ = std::move(yaml);
    return *this;
  }
  const std::string& exampleYaml() const { return example_yaml_; }

  template <class A>
  Section& string(std::string key, A access, std::string doc, bool required = false,
                  Problem problem = {}) {
    using S = section_detail::MemberOf<T, A>;
    static_assert(std::is_same_v<S, std::string> || std::is_same_v<S, std::optional<std::string>>);
    return add(
        std::move(key), std::move(doc), required,
        [] {
          return Json{{"type", "string"}};
        },
        [access, problem](T& out, const Node& parent, const std::string& k) {
          auto v = parent.string(k);
          if (!v) return false;
          auto& member = section_detail::at(out, access);
          if (problem) {
            if (auto p = problem(*v); !p.empty()) {
              parent.child(k).error(p);
              member = std::move(*v);
              return false;
            }
          }
          member = std::move(*v);
          return true;
        },
        [access] {
          const S& v = section_detail::at(prototype(), access);
          if constexpr (std::is_same_v<S, std::string>) {
            return v.empty() ? Json() : Json(v);
          } else {
            return v ? Json(*v) : Json();
          }
        });
  }

  // The member is a bool, or a std::optional<bool> whose absence means something of its own
  // (e.g. "inherit the default").
  template <class A>
  Section& boolean(std::string key, A access, std::string doc, bool required = false) {
    using B = section_detail::MemberOf<T, A>;
    static_assert(std::is_same_v<B, bool> || std::is_same_v<B, std::optional<bool>>);
    return add(
        std::move(key), std::move(doc), required,
        [] {
          return Json{{"type", "boolean"}};
        },
        [access](T& out, const Node& parent, const std::string& k) {
          auto v = parent.boolean(k);
          if (v) section_detail::at(out, access) = *v;
          return v.has_value();
        },
        [access] {
          const B& v = section_detail::at(prototype(), access);
          if constexpr (std::is_same_v<B, bool>) {
            return Json(v);
          } else {
            return v ? Json(*v) : Json();
          }
        });
  }

  template <class A>
  Section& integer(std::string key, A access, std::int64_t min, std::int64_t max, std::string doc,
                   bool required = false) {
    // The member is an integer, or a std::optional of one whose absence means a computed
    // default (say which with byDefault()).
    using M = section_detail::MemberOf<T, A>;
    using I = typename section_detail::ValueOf<M>::type;
    static_assert(std::is_integral_v<I>);
    auto schema = [min, max] {
      return Json{{"type", "integer"}, {"minimum", min}, {"maximum", max}};
    };
    return add(
        std::move(key), std::move(doc), required, schema,
        [access, min, max](T& out, const Node& parent, const std::string& k) {
          auto v = parent.integer(k, min, max);
          if (v) section_detail::at(out, access) = static_cast<I>(*v);
          return v.has_value();
        },
        [access] {
          const M& v = section_detail::at(prototype(), access);
          if constexpr (std::is_same_v<M, I>) {
            return Json(v);
          } else {
            return v ? Json(*v) : Json();
          }
        });
  }

  // A duration in whole milliseconds (the key's name says so: `..._ms`).
  template <class A>
  Section& millis(std::string key, A access, std::int64_t min, std::int64_t max, std::string doc,
                  bool required = false) {
    static_assert(std::is_same_v<section_detail::MemberOf<T, A>, std::chrono::milliseconds>);
    auto schema = [min, max] {
      return Json{{"type", "integer"}, {"minimum", min}, {"maximum", max}};
    };
    return add(
        std::move(key), std::move(doc), required, schema,
        [access, min, max](T& out, const Node& parent, const std::string& k) {
          auto v = parent.integer(k, min, max);
          if (v) section_detail::at(out, access) = std::chrono::milliseconds(*v);
          return v.has_value();
        },
        [access] { return Json(section_detail::at(prototype(), access).count()); });
  }

  // A number (integer or decimal) in [min, max].
  template <class A>
  Section& number(std::string key, A access, double min, double max, std::string doc,
                  bool required = false) {
    static_assert(std::is_same_v<section_detail::MemberOf<T, A>, double>);
    auto schema = [min, max] {
      return Json{{"type", "number"}, {"minimum", min}, {"maximum", max}};
    };
    return add(
        std::move(key), std::move(doc), required, schema,
        [access, min, max](T& out, const Node& parent, const std::string& k) {
          auto v = parent.number(k);
          if (!v) return false;
          if (!(*v >= min && *v <= max)) {
            parent.child(k).error("must be a number between " + section_detail::numberText(min) +
                                  " and " + section_detail::numberText(max));
            return false;
          }
          section_detail::at(out, access) = *v;
          return true;
        },
        [access] { return Json(section_detail::at(prototype(), access)); });
  }

  // One of the named values; the struct holds the value (an enum), the file its name.
  template <class A, class E = section_detail::MemberOf<T, A>>
  Section& choice(std::string key, A access,
                  std::vector<std::pair<std::string, std::type_identity_t<E>>> values,
                  std::string doc, bool required = false) {
    std::vector<std::string> names;
    for (const auto& [name, value] : values) names.push_back(name);
    auto schema = [names] { return Json{{"type", "string"}, {"enum", names}}; };
    return add(
        std::move(key), std::move(doc), required, schema,
        [access, values, names](T& out, const Node& parent, const std::string& k) {
          auto v = parent.choice(k, names);
          if (!v) return false;
          for (const auto& [name, value] : values) {
            if (name == *v) section_detail::at(out, access) = value;
          }
          return true;
        },
        [access, values] {
          const E& v = section_detail::at(prototype(), access);
          for (const auto& [name, value] : values) {
            if (value == v) return Json(name);
          }
          return Json();
        });
  }

  // A list of strings; `item_problem` judges each (every bad one is reported at the key).
  template <class A>
  Section& strings(std::string key, A access, std::string doc, bool required = false,
                   Problem item_problem = {}) {
    static_assert(std::is_same_v<section_detail::MemberOf<T, A>, std::vector<std::string>>);
    auto schema = [] { return Json{{"type", "array"}, {"items", {{"type", "string"}}}}; };
    return add(
        std::move(key), std::move(doc), required, schema,
        [access, item_problem](T& out, const Node& parent, const std::string& k) {
          auto v = parent.stringList(k);
          if (!v) return false;
          bool ok = true;
          for (const auto& item : *v) {
            if (!item_problem) break;
            if (auto p = item_problem(item); !p.empty()) {
              parent.child(k).error(p);
              ok = false;
            }
          }
          section_detail::at(out, access) = std::move(*v);
          return ok;
        },
        [access] {
          const auto& v = section_detail::at(prototype(), access);
          return v.empty() ? Json() : Json(v);
        });
  }

  // A nested mapping read by its own section (the member is U or std::optional<U>).
  template <class A, class U>
  Section& object(std::string key, A access, const Section<U>& sub, std::string doc,
                  bool required = false) {
    using M = section_detail::MemberOf<T, A>;
    return add(
        std::move(key), std::move(doc), required, [&sub] { return sub.jsonSchema(); },
        [access, &sub](T& out, const Node& parent, const std::string& k) {
          U value{};
          if constexpr (std::is_same_v<M, U>) value = section_detail::at(out, access);
          const bool ok = sub.parse(parent.child(k), value);
          if (ok) section_detail::at(out, access) = std::move(value);
          return ok;
        },
        {}, [&sub] { return sub.reference(); });
  }

  // A mapping of names to entries read by `sub`, e.g. `targets: {docs: {...}}`. Each entry's
  // name is stored in `name_member`; `name_problem` judges it. `init` prepares each entry from
  // the owner before it is read (e.g. inherited limits). An entry with an error is left out.
  template <class A, class U>
  Section& named(std::string key, A access, std::string U::*name_member, const Section<U>& sub,
                 std::string doc, bool required, Problem name_problem,
                 std::string not_a_map_message,
                 std::type_identity_t<std::function<void(U&, const T&)>> init = {}) {
    static_assert(std::is_same_v<section_detail::MemberOf<T, A>, std::vector<U>>);
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
              section_detail::at(out, access).push_back(std::move(entry));
            } else {
              ok = false;
            }
          }
          return ok;
        },
        {}, [&sub] { return sub.reference(); });
  }

  // A list of entries read by `sub`, e.g. `clients: [{name: ..}, ..]`. `init` prepares each entry
  // from the owner before it is read; `accept` judges an entry read without error against those
  // before it (e.g. a duplicate name), reporting at `item` and returning false to leave it out.
  // An entry with an error is left out.
  template <class A, class U>
  Section& list(
      std::string key, A access, const Section<U>& sub, std::string doc, bool required,
      std::string not_a_list_message,
      std::type_identity_t<std::function<void(U&, const T&)>> init = {},
      std::type_identity_t<std::function<bool(const U&, const std::vector<U>&, const Node&)>>
          accept = {}) {
    static_assert(std::is_same_v<section_detail::MemberOf<T, A>, std::vector<U>>);
    auto schema = [&sub] { return Json{{"type", "array"}, {"items", sub.jsonSchema()}}; };
    return add(
        std::move(key), std::move(doc), required, schema,
        [=, &sub](T& out, const Node& parent, const std::string& k) {
          const Node seq = parent.child(k);
          if (!seq.isSequence()) {
            seq.error(not_a_list_message);
            return false;
          }
          bool ok = true;
          auto& entries = section_detail::at(out, access);
          for (const auto& item : seq.elements()) {
            U entry{};
            if (init) init(entry, out);
            if (!sub.parse(item, entry)) {
              ok = false;
              continue;
            }
            if (accept && !accept(entry, entries, item)) {
              ok = false;
              continue;
            }
            entries.push_back(std::move(entry));
          }
          return ok;
        },
        {}, [&sub] { return sub.reference(); });
  }

  // The keys of `sub` at this level, read into the member `access` reaches: a group of keys
  // owned by another module (e.g. the `http:` section's client keys, declared by auth).
  template <class A, class U>
  Section& inlined(A access, const Section<U>& sub) {
    static_assert(std::is_same_v<section_detail::MemberOf<T, A>, U>);
    for (const auto& f : sub.fields()) {
      Field g;
      g.key = f.key;
      g.doc = f.doc;
      g.required = f.required;
      g.missing_hint = f.missing_hint;
      g.schema = f.schema;
      g.default_value = f.default_value;
      g.default_text = f.default_text;
      g.example = f.example;
      g.nested_reference = f.nested_reference;
      g.read = [access, read = f.read](T& out, const Node& parent) {
        return read(section_detail::at(out, access), parent);
      };
      fields_.push_back(std::move(g));
    }
    for (const auto& rule : sub.checks_) {
      checks_.push_back([access, rule](T& out, const Node& node) {
        return rule(section_detail::at(out, access), node);
      });
    }
    return *this;
  }

  // A key read by code of its own (e.g. `limits:`, shared by every section), with its schema.
  // `nested` gives the reference lines of its own keys, if any.
  Section& custom(std::string key, std::string doc, std::function<Json()> schema, bool required,
                  std::function<bool(T&, const Node& value)> read,
                  std::function<std::vector<std::string>()> nested = {}) {
    return add(
        std::move(key), std::move(doc), required, std::move(schema),
        [read](T& out, const Node& parent, const std::string& k) {
          return read(out, parent.child(k));
        },
        {}, std::move(nested));
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
      properties[f.key] = fieldSchema(f);
      if (f.required) required.push_back(f.key);
    }
    Json s = {{"type", "object"},
              {"description", doc_},
              {"properties", properties},
              {"additionalProperties", false}};
    if (!required.empty()) s["required"] = required;
    return s;
  }

  // One line per key ("- `key` (type, required, default `v`): doc"), nested sections indented
  // below theirs.
  std::vector<std::string> reference() const {
    std::vector<std::string> lines;
    for (const auto& f : fields_) {
      lines.push_back(
          section_detail::referenceLine(f.key, fieldSchema(f), f.required, f.default_text));
      if (f.nested_reference) {
        for (const auto& l : f.nested_reference()) lines.push_back("  " + l);
      }
    }
    return lines;
  }

 private:
  template <class>
  friend class Section;

  // A default-constructed T: the defaults the reference and the schema show.
  static T& prototype() {
    static T p{};
    return p;
  }

  static Json fieldSchema(const Field& f) {
    Json s = section_detail::withDoc(f.schema(), f.doc);
    if (f.default_value) {
      if (Json d = f.default_value(); !d.is_null()) s["default"] = std::move(d);
    }
    if (!f.example.is_null()) s["examples"] = Json::array({f.example});
    return s;
  }

  Section& add(std::string key, std::string doc, bool required, std::function<Json()> schema,
               std::function<bool(T&, const Node&, const std::string&)> read,
               std::function<Json()> default_value = {},
               std::function<std::vector<std::string>()> nested = {}) {
    Field f;
    f.key = key;
    f.doc = std::move(doc);
    f.required = required;
    f.schema = std::move(schema);
    // A required key has no default to show.
    if (!required) f.default_value = std::move(default_value);
    f.read = [read = std::move(read), key](T& out, const Node& parent) {
      return read(out, parent, key);
    };
    f.nested_reference = std::move(nested);
    fields_.push_back(std::move(f));
    return *this;
  }

  std::string doc_;
  std::string example_yaml_;
  std::string noun_ = "entry";
  std::vector<Field> fields_;
  std::vector<std::function<bool(T&, const Node&)>> checks_;
};

}  // namespace mcpdb::config
