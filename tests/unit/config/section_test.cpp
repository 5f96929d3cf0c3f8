// config::Section: one declaration drives parsing (with located errors), the JSON Schema and the
// reference text. A toy section exercises every kind of key; engine sections are tested with
// their engines (e.g. the DynamoDB registry's golden configs).
#include <gtest/gtest.h>

#include <optional>

#include "config/section.hpp"

namespace mcpdb::config {
namespace {

enum class Color { Red, Blue };

struct Inner {
  bool on = false;
  int size = 5;
};

struct Entry {
  std::string name;
  std::string path;
  Color color = Color::Red;
  std::optional<Inner> inner;
  int inherited = 0;
};

struct Root {
  int level = 1;
  std::vector<std::string> tags;
  std::vector<Entry> entries;
};

std::string pathProblem(std::string_view p) {
  return !p.empty() && p.front() == '/' ? "" : "must be an absolute path";
}

const Section<Inner>& innerSection() {
  static const auto s = Section<Inner>("an inner mapping")
                            .boolean("on", &Inner::on, "switch", kRequired)
                            .integer("size", &Inner::size, 1, 10, "how big");
  return s;
}

const Section<Entry>& entrySection() {
  static const auto s =
      Section<Entry>("one entry")
          .entryNoun("entry")
          .string("path", &Entry::path, "where", kRequired, pathProblem)
          .choice("color", &Entry::color, {{"red", Color::Red}, {"blue", Color::Blue}}, "its color")
          .object("inner", &Entry::inner, innerSection(), "nested settings")
          .check([](Entry& e, const Node& node) {
            if (e.color == Color::Blue && e.inner && e.inner->size > 3) {
              node.child("inner").error("blue entries are at most size 3");
              return false;
            }
            return true;
          });
  return s;
}

const Section<Root>& rootSection() {
  static const auto s =
      Section<Root>("the root")
          .integer("level", &Root::level, 1, 3, "a level")
          .strings("tags", &Root::tags, "labels")
          .named(
              "entries", &Root::entries, &Entry::name, entrySection(), "the entries", kRequired,
              [](std::string_view n) { return n.size() <= 4 ? "" : "names are at most 4 long"; },
              "must map a name to an entry",
              [](Entry& e, const Root& r) { e.inherited = r.level * 10; })
          .missingHint("(a map of name to entry)");
  return s;
}

struct Parsed {
  Root root;
  bool ok = false;
  std::vector<std::string> errors;
};

Parsed parse(const std::string& yaml) {
  Diagnostics diag("t.yaml");
  YAML::Node doc = YAML::Load(yaml);
  Node node(doc, "", diag);
  Parsed p;
  p.ok = rootSection().parse(node.child("root"), p.root);
  p.errors = diag.errors();
  return p;
}

TEST(ConfigSection, ReadsEveryKindOfKeyInDeclarationOrder) {
  Parsed p = parse(R"(root:
  level: 2
  tags: [a, b]
  entries:
    one: {path: /x, color: blue, inner: {on: true, size: 2}}
    two: {path: /y}
)");
  ASSERT_TRUE(p.ok) << (p.errors.empty() ? "" : p.errors[0]);
  EXPECT_EQ(p.root.level, 2);
  EXPECT_EQ(p.root.tags, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(p.root.entries.size(), 2U);
  const Entry& one = p.root.entries[0];
  EXPECT_EQ(one.name, "one");
  EXPECT_EQ(one.path, "/x");
  EXPECT_EQ(one.color, Color::Blue);
  ASSERT_TRUE(one.inner.has_value());
  EXPECT_TRUE(one.inner->on);
  EXPECT_EQ(one.inner->size, 2);
  // `init` ran with the owner's keys read so far (level is declared before entries).
  EXPECT_EQ(one.inherited, 20);
  EXPECT_EQ(p.root.entries[1].color, Color::Red);  // the struct's default stays
  EXPECT_FALSE(p.root.entries[1].inner.has_value());
}

TEST(ConfigSection, ReportsEveryProblemWithItsPathAndLeavesBadEntriesOut) {
  Parsed p = parse(R"(root:
  level: 9
  colour: red
  entries:
    one: {path: rel, color: green}
    toolong: {path: /x}
    two: {color: blue, inner: {size: 2}}
    thr: {path: /w, color: blue, inner: {on: true, size: 5}}
    ok: {path: /z}
)");
  EXPECT_FALSE(p.ok);
  const std::vector<std::string> expected = {
      "t.yaml:3: root.colour: unknown key (allowed here: level, tags, entries)",
      "t.yaml:2: root.level: must be between 1 and 3",
      "t.yaml:5: root.entries.one.path: must be an absolute path",
      "t.yaml:5: root.entries.one.color: must be one of: red, blue",
      "t.yaml:6: root.entries.toolong: names are at most 4 long",
      "t.yaml:7: root.entries.two.path: is required",
      "t.yaml:7: root.entries.two.inner.on: is required",
      "t.yaml:8: root.entries.thr.inner: blue entries are at most size 3",
  };
  EXPECT_EQ(p.errors, expected);
  ASSERT_EQ(p.root.entries.size(), 1U);
  EXPECT_EQ(p.root.entries[0].name, "ok");
}

TEST(ConfigSection, MissingRequiredKeyCarriesItsHintAndWrongShapesAreNamed) {
  Parsed missing = parse("root: {level: 1}\n");
  EXPECT_FALSE(missing.ok);
  ASSERT_EQ(missing.errors.size(), 1U);
  EXPECT_EQ(missing.errors[0], "t.yaml:1: root.entries: is required (a map of name to entry)");

  Parsed list = parse("root: {entries: [a, b]}\n");
  ASSERT_EQ(list.errors.size(), 1U);
  EXPECT_EQ(list.errors[0], "t.yaml:1: root.entries: must map a name to an entry");

  Parsed scalar = parse("root: 3\n");
  ASSERT_EQ(scalar.errors.size(), 1U);
  EXPECT_EQ(scalar.errors[0], "t.yaml:1: root: must be a mapping");
}

TEST(ConfigSection, DuplicateNamesAreRefused) {
  // yaml-cpp keeps both keys of a duplicated mapping key; the section refuses the second.
  Parsed p = parse("root:\n  entries:\n    a: {path: /x}\n    a: {path: /y}\n");
  EXPECT_FALSE(p.ok);
  ASSERT_FALSE(p.errors.empty());
  EXPECT_NE(p.errors.back().find("duplicate entry name"), std::string::npos) << p.errors.back();
}

TEST(ConfigSection, JsonSchemaFollowsTheDeclaration) {
  const Json s = rootSection().jsonSchema();
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], Json::array({"entries"}));
  EXPECT_EQ(s["properties"]["level"]["minimum"], 1);
  EXPECT_EQ(s["properties"]["level"]["maximum"], 3);
  EXPECT_EQ(s["properties"]["level"]["description"], "a level");
  EXPECT_EQ(s["properties"]["tags"]["items"]["type"], "string");
  const Json entry = s["properties"]["entries"]["additionalProperties"];
  EXPECT_EQ(entry["required"], Json::array({"path"}));
  EXPECT_EQ(entry["properties"]["color"]["enum"], Json::array({"red", "blue"}));
  EXPECT_EQ(entry["properties"]["inner"]["properties"]["size"]["maximum"], 10);
  EXPECT_EQ(entry["properties"]["inner"]["required"], Json::array({"on"}));
}

TEST(ConfigSection, ReferenceListsEveryKeyWithTypeAndDoc) {
  const std::vector<std::string> expected = {
      "- `level` (integer 1..3): a level",
      "- `tags` (list of string): labels",
      "- `entries` (map of name to mapping, required): the entries",
      "  - `path` (string, required): where",
      "  - `color` (red | blue): its color",
      "  - `inner` (mapping): nested settings",
      "    - `on` (boolean, required): switch",
      "    - `size` (integer 1..10): how big",
  };
  EXPECT_EQ(rootSection().reference(), expected);
}

}  // namespace
}  // namespace mcpdb::config
