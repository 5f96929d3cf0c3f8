#include "engines/postgres/type_map.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

namespace mcpdb::postgres {
namespace {

struct ArrayType {
  Oid array;
  Oid element;
  const char* name;
};

// Array types of the built-in scalars this mapping knows (pg_type.dat).
constexpr ArrayType kArrays[] = {
    {1000, oid::kBool, "bool[]"},
    {1001, oid::kBytea, "bytea[]"},
    {1002, oid::kChar, "char[]"},
    {1003, oid::kName, "name[]"},
    {1005, oid::kInt2, "int2[]"},
    {1007, oid::kInt4, "int4[]"},
    {1009, oid::kText, "text[]"},
    {1014, oid::kBpchar, "bpchar[]"},
    {1015, oid::kVarchar, "varchar[]"},
    {1016, oid::kInt8, "int8[]"},
    {1021, oid::kFloat4, "float4[]"},
    {1022, oid::kFloat8, "float8[]"},
    {1028, oid::kOid, "oid[]"},
    {1115, oid::kTimestamp, "timestamp[]"},
    {1182, oid::kDate, "date[]"},
    {1183, oid::kTime, "time[]"},
    {1185, oid::kTimestamptz, "timestamptz[]"},
    {1187, oid::kInterval, "interval[]"},
    {1231, oid::kNumeric, "numeric[]"},
    {1270, oid::kTimetz, "timetz[]"},
    {2951, oid::kUuid, "uuid[]"},
    {199, oid::kJson, "json[]"},
    {3807, oid::kJsonb, "jsonb[]"},
};

const ArrayType* arrayType(Oid type) {
  for (const auto& a : kArrays) {
    if (a.array == type) return &a;
  }
  return nullptr;
}

constexpr std::int64_t kMaxSafeInteger = 9007199254740991;  // 2^53 - 1

Json integerValue(std::string_view text, bool wide) {
  const std::string s(text);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0') return Json(s);
  if (wide && (v > kMaxSafeInteger || v < -kMaxSafeInteger)) return Json(s);
  return Json(static_cast<std::int64_t>(v));
}

Json floatValue(std::string_view text) {
  const std::string s(text);
  if (s == "NaN" || s == "Infinity" || s == "-Infinity") return Json(s);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return Json(s);
  return Json(v);
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Json byteaValue(std::string_view text) {
  // Sessions run with bytea_output = hex: "\x0a0b...".
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' || text.size() % 2 != 0)
    return Json(std::string(text));
  std::string bytes;
  bytes.reserve((text.size() - 2) / 2);
  for (std::size_t i = 2; i + 1 < text.size(); i += 2) {
    const int hi = hexDigit(text[i]);
    const int lo = hexDigit(text[i + 1]);
    if (hi < 0 || lo < 0) return Json(std::string(text));
    bytes += static_cast<char>((hi << 4) | lo);
  }
  return Json(base64Encode(bytes));
}

Json jsonValue(std::string_view text) {
  Json v = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) return Json(std::string(text));
  return v;
}

// Parses the text form of an array: {a,"b c",NULL,{...}}, optionally "[1:2]={...}".
class ArrayParser {
 public:
  ArrayParser(std::string_view text, Oid element, const TypeInfo& types)
      : s_(text), element_(element), types_(types) {}

