// config::Section: one declaration drives parsing (with located errors), the JSON Schema and the
// reference text. A toy section exercises every kind of key; engine sections are tested with
// their engines (e.g. the DynamoDB registry's golden configs).
#include <gtest/gtest.h>

#include <chrono>
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
      "- `level` (integer 1..3, default `1`): a level",
      "- `tags` (list of string): labels",
      "- `entries` (map of name to mapping, required): the entries",
      "  - `path` (string, required): where",
      "  - `color` (red | blue, default `red`): its color",
      "  - `inner` (mapping): nested settings",
      "    - `on` (boolean, required): switch",
      "    - `size` (integer 1..10, default `5`): how big",
  };
  EXPECT_EQ(rootSection().reference(), expected);
}

// The kinds of key the generic sections need: durations, decimals, optional integers with a
// computed default, lists of entries judged against the ones before, and keys of another
// module's section inlined at this level.
struct Rate {
  double per_second = 2.5;
};

struct Member {
  std::string name;
  int weight = 1;
};

struct Owner {
  std::chrono::milliseconds wait{1500};
  std::optional<std::size_t> cap;
  Rate rate;
  struct Group {
    bool open = true;
    std::vector<Member> members;
  } group;
};

const Section<Member>& memberSection() {
  static const auto s = Section<Member>("a member")
                            .string("name", &Member::name, "who", kRequired)
                            .integer("weight", &Member::weight, 1, 9, "how much");
  return s;
}

const Section<Owner::Group>& groupSection() {
  static const auto s =
      Section<Owner::Group>("a group")
          .boolean("open", &Owner::Group::open, "whether anyone may join")
          .list(
              "members", &Owner::Group::members, memberSection(), "who is in", kOptional,
              "must be a list of members", [](Member& m, const Owner::Group&) { m.weight = 3; },
              [](const Member& m, const std::vector<Member>& before, const Node& item) {
                for (const auto& b : before) {
                  if (b.name == m.name) {
                    item.child("name").error("duplicate member '" + m.name + "'");
                    return false;
                  }
                }
                return true;
              });
  return s;
}

const Section<Owner>& ownerSection() {
  static const auto s =
      Section<Owner>("an owner")
          .millis("wait_ms", &Owner::wait, 10, 60000, "how long to wait")
          .integer("cap", &Owner::cap, 1, 100, "the most at once")
          .byDefault("twice the members")
          .number(
              "rate", [](Owner & o) -> auto& { return o.rate.per_second; }, 0.5, 100, "per second")
          .example(4)
          .inlined(&Owner::group, groupSection());
  return s;
}

struct OwnerParsed {
  Owner owner;
  bool ok = false;
  std::vector<std::string> errors;
};

OwnerParsed parseOwner(const std::string& yaml) {
  Diagnostics diag("o.yaml");
  YAML::Node doc = YAML::Load(yaml);
  OwnerParsed p;
  p.ok = ownerSection().parse(Node(doc, "", diag).child("owner"), p.owner);
  p.errors = diag.errors();
  return p;
}

TEST(ConfigSection, DurationsNumbersOptionalsListsAndInlinedKeysAreRead) {
  OwnerParsed p = parseOwner(R"(owner:
  wait_ms: 250
  cap: 7
  rate: 0.75
  open: false
  members: [{name: a}, {name: b, weight: 9}]
)");
  ASSERT_TRUE(p.ok) << (p.errors.empty() ? "" : p.errors[0]);
  EXPECT_EQ(p.owner.wait, std::chrono::milliseconds(250));
  EXPECT_EQ(p.owner.cap, 7U);
  EXPECT_DOUBLE_EQ(p.owner.rate.per_second, 0.75);
  EXPECT_FALSE(p.owner.group.open);
  ASSERT_EQ(p.owner.group.members.size(), 2U);
  EXPECT_EQ(p.owner.group.members[0].weight, 3);  // from init
  EXPECT_EQ(p.owner.group.members[1].weight, 9);

  OwnerParsed absent = parseOwner("owner: {}\n");
  ASSERT_TRUE(absent.ok);
  EXPECT_FALSE(absent.owner.cap.has_value());
  EXPECT_EQ(absent.owner.wait, std::chrono::milliseconds(1500));
}

TEST(ConfigSection, ListEntriesAreJudgedAndNumbersRangeChecked) {
  OwnerParsed p = parseOwner(R"(owner:
  rate: 0.1
  wait_ms: 5
  members:
    - {name: a}
    - {weight: 2}
    - {name: a}
)");
  EXPECT_FALSE(p.ok);
  const std::vector<std::string> expected = {
      "o.yaml:3: owner.wait_ms: must be between 10 and 60000",
      "o.yaml:2: owner.rate: must be a number between 0.5 and 100",
      "o.yaml:6: owner.members[1].name: is required",
      "o.yaml:7: owner.members[2].name: duplicate member 'a'",
  };
  EXPECT_EQ(p.errors, expected);
  ASSERT_EQ(p.owner.group.members.size(), 1U);

  OwnerParsed not_list = parseOwner("owner: {members: {a: 1}}\n");
  ASSERT_EQ(not_list.errors.size(), 1U);
  EXPECT_EQ(not_list.errors[0], "o.yaml:1: owner.members: must be a list of members");
}

TEST(ConfigSection, DefaultsAndExamplesReachTheSchemaAndTheReference) {
  const Json s = ownerSection().jsonSchema();
  EXPECT_EQ(s["properties"]["wait_ms"]["default"], 1500);
  EXPECT_FALSE(s["properties"]["cap"].contains("default"));  // computed: said in words
  EXPECT_EQ(s["properties"]["rate"]["default"], 2.5);
  EXPECT_EQ(s["properties"]["rate"]["examples"], Json::array({4}));
  EXPECT_EQ(s["properties"]["open"]["default"], true);
  EXPECT_EQ(s["properties"]["members"]["type"], "array");
  EXPECT_EQ(s["properties"]["members"]["items"]["required"], Json::array({"name"}));
  const std::vector<std::string> expected = {
      "- `wait_ms` (integer 10..60000, default `1500`): how long to wait",
      "- `cap` (integer 1..100, default: twice the members): the most at once",
      "- `rate` (number 0.5..100, default `2.5`): per second. Example: `rate: 4`.",
      "- `open` (boolean, default `true`): whether anyone may join",
      "- `members` (list of mapping): who is in",
      "  - `name` (string, required): who",
      "  - `weight` (integer 1..9, default `1`): how much",
  };
  EXPECT_EQ(ownerSection().reference(), expected);
}

}  // namespace
}  // namespace mcpdb::config
