#include "engines/dynamodb/attribute_value.hpp"

#include <cstdint>
#include <cstdlib>

namespace mcpdb::dynamodb {
namespace {

Error bad(const std::string& what) {
  return makeError(Code::InvalidArgument, "malformed DynamoDB value: " + what);
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Canonical decimal text without exponent: -?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?
bool isCanonicalDecimal(std::string_view s, std::size_t& significant) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size() || !isDigit(s[i])) return false;
  const std::size_t int_start = i;
  if (s[i] == '0') {
    ++i;
  } else {
    while (i < s.size() && isDigit(s[i])) ++i;
  }
  std::string digits(s.substr(int_start, i - int_start));
  if (i < s.size()) {
    if (s[i] != '.') return false;
    ++i;
    const std::size_t frac_start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i != s.size() || i == frac_start || s.back() == '0') return false;
    digits += s.substr(frac_start);
  }
  std::size_t first = digits.find_first_not_of('0');
  significant = first == std::string::npos ? 0 : digits.size() - first;
  return true;
}

// N -> plain JSON number when that is exact for every JSON reader (see the header), else nullopt.
std::optional<Json> safeJsonNumber(const std::string& text) {
  std::size_t significant = 0;
  if (!isCanonicalDecimal(text, significant) || significant > 15) return std::nullopt;
  Json candidate;
  if (text.find('.') == std::string::npos) {
    // At most 15 digits: fits an int64 and is below 2^53.
    candidate = static_cast<std::int64_t>(std::strtoll(text.c_str(), nullptr, 10));
  } else {
    candidate = std::strtod(text.c_str(), nullptr);
  }
  if (candidate.dump() != text) return std::nullopt;
  return candidate;
}

bool setOf(const Json& v, bool (*valid)(std::string_view)) {
  if (!v.is_array()) return false;
  for (const auto& e : v) {
    if (!e.is_string()) return false;
    if (valid != nullptr && !valid(e.get_ref<const std::string&>())) return false;
  }
  return true;
}

Result<Json> toAgent(const Json& wire, int depth);

Result<Json> mapToAgent(const Json& m, int depth) {
  Json out = Json::object();
  for (const auto& [k, v] : m.items()) {
    auto c = toAgent(v, depth + 1);
    if (!c) return c;
    out[k] = std::move(*c);
  }
  // A one-key map whose key starts with '$' would read like a wrapper: escape it.
  if (out.size() == 1 && !out.begin().key().empty() && out.begin().key()[0] == '$') {
    return Json{{"$map", std::move(out)}};
  }
  return out;
}

Result<Json> toAgent(const Json& wire, int depth) {
  if (depth > kMaxNesting) return bad("nested too deeply");
  if (!wire.is_object() || wire.size() != 1)
    return bad("an attribute value must be an object with exactly one type key");
  const std::string& type = wire.begin().key();
  const Json& v = wire.begin().value();
  if (type == "S") {
    if (!v.is_string()) return bad("S must be a string");
    return v;
  }
  if (type == "N") {
    if (!v.is_string() || !isDynamoNumber(v.get_ref<const std::string&>()))
      return bad("N must be a number string");
    if (auto n = safeJsonNumber(v.get<std::string>())) return *n;
    return Json{{"$number", v}};
  }
  if (type == "B") {
    if (!v.is_string() || !isBase64(v.get_ref<const std::string&>()))
      return bad("B must be base64");
    return Json{{"$binary", v}};
  }
  if (type == "BOOL") {
    if (!v.is_boolean()) return bad("BOOL must be a boolean");
    return v;
  }
  if (type == "NULL") {
    if (!v.is_boolean() || !v.get<bool>()) return bad("NULL must be true");
    return Json(nullptr);
  }
  if (type == "M") {
    if (!v.is_object()) return bad("M must be an object");
    return mapToAgent(v, depth);
  }
  if (type == "L") {
    if (!v.is_array()) return bad("L must be an array");
    Json out = Json::array();
    for (const auto& e : v) {
      auto c = toAgent(e, depth + 1);
      if (!c) return c;
      out.push_back(std::move(*c));
    }
    return out;
  }
  if (type == "SS") {
    if (!setOf(v, nullptr)) return bad("SS must be an array of strings");
    return Json{{"$stringSet", v}};
  }
  if (type == "NS") {
    if (!setOf(v, &isDynamoNumber)) return bad("NS must be an array of number strings");
    return Json{{"$numberSet", v}};
  }
  if (type == "BS") {
    if (!setOf(v, &isBase64)) return bad("BS must be an array of base64 strings");
    return Json{{"$binarySet", v}};
  }
  return bad("unknown attribute type");
}

Error badAgent(const std::string& what) {
  return makeError(Code::InvalidArgument, "invalid value: " + what);
}

Result<Json> toWire(const Json& agent, int depth);

