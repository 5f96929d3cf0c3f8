// A minimal scanner for the top level of a JSON-RPC response: finds "id" (integer), whether an
// "error" member is present, whether result.isError is true, and result.resultType. Hand-written
// (no Debian library does a top-level-only scan) so the load client spends nanoseconds, not a full
// parse, per response: the client must not be what the benchmark measures.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mcpdb::bench {

struct ResponseInfo {
  std::optional<std::int64_t> id;  // absent for notifications or a non-integer id
  bool has_result = false;
  bool rpc_error = false;        // a JSON-RPC "error" member
  bool tool_error = false;       // "result": {"isError": true}
  bool is_request = false;       // has "method": a notification or a server-to-client request
  std::string_view method;       // the method's raw JSON string (with quotes), when is_request
  std::string_view raw_id;       // the id's raw JSON text, whatever its type
  std::string_view result_type;  // result.resultType's raw JSON text (2026-07-28), when present
};

namespace detail {

inline std::size_t skipWs(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// Index just past the string starting at s[i] == '"', or npos.
inline std::size_t skipString(std::string_view s, std::size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Index just past the value starting at s[i], or npos.
inline std::size_t skipValue(std::string_view s, std::size_t i) {
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return skipString(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = skipString(s, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n')
    ++i;
  return i;
}

// Calls f(key, value_text) for each member of the object s (which starts with '{').
template <typename F>
bool forEachMember(std::string_view s, F&& f) {
  std::size_t i = skipWs(s, 0);
  if (i >= s.size() || s[i] != '{') return false;
  i = skipWs(s, i + 1);
  if (i < s.size() && s[i] == '}') return true;
  while (i < s.size()) {
    if (s[i] != '"') return false;
    const std::size_t kend = skipString(s, i);
    if (kend == std::string_view::npos) return false;
    const std::string_view key = s.substr(i + 1, kend - i - 2);
    i = skipWs(s, kend);
    if (i >= s.size() || s[i] != ':') return false;
    i = skipWs(s, i + 1);
    const std::size_t vend = skipValue(s, i);
    if (vend == std::string_view::npos) return false;
    f(key, s.substr(i, vend - i));
    i = skipWs(s, vend);
    if (i < s.size() && s[i] == ',') {
      i = skipWs(s, i + 1);
      continue;
    }
    return i < s.size() && s[i] == '}';
  }
  return false;
}

}  // namespace detail

inline ResponseInfo scanResponse(std::string_view line) {
  ResponseInfo info;
  detail::forEachMember(line, [&](std::string_view key, std::string_view value) {
    if (key == "method") {
      info.is_request = true;
      info.method = value;
    } else if (key == "id") {
      info.raw_id = value;
      std::int64_t v = 0;
      bool any = false;
      for (char c : value) {
        if (c < '0' || c > '9') {
          any = false;
          break;
        }
        v = v * 10 + (c - '0');
        any = true;
      }
      if (any) info.id = v;
    } else if (key == "error") {
      info.rpc_error = true;
    } else if (key == "result") {
      info.has_result = true;
      detail::forEachMember(value, [&](std::string_view k2, std::string_view v2) {
        if (k2 == "isError" && v2 == "true") info.tool_error = true;
        if (k2 == "resultType") info.result_type = v2;
      });
    }
  });
  return info;
}

}  // namespace mcpdb::bench
