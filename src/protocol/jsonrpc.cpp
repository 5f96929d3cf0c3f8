#include "protocol/jsonrpc.hpp"

#include "common/json_text.hpp"

namespace mcpdb::protocol {

std::size_t nestingDepth(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of the `\uXXXX` escape starting at text[i] (the backslash), or -1.
int escapedUnit(std::string_view text, std::size_t i) {
  if (i + 6 > text.size() || text[i] != '\\' || text[i + 1] != 'u') return -1;
  int unit = 0;
  for (std::size_t k = i + 2; k < i + 6; ++k) {
    const int h = hexValue(text[k]);
    if (h < 0) return -1;
    unit = unit * 16 + h;
  }
  return unit;
}

bool isHighSurrogate(int u) {
  return u >= 0xD800 && u <= 0xDBFF;
}
bool isLowSurrogate(int u) {
  return u >= 0xDC00 && u <= 0xDFFF;
}

}  // namespace

std::optional<std::string> replaceLoneSurrogates(std::string_view text) {
  // Cheap exit for the common message: no `\u` escape at all.
  if (text.find("\\u") == std::string_view::npos) return std::nullopt;
  std::optional<std::string> out;
  bool in_string = false;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (!in_string) {
      if (c == '"') in_string = true;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = false;
      ++i;
      continue;
    }
    if (c != '\\') {
      ++i;
      continue;
    }
    const int unit = escapedUnit(text, i);
    if (unit < 0) {
      i += 2;  // a two-character escape (or a malformed one: the parser reports it)
      continue;
    }
    if (isHighSurrogate(unit) && isLowSurrogate(escapedUnit(text, i + 6))) {
      i += 12;  // a proper pair
      continue;
    }
    if (isHighSurrogate(unit) || isLowSurrogate(unit)) {
      if (!out) out.emplace(text);
      out->replace(i + 2, 4, "FFFD");
    }
    i += 6;
  }
  return out;
}

Parsed parseMessage(std::string_view text, const ParseLimits& limits) {
  Parsed out;
  if (text.size() > limits.max_bytes) {
    out.error_response = makeErrorResponse(
        nullptr, rpc::kInvalidRequest,
        "message exceeds the " + std::to_string(limits.max_bytes) + "-byte limit");
    return out;
  }
  if (nestingDepth(text, limits.max_depth) > limits.max_depth) {
    out.error_response = makeErrorResponse(
        nullptr, rpc::kInvalidRequest,
        "message nesting exceeds the depth limit of " + std::to_string(limits.max_depth));
    return out;
  }
  const std::optional<std::string> repaired = replaceLoneSurrogates(text);
  Json j = repaired ? Json::parse(*repaired, nullptr, /*allow_exceptions=*/false)
                    : Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    out.error_response =
        makeErrorResponse(nullptr, rpc::kParseError, "parse error: not valid JSON");
    return out;
  }
  out.message = std::move(j);
  return out;
}

Json makeErrorResponse(const Json& id, int code, std::string_view message) {
  return Json{{"jsonrpc", "2.0"},
              {"id", id},
              {"error", {{"code", code}, {"message", std::string(message)}}}};
}

Json makeResultResponse(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

Json makeNotification(std::string_view method, Json params) {
  Json n{{"jsonrpc", "2.0"}, {"method", std::string(method)}};
  if (!params.is_null()) n["params"] = std::move(params);
  return n;
}

std::string serialize(const Json& message) {
  return jsonText(message);  // the library's text, written faster (common/json_text.hpp)
}

std::string serializedResultResponse(const Json& id, std::string_view result_json) {
  // Keys in the order serialize() writes them (sorted).
  std::string out;
  out.reserve(result_json.size() + 48);
  out.append(R"({"id":)");
  out.append(serialize(id));
  out.append(R"(,"jsonrpc":"2.0","result":)");
  out.append(result_json);
  out.push_back('}');
  return out;
}

}  // namespace mcpdb::protocol
