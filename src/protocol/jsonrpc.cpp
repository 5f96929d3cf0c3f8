#include "protocol/jsonrpc.hpp"

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
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
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
  return message.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace mcpdb::protocol
