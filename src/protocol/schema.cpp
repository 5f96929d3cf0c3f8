#include "protocol/schema.hpp"

#include <cmath>
#include <set>
#include <string_view>

#include "common/json_integer.hpp"
#include "protocol/pattern.hpp"

namespace mcpdb::protocol {
namespace {

std::size_t codePoints(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0U) != 0x80U) ++n;
  }
  return n;
}

bool isDigits(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return !s.empty();
}

bool isDate(std::string_view s) {
  // YYYY-MM-DD with plausible month/day ranges; the database does the calendar check.
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  if (!isDigits(s.substr(0, 4)) || !isDigits(s.substr(5, 2)) || !isDigits(s.substr(8, 2)))
    return false;
  const int month = std::stoi(std::string(s.substr(5, 2)));
  const int day = std::stoi(std::string(s.substr(8, 2)));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

bool isDateTime(std::string_view s) {
  // RFC 3339: date 'T' hh:mm:ss[.frac](Z|+hh:mm|-hh:mm)
  if (s.size() < 20 || !isDate(s.substr(0, 10))) return false;
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return false;
  std::string_view t = s.substr(11);
  if (t.size() < 9 || t[2] != ':' || t[5] != ':') return false;
  if (!isDigits(t.substr(0, 2)) || !isDigits(t.substr(3, 2)) || !isDigits(t.substr(6, 2)))
    return false;
  if (std::stoi(std::string(t.substr(0, 2))) > 23 || std::stoi(std::string(t.substr(3, 2))) > 59 ||
      std::stoi(std::string(t.substr(6, 2))) > 60) {
    return false;
  }
  std::size_t i = 8;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const std::size_t start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == start) return false;
  }
  std::string_view zone = t.substr(i);
  if (zone == "Z" || zone == "z") return true;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' &&
         isDigits(zone.substr(1, 2)) && isDigits(zone.substr(4, 2));
}

bool isUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i] != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

bool typeMatches(const std::string& type, const Json& v) {
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "number") return v.is_number();
  if (type == "integer") return isIntegral(v);  // 1.0 is an integer (json_integer.hpp)
  return false;
}

// Schema values quoted in a message. Invalid UTF-8 is replaced, never thrown on: the schema comes
// from the config, and a message built while answering a call must not abort the process.
std::string safeDump(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Error invalid(const std::string& path, const std::string& what) {
  return makeError(Code::InvalidArgument, path + ": " + what);
}

const std::set<std::string, std::less<>>& supportedKeywords() {
  static const std::set<std::string, std::less<>> kKeywords = {"type",
                                                               "enum",
                                                               "const",
                                                               "minimum",
                                                               "maximum",
                                                               "exclusiveMinimum",
                                                               "exclusiveMaximum",
                                                               "minLength",
                                                               "maxLength",
                                                               "pattern",
                                                               "format",
                                                               "items",
                                                               "minItems",
                                                               "maxItems",
                                                               "properties",
                                                               "required",
                                                               "additionalProperties",
                                                               "description",
                                                               "title",
                                                               "default",
                                                               "examples",
                                                               "$schema"};
  return kKeywords;
}

}  // namespace

Status validateSchemaSubset(const Json& schema, const std::string& path) {
  if (!schema.is_object()) return invalid(path, "schema must be an object");
  for (const auto& [key, val] : schema.items()) {
    if (supportedKeywords().count(key) == 0)
      return invalid(path, "unsupported schema keyword '" + key + "'");
    if (key == "pattern") {
      // Compiled here, at load, into the shared cache every call reads.
      if (!val.is_string()) return invalid(path, "pattern must be a string");
      auto compiled = sharedPattern(val.get_ref<const std::string&>());
      if (!compiled) return invalid(path, compiled.error().message);
      // The text a pattern meets is bounded, so its worst-case matching time is (pattern.hpp).
      const auto max_length = schema.find("maxLength");
      if (max_length == schema.end() || !max_length->is_number_integer() ||
          max_length->get<std::int64_t>() < 0) {
        return invalid(path, "a pattern needs a maxLength (it bounds the matching time)");
      }
      if (auto st = checkPatternCost(**compiled, max_length->get<std::uint64_t>()); !st)
        return invalid(path, st.error().message);
    }
    if (key == "format") {
      const auto f = val.get<std::string>();
      if (f != "date" && f != "date-time" && f != "uuid")
        return invalid(path, "unsupported format '" + f + "'");
    }
  }
  if (schema.contains("properties")) {
    for (const auto& [name, sub] : schema["properties"].items()) {
      auto st = validateSchemaSubset(sub, (path + ".properties.").append(name));
      if (!st) return st;
    }
  }
  if (schema.contains("items")) {
    auto st = validateSchemaSubset(schema["items"], path + ".items");
    if (!st) return st;
  }
  return {};
}

