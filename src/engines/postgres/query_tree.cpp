#include "engines/postgres/query_tree.hpp"

#include <charconv>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace mcpdb::postgres::proof {
namespace {

// What a field's value is. The tables below are PostgreSQL 15's node structs (primnodes.h,
// parsenodes.h) for every node an analyzed SELECT can contain; outfuncs.c prints each field under
// its struct member's name.
enum class Field {
  Plain,      // no object id (flags, positions, names, sub-nodes)
  Function,   // a pg_proc id
  Operator,   // a pg_operator id
  Type,       // a pg_type id
  Relation,   // a pg_class id
  Benign,     // an id of an object that runs no code: a collation, role, operator family
  Functions,  // lists of the same: (o 1 2 ...)
  Operators,
  Types,
  Benigns,
};

const std::unordered_map<std::string_view, Field>& fields() {
  static const std::unordered_map<std::string_view, Field> kFields = [] {
    std::unordered_map<std::string_view, Field> m;
    for (std::string_view f : {"aggfnoid", "winfnoid", "funcid", "opfuncid", "hashfuncid",
                               "negfuncid", "tsmhandler", "startInRangeFunc", "endInRangeFunc"})
      m[f] = Field::Function;
    for (std::string_view f : {"opno", "eqop", "sortop", "cycle_mark_neop"}) m[f] = Field::Operator;
    m["opnos"] = Field::Operators;
    for (std::string_view f :
         {"vartype",        "consttype",        "paramtype",    "aggtype",    "aggtranstype",
          "wintype",        "refcontainertype", "refelemtype",  "refrestype", "funcresulttype",
          "opresulttype",   "resulttype",       "casetype",     "typeId",     "array_typeid",
          "element_typeid", "row_typeid",       "coalescetype", "minmaxtype", "type",
          "cycle_mark_type"})
      m[f] = Field::Type;
    for (std::string_view f :
         {"aggargtypes", "coltypes", "funccoltypes", "ctecoltypes", "colTypes"})
      m[f] = Field::Types;
    for (std::string_view f : {"relid", "resorigtbl"}) m[f] = Field::Relation;
    for (std::string_view f :
         {"varcollid", "constcollid", "paramcollid", "aggcollid", "inputcollid", "wincollid",
          "refcollid", "funccollid", "opcollid", "resultcollid", "collOid", "casecollid",
          "collation", "array_collid", "coalescecollid", "minmaxcollid", "inRangeColl",
          "cycle_mark_collation", "checkAsUser"})
      m[f] = Field::Benign;
    for (std::string_view f : {"colcollations", "funccolcollations", "ctecolcollations",
                               "colCollations", "inputcollids", "opfamilies", "constraintDeps"})
      m[f] = Field::Benigns;
    for (std::string_view f :
         {// Query
          "commandType", "querySource", "queryId", "canSetTag", "utilityStmt", "resultRelation",
          "hasAggs", "hasWindowFuncs", "hasTargetSRFs", "hasSubLinks", "hasDistinctOn",
          "hasRecursive", "hasModifyingCTE", "hasForUpdate", "hasRowSecurity", "isReturn",
          "cteList", "rtable", "jointree", "mergeActionList", "mergeUseOuterJoin", "targetList",
          "override", "onConflict", "returningList", "groupClause", "groupDistinct", "groupingSets",
          "havingQual", "windowClause", "distinctClause", "sortClause", "limitOffset", "limitCount",
          "limitOption", "rowMarks", "setOperations", "withCheckOptions", "stmt_location",
          "stmt_len",
          // RangeTblEntry, RangeTblFunction, TableSampleClause, Alias
          "rtekind", "relkind", "rellockmode", "tablesample", "subquery", "security_barrier",
          "jointype", "joinmergedcols", "joinaliasvars", "joinleftcols", "joinrightcols",
          "join_using_alias", "functions", "funcordinality", "tablefunc", "values_lists", "ctename",
          "ctelevelsup", "self_reference", "coltypmods", "enrname", "enrtuples", "alias", "eref",
          "lateral", "inh", "inFromCl", "requiredPerms", "selectedCols", "insertedCols",
          "updatedCols", "extraUpdatedCols", "securityQuals", "funcexpr", "funccolcount",
          "funccolnames", "funccoltypmods", "funcparams", "args", "repeatable", "aliasname",
          "colnames",
          // FromExpr, JoinExpr, RangeTblRef, TargetEntry
          "fromlist", "quals", "isNatural", "larg", "rarg", "usingClause", "rtindex", "expr",
          "resno", "resname", "ressortgroupref", "resorigcol", "resjunk",
          // expressions
          "varno", "varattno", "vartypmod", "varlevelsup", "varnosyn", "varattnosyn", "location",
          "consttypmod", "constlen", "constvalue", "constisnull", "constbyval", "paramkind",
          "paramid", "paramtypmod", "aggdirectargs", "aggorder", "aggdistinct", "aggfilter",
          "aggstar", "aggvariadic", "aggkind", "agglevelsup", "aggsplit", "aggno", "aggtransno",
          "refs", "cols", "winref", "winstar", "winagg", "reftypmod", "refupperindexpr",
          "reflowerindexpr", "refexpr", "refassgnexpr", "funcretset", "funcvariadic", "funcformat",
          "arg", "name", "argnumber", "opretset", "useOr", "boolop", "subLinkType", "subLinkId",
          "testexpr", "operName", "subselect", "fieldnum", "resulttypmod", "newvals", "fieldnums",
          "relabelformat", "coerceformat", "elemexpr", "convertformat", "defresult", "result",
          "typeMod", "elements", "multidims", "row_format", "rctype", "largs", "rargs", "op",
          "typmod", "named_args", "arg_names", "xmloption", "nulltesttype", "argisrow",
          "booltesttype", "coercionformat",
          // SortGroupClause, GroupingSet, WindowClause
          "tleSortGroupRef", "nulls_first", "hashable", "kind", "content", "refname",
          "partitionClause", "orderClause", "frameOptions", "startOffset", "endOffset",
          "runCondition", "inRangeAsc", "inRangeNullsFirst", "copiedOrder",
          // CommonTableExpr, CTESearchClause, CTECycleClause, SetOperationStmt, TableFunc
          "aliascolnames", "ctematerialized", "ctequery", "search_clause", "cycle_clause",
          "cterecursive", "cterefcount", "ctecolnames", "ctecoltypmods", "search_col_list",
          "search_breadth_first", "search_seq_column", "cycle_col_list", "cycle_mark_column",
          "cycle_mark_value", "cycle_mark_default", "cycle_path_column", "cycle_mark_typmod", "all",
          "colTypmods", "groupClauses", "ns_uris", "ns_names", "docexpr", "rowexpr", "colexprs",
          "coldefexprs", "notnulls", "ordinalitycol"})
      m.emplace(f, Field::Plain);
    return m;
  }();
  return kFields;
}

// The node kinds an analyzed, rewritten SELECT can contain (outfuncs.c's labels). Anything else
// (a utility statement, a node of a newer server) is not read past.
bool knownNode(std::string_view name) {
  static const std::set<std::string_view> kNodes = {"QUERY",
                                                    "RANGETBLENTRY",
                                                    "RANGETBLFUNCTION",
                                                    "TABLESAMPLECLAUSE",
                                                    "ALIAS",
                                                    "FROMEXPR",
                                                    "JOINEXPR",
                                                    "RANGETBLREF",
                                                    "TARGETENTRY",
                                                    "VAR",
                                                    "CONST",
                                                    "PARAM",
                                                    "AGGREF",
                                                    "GROUPINGFUNC",
                                                    "WINDOWFUNC",
                                                    "SUBSCRIPTINGREF",
                                                    "FUNCEXPR",
                                                    "NAMEDARGEXPR",
                                                    "OPEXPR",
                                                    "DISTINCTEXPR",
                                                    "NULLIFEXPR",
                                                    "SCALARARRAYOPEXPR",
                                                    "BOOLEXPR",
                                                    "SUBLINK",
                                                    "FIELDSELECT",
                                                    "FIELDSTORE",
                                                    "RELABELTYPE",
                                                    "COERCEVIAIO",
                                                    "ARRAYCOERCEEXPR",
                                                    "CONVERTROWTYPEEXPR",
                                                    "COLLATEEXPR",
                                                    "CASEEXPR",
                                                    "CASEWHEN",
                                                    "CASETESTEXPR",
                                                    "ARRAYEXPR",
                                                    "ROWEXPR",
                                                    "ROWCOMPAREEXPR",
                                                    "COALESCEEXPR",
                                                    "MINMAXEXPR",
                                                    "SQLVALUEFUNCTION",
                                                    "XMLEXPR",
                                                    "NULLTEST",
                                                    "BOOLEANTEST",
                                                    "COERCETODOMAIN",
                                                    "COERCETODOMAINVALUE",
                                                    "SETTODEFAULT",
                                                    "SORTGROUPCLAUSE",
                                                    "GROUPINGSET",
                                                    "WINDOWCLAUSE",
                                                    "COMMONTABLEEXPR",
                                                    "CTESEARCHCLAUSE",
                                                    "CTECYCLECLAUSE",
                                                    "SETOPERATIONSTMT",
                                                    "TABLEFUNC"};
  return kNodes.contains(name);
}

// The tokens of pg_strtok (read.c): (, ), {, } alone; anything else runs to the next blank or
// bracket, a backslash taking the next character literally.
class Tokens {
 public:
  explicit Tokens(std::string_view text) : text_(text) {}

