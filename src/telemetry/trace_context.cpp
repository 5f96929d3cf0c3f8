#include "telemetry/trace_context.hpp"
#include "common/hex.hpp"

#include <algorithm>
#include <vector>

namespace mcpdb::telemetry {
namespace {

// A lowercase hex digit's value; -1 for anything else (uppercase is refused, as version 00 says).
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Reads 2 * out.size() lowercase hex digits of `text` into `out`.
bool readHex(std::string_view text, std::span<std::uint8_t> out) {
  if (text.size() != out.size() * 2) return false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = hexValue(text[2 * i]);
    const int lo = hexValue(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

bool lcalpha(char c) {
  return c >= 'a' && c <= 'z';
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}
// The characters a key may hold after its first.
bool keyChar(char c) {
  return lcalpha(c) || digit(c) || c == '_' || c == '-' || c == '*' || c == '/';
}

// simple-key = lcalpha 0*255(keychar); multi-tenant-key = tenant-id "@" system-id, tenant-id =
// (lcalpha / DIGIT) 0*240(keychar), system-id = lcalpha 0*13(keychar).
bool validKey(std::string_view key) {
  const auto at = key.find('@');
  if (at == std::string_view::npos) {
    if (key.empty() || key.size() > 256 || !lcalpha(key[0])) return false;
    return std::all_of(key.begin() + 1, key.end(), keyChar);
  }
  const std::string_view tenant = key.substr(0, at);
  const std::string_view system = key.substr(at + 1);
  if (tenant.empty() || tenant.size() > 241 || !(lcalpha(tenant[0]) || digit(tenant[0])))
    return false;
  if (system.empty() || system.size() > 14 || !lcalpha(system[0])) return false;
  return std::all_of(tenant.begin() + 1, tenant.end(), keyChar) &&
         std::all_of(system.begin() + 1, system.end(), keyChar);
}

// value = 0*255(chr) nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E; chr = %x20 / nblk-chr.
bool validValue(std::string_view value) {
  if (value.empty() || value.size() > 256) return false;
  auto nblk = [](char c) { return c >= 0x21 && c <= 0x7e && c != ',' && c != '='; };
  if (!nblk(value.back())) return false;
  return std::all_of(value.begin(), value.end(), [&](char c) { return c == ' ' || nblk(c); });
}

std::string_view trimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool allZero(std::span<const std::uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

std::optional<SpanContext> parseTraceparent(std::string_view text) {
  // Version 00 only, and nothing after it: a future version's longer form is not guessed at.
  if (text.size() != kTraceparentBytes) return std::nullopt;
  if (text.substr(0, 3) != "00-" || text[35] != '-' || text[52] != '-') return std::nullopt;
  SpanContext ctx;
  std::array<std::uint8_t, 1> flags{};
  if (!readHex(text.substr(3, 32), ctx.trace_id) || !readHex(text.substr(36, 16), ctx.span_id) ||
      !readHex(text.substr(53, 2), flags))
    return std::nullopt;
  if (allZero(ctx.trace_id) || allZero(ctx.span_id)) return std::nullopt;
  ctx.flags = flags[0];
  return ctx;
}

std::optional<std::string> parseTracestate(std::string_view text) {
  if (text.size() > kMaxTracestateBytes) return std::nullopt;
  std::vector<std::string_view> keys;
  std::string out;
  std::size_t members = 0;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view member = trimOws(text.substr(0, comma));
    if (!member.empty()) {
      const auto eq = member.find('=');
      if (eq == std::string_view::npos) return std::nullopt;
      const std::string_view key = member.substr(0, eq);
      const std::string_view value = member.substr(eq + 1);
      if (!validKey(key) || !validValue(value)) return std::nullopt;
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) return std::nullopt;
      if (++members > kMaxTracestateMembers) return std::nullopt;
      keys.push_back(key);
      if (!out.empty()) out += ',';
      out.append(member);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<SpanContext> extractContext(std::string_view traceparent,
                                          std::string_view tracestate) {
  auto ctx = parseTraceparent(traceparent);
  if (!ctx) return std::nullopt;
  if (!tracestate.empty()) {
    if (auto state = parseTracestate(tracestate)) ctx->trace_state = std::move(*state);
  }
  return ctx;
}

std::string hex(std::span<const std::uint8_t> bytes) {
  return lowerHex(bytes);
}

std::string formatTraceparent(const TraceId& trace_id, const SpanId& span_id, std::uint8_t flags) {
  std::string out = "00-";
  out += hex(trace_id);
  out += '-';
  out += hex(span_id);
  out += '-';
  out += hex(std::span<const std::uint8_t>(&flags, 1));
  return out;
}

}  // namespace mcpdb::telemetry