Status validateJson(const Json& schema, const Json& value, const std::string& path) {
  if (auto it = schema.find("type"); it != schema.end()) {
    bool ok = false;
    std::string expected;
    if (it->is_string()) {
      expected = it->get<std::string>();
      ok = typeMatches(expected, value);
    } else if (it->is_array()) {
      for (const auto& t : *it) {
        expected += (expected.empty() ? "" : " or ") + t.get<std::string>();
        ok = ok || typeMatches(t.get<std::string>(), value);
      }
    }
    if (!ok)
      return invalid(path, "must be " +
                               (expected == "integer" || expected == "array" || expected == "object"
                                    ? std::string("an ")
                                    : std::string("a ")) +
                               expected);
  }
  if (auto it = schema.find("enum"); it != schema.end()) {
    bool found = false;
    for (const auto& e : *it) found = found || (e == value);
    if (!found) {
      std::string allowed;
      for (const auto& e : *it) allowed += (allowed.empty() ? "" : ", ") + safeDump(e);
      return invalid(path, "must be one of: " + allowed);
    }
  }
  if (auto it = schema.find("const"); it != schema.end() && *it != value) {
    return invalid(path, "must be " + safeDump(*it));
  }
  if (value.is_number()) {
    const double d = value.get<double>();
    if (auto it = schema.find("minimum"); it != schema.end() && d < it->get<double>()) {
      return invalid(path, "must be at least " + safeDump(*it));
    }
    if (auto it = schema.find("maximum"); it != schema.end() && d > it->get<double>()) {
      return invalid(path, "must be at most " + safeDump(*it));
    }
    if (auto it = schema.find("exclusiveMinimum"); it != schema.end() && d <= it->get<double>()) {
      return invalid(path, "must be greater than " + safeDump(*it));
    }
    if (auto it = schema.find("exclusiveMaximum"); it != schema.end() && d >= it->get<double>()) {
      return invalid(path, "must be less than " + safeDump(*it));
    }
  }
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    const std::size_t len = codePoints(s);
    if (auto it = schema.find("minLength"); it != schema.end() && len < it->get<std::size_t>()) {
      return invalid(path, "must be at least " + safeDump(*it) + " characters long");
    }
    if (auto it = schema.find("maxLength"); it != schema.end() && len > it->get<std::size_t>()) {
      return invalid(path, "must be at most " + safeDump(*it) + " characters long");
    }
    if (auto it = schema.find("format"); it != schema.end()) {
      const auto& f = it->get_ref<const std::string&>();
      if (f == "date" && !isDate(s)) return invalid(path, "must be a date (YYYY-MM-DD)");
      if (f == "date-time" && !isDateTime(s)) return invalid(path, "must be an RFC 3339 date-time");
      if (f == "uuid" && !isUuid(s)) return invalid(path, "must be a UUID");
    }
    if (auto it = schema.find("pattern"); it != schema.end()) {
      // RE2: linear in the argument, bounded memory (see pattern.hpp).
      const auto re = sharedPattern(it->get_ref<const std::string&>());
      if (!re) return invalid(path, "could not be checked against the pattern");
      if (!patternFinds(**re, s))
        return invalid(path, "does not match the required pattern " + safeDump(*it));
    }
  }
  if (value.is_array()) {
    if (auto it = schema.find("minItems");
        it != schema.end() && value.size() < it->get<std::size_t>()) {
      return invalid(path, "must have at least " + safeDump(*it) + " items");
    }
    if (auto it = schema.find("maxItems");
        it != schema.end() && value.size() > it->get<std::size_t>()) {
      return invalid(path, "must have at most " + safeDump(*it) + " items");
    }
    if (auto it = schema.find("items"); it != schema.end()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        auto st = validateJson(*it, value[i], path + "[" + std::to_string(i) + "]");
        if (!st) return st;
      }
    }
  }
  if (value.is_object()) {
    const Json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
    if (auto it = schema.find("required"); it != schema.end()) {
      for (const auto& r : *it) {
        if (!value.contains(r.get<std::string>())) {
          return invalid(path + "." + r.get<std::string>(), "is required");
        }
      }
    }
    const bool closed =
        schema.contains("additionalProperties") && schema["additionalProperties"] == false;
    for (const auto& [key, sub] : value.items()) {
      if (props != nullptr && props->contains(key)) {
        auto st = validateJson((*props)[key], sub, (path + ".").append(key));
        if (!st) return st;
      } else if (closed) {
        // The name is agent input: quote it bounded so a huge key cannot flood the message.
        std::string shown = key.size() > 64 ? key.substr(0, 64) + "..." : key;
        return invalid(path, "unknown field '" + shown + "'");
      }
    }
  }
  return {};
}

}  // namespace mcpdb::protocol