Result<Json> mapToWire(const Json& m, int depth) {
  Json out = Json::object();
  for (const auto& [k, v] : m.items()) {
    auto c = toWire(v, depth + 1);
    if (!c) return c;
    out[k] = std::move(*c);
  }
  return Json{{"M", std::move(out)}};
}

Result<Json> toWire(const Json& agent, int depth) {
  if (depth > kMaxNesting) return badAgent("nested too deeply");
  switch (agent.type()) {
    case Json::value_t::null: return Json{{"NULL", true}};
    case Json::value_t::boolean: return Json{{"BOOL", agent}};
    case Json::value_t::string: return Json{{"S", agent}};
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: {
      std::string text = agent.dump();
      if (!isDynamoNumber(text)) return badAgent("number out of DynamoDB's range");
      return Json{{"N", text}};
    }
    case Json::value_t::array: {
      Json out = Json::array();
      for (const auto& e : agent) {
        auto c = toWire(e, depth + 1);
        if (!c) return c;
        out.push_back(std::move(*c));
      }
      return Json{{"L", std::move(out)}};
    }
    case Json::value_t::object: {
      if (agent.size() == 1 && !agent.begin().key().empty() && agent.begin().key()[0] == '$') {
        const std::string& w = agent.begin().key();
        const Json& v = agent.begin().value();
        if (w == "$map") {
          if (!v.is_object()) return badAgent("$map must wrap an object");
          return mapToWire(v, depth);
        }
        if (w == "$number") {
          if (!v.is_string() || !isDynamoNumber(v.get_ref<const std::string&>()))
            return badAgent("$number must be a number string");
          return Json{{"N", v}};
        }
        if (w == "$binary") {
          if (!v.is_string() || !isBase64(v.get_ref<const std::string&>()))
            return badAgent("$binary must be base64");
          return Json{{"B", v}};
        }
        if (w == "$stringSet") {
          if (!setOf(v, nullptr)) return badAgent("$stringSet must be an array of strings");
          return Json{{"SS", v}};
        }
        if (w == "$numberSet") {
          if (!setOf(v, &isDynamoNumber))
            return badAgent("$numberSet must be an array of number strings");
          return Json{{"NS", v}};
        }
        if (w == "$binarySet") {
          if (!setOf(v, &isBase64))
            return badAgent("$binarySet must be an array of base64 strings");
          return Json{{"BS", v}};
        }
        return badAgent("unknown $ wrapper (wrap a map with one $-key as {\"$map\": {...}})");
      }
      return mapToWire(agent, depth);
    }
    default: return badAgent("unsupported JSON value");
  }
}

}  // namespace

bool isDynamoNumber(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  std::size_t i = 0;
  if (s[i] == '-') ++i;
  std::string digits;
  std::size_t int_len = 0;
  while (i < s.size() && isDigit(s[i])) digits += s[i++];
  int_len = digits.size();
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && isDigit(s[i])) digits += s[i++];
  }
  if (digits.empty()) return false;
  long exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    const std::size_t start = i;
    while (i < s.size() && isDigit(s[i])) {
      if (i - start >= 6) return false;  // far beyond the range anyway
      exponent = exponent * 10 + (s[i++] - '0');
    }
    if (i == start) return false;
    if (negative) exponent = -exponent;
  }
  if (i != s.size()) return false;
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return true;  // zero
  const std::size_t last = digits.find_last_not_of('0');
  if (last - first + 1 > 38) return false;
  // Decimal exponent of the most significant digit.
  const long adjusted = static_cast<long>(int_len) - static_cast<long>(first) - 1 + exponent;
  return adjusted >= -130 && adjusted <= 125;
}

bool isBase64(std::string_view s) {
  if (s.size() % 4 != 0) return false;
  std::size_t pad = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || isDigit(c) || c == '+' || c == '/';
    if (c == '=') {
      if (i + 2 < s.size()) return false;  // padding only in the last two positions
      ++pad;
    } else if (!alpha || pad > 0) {
      return false;
    }
  }
  return pad <= 2;
}

Result<Json> attributeToJson(const Json& wire) {
  return toAgent(wire, 0);
}

Result<Json> itemToJson(const Json& wire_item) {
  if (!wire_item.is_object()) return bad("an item must be an object");
  Json out = Json::object();
  for (const auto& [k, v] : wire_item.items()) {
    auto c = toAgent(v, 1);
    if (!c) return c;
    out[k] = std::move(*c);
  }
  return out;
}

Result<Json> jsonToAttribute(const Json& agent) {
  return toWire(agent, 0);
}

Result<Json> jsonToItem(const Json& agent_item) {
  if (!agent_item.is_object()) return badAgent("an item must be an object");
  Json out = Json::object();
  for (const auto& [k, v] : agent_item.items()) {
    auto c = toWire(v, 1);
    if (!c) return c;
    out[k] = std::move(*c);
  }
  return out;
}

}  // namespace mcpdb::dynamodb
