// libFuzzer target: the name collector of the view and routine vetting (names.hpp). The input
// drives a generator of MySQL statements that plants one view name (bare, backquoted, qualified,
// with comments around its dot) in random syntactic positions: parentheses, every join form, a
// comma after JOIN ... ON or USING, index hints, ODBC {OJ ...} escapes, derived tables,
// subqueries, CTEs, UNION, function calls, with comments and whitespace between any two tokens.
// Whenever the generated text lexes, the collector must list the planted name. Raw input is also
// collected (never a crash, hang or out-of-bounds read).

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engines/mysql/names.hpp"

namespace {

namespace guard = mcpdb::mysql::guard;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

class Generator {
 public:
  explicit Generator(FuzzedDataProvider& in) : in_(in) {}

  // Whitespace or a comment between tokens.
  std::string gap() {
    switch (in_.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: return "  ";
      case 1: return "\n";
      case 2: return " /* " + word() + " */ ";
      case 3: return " -- " + word() + "\n";
      case 4: return " #" + word() + "\n";
      case 5: return "\t";
      default: return " ";
    }
  }
  std::string word() {
    static const char* kWords[] = {"t", "u", "x", "id", "a1", "status", "d", "k", "c"};
    return kWords[in_.ConsumeIntegralInRange<std::size_t>(0, 8)];
  }

  // One table factor holding the planted name, nested up to `depth` more times.
  std::string factor(const std::string& name, int depth) {
    const int choice = in_.ConsumeIntegralInRange<int>(0, depth > 0 ? 17 : 2);
    const std::string g = gap();
    switch (choice) {
      case 0: return name;
      case 1: return name + g + "AS" + gap() + "al";
      case 2: return name + g + word();
      case 3: return "(" + g + factor(name, depth - 1) + gap() + ")";
      case 4:
        return "t" + g + "JOIN" + gap() + "(" + factor(name, depth - 1) + ")" + gap() + "ON 1";
      case 5: return "t JOIN u ON 1," + g + factor(name, depth - 1);
      case 6: return "t JOIN u USING (id)," + g + factor(name, depth - 1);
      case 7: return "t IGNORE INDEX FOR ORDER BY (PRIMARY)," + g + factor(name, depth - 1);
      case 8: return "t USE INDEX (k)" + g + "JOIN " + factor(name, depth - 1) + " ON 1";
      case 9: return "{OJ " + factor(name, depth - 1) + g + "LEFT OUTER JOIN t ON 1}";
      case 10: return "{oj t LEFT OUTER JOIN" + g + factor(name, depth - 1) + " ON 1}";
      case 11: return "(SELECT * FROM" + g + factor(name, depth - 1) + ") AS d";
      case 12: return "t STRAIGHT_JOIN" + g + factor(name, depth - 1);
      case 13: return "t NATURAL LEFT JOIN" + g + factor(name, depth - 1);
      case 14: return "t CROSS JOIN (u," + g + factor(name, depth - 1) + ")";
      case 15: return "LATERAL (SELECT x FROM " + factor(name, depth - 1) + ") AS l";
      case 16: return "t FORCE KEY FOR JOIN (k1, k2)," + g + factor(name, depth - 1);
      default: return "t, " + factor(name, depth - 1);
    }
  }

  // A statement holding the planted name somewhere.
  std::string statement(const std::string& name) {
    const int depth = in_.ConsumeIntegralInRange<int>(0, 4);
    const std::string g = gap();
    switch (in_.ConsumeIntegralInRange<int>(0, 8)) {
      case 0: return "SELECT x FROM" + g + factor(name, depth);
      case 1: return "SELECT id FROM t WHERE id IN (SELECT id FROM" + g + factor(name, depth) + ")";
      case 2: return "SELECT (SELECT x FROM " + factor(name, depth) + " LIMIT 1)" + g + "AS y";
      case 3:
        return "SELECT 1 FROM t WHERE EXISTS" + g + "(SELECT 1 FROM " + factor(name, depth) + ")";
      case 4:
        return "SELECT id FROM t UNION ALL" + g + "(SELECT x FROM " + factor(name, depth) + ")";
      case 5:
        return "WITH c AS (SELECT x FROM " + factor(name, depth) + ")" + g + "SELECT x FROM c";
      case 6: return "SELECT " + name + g + "(1) AS y FROM t";
      case 7: return "SELECT x FROM t WHERE " + name + g + "(x) > 0";
      default: return "SELECT COUNT(*) FROM t, " + factor(name, depth) + g + "GROUP BY x";
    }
  }

 private:
  FuzzedDataProvider& in_;
};

struct Planted {
  std::string text;   // as written in the statement
  guard::Name found;  // what the collector must list
};

Planted plant(FuzzedDataProvider& in, Generator& gen) {
  const std::string name = in.ConsumeBool() ? "v" : "V_view_1";
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: return {name, {"db", name}};
    case 1: return {"`" + name + "`", {"db", name}};
    case 2: return {"s." + name, {"s", name}};
    case 3: return {"`s`.`" + name + "`", {"s", name}};
    case 4: return {"s" + gen.gap() + "." + gen.gap() + name, {"s", name}};
    default: return {"`we``ird " + name + "`", {"db", "we`ird " + name}};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Any text: never a crash, and every name has two parts.
  const std::string raw(reinterpret_cast<const char*>(data), size);
  for (const auto& n : guard::collectNames(raw, "db").names) require(n.size() == 2);

  FuzzedDataProvider in(data, size);
  Generator gen(in);
  const Planted p = plant(in, gen);
  const std::string sql = gen.statement(p.text);
  const guard::NameCandidates c = guard::collectNames(sql, "db");
  require(c.complete);  // the generator writes only text the lexer reads to its end
  require(std::find(c.names.begin(), c.names.end(), p.found) != c.names.end());
  return 0;
}