  // The next token; empty at the end. `escaped` tells whether it held a backslash.
  std::string_view next(bool& escaped) {
    escaped = false;
    while (pos_ < text_.size() && blank(text_[pos_])) ++pos_;
    if (pos_ >= text_.size()) return {};
    const std::size_t start = pos_;
    if (bracket(text_[pos_])) return text_.substr(pos_++, 1);
    while (pos_ < text_.size() && !blank(text_[pos_]) && !bracket(text_[pos_])) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        escaped = true;
        ++pos_;
      }
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

 private:
  static bool blank(char c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
  }
  static bool bracket(char c) { return c == '(' || c == ')' || c == '{' || c == '}'; }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::optional<std::int64_t> objectId(std::string_view token) {
  std::uint32_t v = 0;  // an Oid is printed with %u
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec != std::errc() || end != token.data() + token.size() || token.empty()) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

// How deep brackets may nest: far beyond any real statement, and bounded so that the reader's
// own stack (a vector) stays small on hostile input.
constexpr std::size_t kMaxDepth = 10000;

class Reader {
 public:
  explicit Reader(std::string_view text) : tokens_(text) {}

  Result<TreeObjects> read() {
    bool escaped = false;
    for (std::string_view t = tokens_.next(escaped); !t.empty(); t = tokens_.next(escaped)) {
      if (auto st = take(t, escaped); !st) return st.error();
    }
    if (!stack_.empty()) return fail("the tree ends inside a node or list");
    if (out_.queries == 0) return fail("the text holds no query");
    return out_;
  }

