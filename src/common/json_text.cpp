#include "common/json_text.hpp"

#include <charconv>
#include <memory>
#include <string_view>

#include "common/json_escape.hpp"

namespace mcpdb {
namespace {

// Counts the bytes the library's serializer writes instead of storing them.
struct CountingOutput : nlohmann::detail::output_adapter_protocol<char> {
  std::size_t bytes = 0;
  void write_character(char /*c*/) override { ++bytes; }
  void write_characters(const char* /*s*/, std::size_t length) override { bytes += length; }
};

std::string libraryText(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::size_t librarySize(const Json& v) {
  thread_local const auto out = std::make_shared<CountingOutput>();
  thread_local nlohmann::detail::serializer<Json> serializer(out, ' ',
                                                             Json::error_handler_t::replace);
  out->bytes = 0;
  serializer.dump(v, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
  return out->bytes;
}

// Where the walk's text goes: appended to a string, or only counted.
struct Writer {
  std::string& out;
  void raw(std::string_view s) { out.append(s); }
  void raw(char c) { out.push_back(c); }
  void asciiString(std::string_view s) {
    out.push_back('"');
    appendJsonEscaped(out, s);
    out.push_back('"');
  }
  void library(const Json& v) { out.append(libraryText(v)); }
};

struct Counter {
  std::size_t n = 0;
  void raw(std::string_view s) { n += s.size(); }
  void raw(char /*c*/) { ++n; }
  void asciiString(std::string_view s) { n += s.size() + jsonEscapeGrowth(s) + 2; }
  void library(const Json& v) { n += librarySize(v); }
};

template <class Sink>
void string(Sink& sink, std::string_view s, const Json* node) {
  if (isAscii(s)) return sink.asciiString(s);
  sink.library(node != nullptr ? *node : Json(std::string(s)));
}

template <class Sink>
void walk(Sink& sink, const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return sink.raw("null");
    case Json::value_t::boolean: return sink.raw(v.get<bool>() ? "true" : "false");
    case Json::value_t::string: return string(sink, v.get_ref<const std::string&>(), &v);
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: {
      char digits[24];
      const auto r = v.is_number_unsigned()
                         ? std::to_chars(digits, digits + sizeof digits, v.get<std::uint64_t>())
                         : std::to_chars(digits, digits + sizeof digits, v.get<std::int64_t>());
      return sink.raw(std::string_view(digits, static_cast<std::size_t>(r.ptr - digits)));
    }
    case Json::value_t::array: {
      sink.raw('[');
      bool first = true;
      for (const auto& e : v) {
        if (!first) sink.raw(',');
        first = false;
        walk(sink, e);
      }
      return sink.raw(']');
    }
    case Json::value_t::object: {
      sink.raw('{');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) sink.raw(',');
        first = false;
        string(sink, it.key(), nullptr);
        sink.raw(':');
        walk(sink, it.value());
      }
      return sink.raw('}');
    }
    default: return sink.library(v);  // floating point, binary, discarded
  }
}

}  // namespace

void appendJsonText(std::string& out, const Json& v) {
  Writer w{out};
  walk(w, v);
}

std::string jsonText(const Json& v) {
  std::string out;
  appendJsonText(out, v);
  return out;
}

void appendJsonString(std::string& out, std::string_view s) {
  Writer w{out};
  string(w, s, nullptr);
}

std::size_t jsonTextSize(const Json& v) {
  Counter c;
  walk(c, v);
  return c.n;
}

}  // namespace mcpdb