  std::optional<Json> parse() {
    if (!s_.empty() && s_[0] == '[') {
      const std::size_t eq = s_.find('=');
      if (eq == std::string_view::npos) return std::nullopt;
      pos_ = eq + 1;
    }
    auto v = parseArray();
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  std::optional<Json> parseArray() {
    if (pos_ >= s_.size() || s_[pos_] != '{') return std::nullopt;
    ++pos_;
    Json out = Json::array();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return out;
    }
    while (pos_ < s_.size()) {
      if (s_[pos_] == '{') {
        auto sub = parseArray();
        if (!sub) return std::nullopt;
        out.push_back(std::move(*sub));
      } else if (s_[pos_] == '"') {
        ++pos_;
        std::string v;
        while (pos_ < s_.size() && s_[pos_] != '"') {
          if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
          v += s_[pos_++];
        }
        if (pos_ >= s_.size()) return std::nullopt;
        ++pos_;
        out.push_back(valueToJson(element_, v, types_));
      } else {
        const std::size_t start = pos_;
        while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != '}') ++pos_;
        const std::string_view v = s_.substr(start, pos_ - start);
        if (v.size() == 4 && (v == "NULL" || v == "null")) {
          out.push_back(nullptr);
        } else {
          out.push_back(valueToJson(element_, v, types_));
        }
      }
      if (pos_ >= s_.size()) return std::nullopt;
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return out;
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  Oid element_;
  const TypeInfo& types_;
};

}  // namespace

std::string base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  return out;
}

std::string isoTimestamp(std::string_view text) {
  // "2024-01-15 10:20:30.5+00" -> "2024-01-15T10:20:30.5Z"; "...+05:30" stays; "+05" -> "+05:00".
  // Anything else (infinity, BC, years beyond 9999) is returned unchanged.
  if (text.size() < 19 || text[10] != ' ' || text[4] != '-' || text[13] != ':')
    return std::string(text);
  std::string out(text);
  out[10] = 'T';
  std::size_t zone = out.find_first_of("+-", 19);
  if (zone == std::string::npos) return out;
  const std::string off = out.substr(zone);
  if (off == "+00" || off == "+00:00" || off == "-00") return out.substr(0, zone) + "Z";
  if (off.size() == 3) return out + ":00";
  return out;
}

Json valueToJson(Oid type, std::string_view text, const TypeInfo& types) {
  switch (type) {
    case oid::kInt2:
    case oid::kInt4:
    case oid::kOid: return integerValue(text, false);
    case oid::kInt8: return integerValue(text, true);
    case oid::kFloat4:
    case oid::kFloat8: return floatValue(text);
    case oid::kBool: return Json(text == "t");
    case oid::kBytea: return byteaValue(text);
    case oid::kJson:
    case oid::kJsonb: return jsonValue(text);
    case oid::kTimestamp:
    case oid::kTimestamptz: return Json(isoTimestamp(text));
    default: break;
  }
  if (type != 0 && (type == types.vector || type == types.halfvec)) return jsonValue(text);
  if (const ArrayType* a = arrayType(type)) {
    ArrayParser p(text, a->element, types);
    if (auto v = p.parse()) return std::move(*v);
  }
  return Json(std::string(text));
}

std::string typeName(Oid type, const TypeInfo& types) {
  switch (type) {
    case oid::kBool: return "bool";
    case oid::kBytea: return "bytea";
    case oid::kChar: return "char";
    case oid::kName: return "name";
    case oid::kInt8: return "int8";
    case oid::kInt2: return "int2";
    case oid::kInt4: return "int4";
    case oid::kText: return "text";
    case oid::kOid: return "oid";
    case oid::kJson: return "json";
    case oid::kFloat4: return "float4";
    case oid::kFloat8: return "float8";
    case oid::kBpchar: return "bpchar";
    case oid::kVarchar: return "varchar";
    case oid::kDate: return "date";
    case oid::kTime: return "time";
    case oid::kTimestamp: return "timestamp";
    case oid::kTimestamptz: return "timestamptz";
    case oid::kInterval: return "interval";
    case oid::kTimetz: return "timetz";
    case oid::kNumeric: return "numeric";
    case oid::kUuid: return "uuid";
    case oid::kJsonb: return "jsonb";
    default: break;
  }
  if (type != 0 && type == types.vector) return "vector";
  if (type != 0 && type == types.halfvec) return "halfvec";
  if (const ArrayType* a = arrayType(type)) return a->name;
  return "oid:" + std::to_string(type);
}

Json jsonTypeOf(Oid type, const TypeInfo& types) {
  switch (type) {
    case oid::kBool: return "boolean";
    case oid::kInt2:
    case oid::kInt4:
    case oid::kOid: return "integer";
    case oid::kInt8: return Json::array({"integer", "string"});
    case oid::kFloat4:
    case oid::kFloat8: return Json::array({"number", "string"});
    case oid::kJson:
    case oid::kJsonb: return "any";
    default: break;
  }
  if (type != 0 && (type == types.vector || type == types.halfvec)) return "array";
  if (arrayType(type) != nullptr) return "array";
  return "string";  // numeric, dates and times, text, bytea (base64), uuid, anything else's text
}

}  // namespace mcpdb::postgres