 private:
  struct Frame {
    bool node = false;           // a {NODE ...}, else a (list)
    Field field = Field::Plain;  // a node: the field being read; a list: the field it is in
    bool field_open = false;     // a node: a field name was read and its value is due
    bool id_read = false;        // a node: the scalar id of the current field was read
    char marker = 0;             // a list: its element kind ('o' ids, 'i', 'x', 'b'), or 0
    bool first = true;           // a list: nothing read in it yet
  };

  static Error fail(std::string why) {
    return Error{Code::FailedPrecondition, "PostgreSQL's query tree could not be read: " + why};
  }

  static bool listOf(Field f) {
    return f == Field::Functions || f == Field::Operators || f == Field::Types ||
           f == Field::Benigns;
  }
  static bool scalarId(Field f) {
    return f == Field::Function || f == Field::Operator || f == Field::Type ||
           f == Field::Relation || f == Field::Benign;
  }

  void record(Field f, std::int64_t id) {
    if (id == 0) return;  // InvalidOid: none
    switch (f) {
      case Field::Function:
      case Field::Functions: out_.functions.insert(id); break;
      case Field::Operator:
      case Field::Operators: out_.operators.insert(id); break;
      case Field::Type:
      case Field::Types: out_.types.insert(id); break;
      case Field::Relation: out_.relations.insert(id); break;
      default: break;
    }
  }

  Status push(Frame f) {
    if (stack_.size() >= kMaxDepth) return fail("it nests too deep");
    stack_.push_back(f);
    return {};
  }

  // The field a value now read belongs to (Plain at the top level or in a plain list).
  Field context() const { return stack_.empty() ? Field::Plain : stack_.back().field; }

  Status take(std::string_view t, bool escaped) {
    if (t == "{") return openNode();
    if (t == "}") {
      if (stack_.empty() || !stack_.back().node) return fail("a node closes where none is open");
      if (stack_.back().field_open && !stack_.back().id_read && scalarId(stack_.back().field)) {
        return fail("a field has no value");
      }
      stack_.pop_back();
      return valueDone();
    }
    if (t == "(") return openList();
    if (t == ")") {
      if (stack_.empty() || stack_.back().node) return fail("a list closes where none is open");
      stack_.pop_back();
      return valueDone();
    }
    if (t == "?") return fail("the server printed a node it cannot show");
    if (!stack_.empty() && stack_.back().node && !escaped && t.size() > 1 && t[0] == ':')
      return openField(t.substr(1));
    return atom(t);
  }

  Status openNode() {
    if (auto st = beginValue(); !st) return st;
    bool escaped = false;
    const std::string_view name = tokens_.next(escaped);
    if (escaped || !knownNode(name)) {
      return fail("unknown node kind " + std::string(name.substr(0, 40)));
    }
    if (name == "QUERY") ++out_.queries;
    return push(Frame{.node = true});
  }

  Status openList() {
    const Field f = context();
    if (auto st = beginValue(); !st) return st;
    return push(Frame{.node = false, .field = f});
  }

  Status openField(std::string_view name) {
    Frame& top = stack_.back();
    if (top.field_open && !top.id_read && scalarId(top.field)) return fail("a field has no value");
    const auto it = fields().find(name);
    if (it == fields().end()) return fail("unknown field " + std::string(name.substr(0, 40)));
    top.field = it->second;
    top.field_open = true;
    top.id_read = false;
    return {};
  }

  // A node or list is about to start as a value: where it is allowed.
  Status beginValue() {
    if (stack_.empty()) return {};
    Frame& top = stack_.back();
    if (top.node) {
      if (!top.field_open) return fail("a value without a field");
      if (scalarId(top.field)) return fail("an object id field holds a node or list");
      return {};
    }
    // Inside a list: a typed list (ids, integers, a bitmap) holds only atoms.
    if (top.marker != 0) return fail("a typed list holds a node or list");
    if (listOf(top.field)) return fail("an id list holds a node or list");
    top.first = false;
    return {};
  }

  // A node or list value has ended: a scalar field it stood for is now read.
  Status valueDone() {
    if (!stack_.empty() && stack_.back().node) stack_.back().id_read = true;
    return {};
  }

  Status atom(std::string_view t) {
    if (stack_.empty()) return fail("text outside any node");
    Frame& top = stack_.back();
    if (top.node) {
      if (!top.field_open) return fail("a value without a field");
      if (scalarId(top.field)) {
        if (top.id_read) return fail("an object id field holds more than one value");
        const auto id = objectId(t);
        if (!id) return fail("an object id is not a number");
        record(top.field, *id);
        top.id_read = true;
        return {};
      }
      if (listOf(top.field)) {
        if (t == "<>" && !top.id_read) {  // an empty list
          top.id_read = true;
          return {};
        }
        return fail("an id list field holds a plain value");
      }
      return {};  // a plain value (several atoms for a datum: "4 [ 1 0 0 0 ]")
    }
    // Inside a list.
    if (top.first && t.size() == 1 && (t == "o" || t == "i" || t == "x" || t == "b")) {
      top.first = false;
      top.marker = t[0];
      if (top.marker == 'o' && !listOf(top.field) && top.field != Field::Plain) {
        return fail("an id list where a single id was expected");
      }
      if (top.marker == 'o' && top.field == Field::Plain) {
        return fail("an id list in a field that holds no ids");
      }
      return {};
    }
    top.first = false;
    if (listOf(top.field)) {
      if (top.marker != 'o') return fail("an id list is not marked as one");
      const auto id = objectId(t);
      if (!id) return fail("an object id is not a number");
      record(top.field, *id);
      return {};
    }
    if (top.marker == 'o') return fail("an id list in a field that holds no ids");
    return {};
  }

  Tokens tokens_;
  std::vector<Frame> stack_;
  TreeObjects out_;
};

}  // namespace

Result<TreeObjects> readQueryTree(std::string_view text) {
  Reader reader(text);
  return reader.read();
}

}  // namespace mcpdb::postgres::proof
