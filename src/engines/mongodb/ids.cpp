#include "engines/mongodb/ids.hpp"

#include <cctype>
#include <charconv>
#include <cstdint>

#include "common/json_integer.hpp"

namespace mcpdb::mongodb {

namespace {
constexpr std::size_t kMaxStringId = 1024;
}

Result<TypedId> convertId(const Json& arg, IdType type) {
  switch (type) {
    case IdType::ObjectId: {
      if (!arg.is_string())
        return makeError(Code::InvalidArgument,
                         "arguments.id: must be a 24-character hex ObjectId string");
      const auto& s = arg.get_ref<const std::string&>();
      if (s.size() != 24 || !bson_oid_is_valid(s.data(), s.size())) {
        return makeError(Code::InvalidArgument,
                         "arguments.id: must be a 24-character hex ObjectId string");
      }
      TypedId id;
      bson_oid_t oid;
      bson_oid_init_from_string(&oid, s.c_str());
      id.value = oid;
      return id;
    }
    case IdType::String: {
      if (!arg.is_string())
        return makeError(Code::InvalidArgument, "arguments.id: must be a string for this target");
      const auto& s = arg.get_ref<const std::string&>();
      if (s.size() > kMaxStringId) {
        return makeError(Code::InvalidArgument, "arguments.id: must be at most 1024 bytes long");
      }
      // Stored as a plain BSON string: "$where" or "{\"$ne\": null}" match only that exact text.
      return TypedId{s};
    }
    case IdType::Int: {
      // A JSON integer or an integral float such as 7.0, as the schema reads it.
      if (auto n = integerValue(arg)) return TypedId{*n};
      if (arg.is_number_unsigned()) {
        return makeError(Code::InvalidArgument, "arguments.id: must be a 64-bit signed integer");
      }
      if (arg.is_string()) {
        const auto& s = arg.get_ref<const std::string&>();
        std::int64_t v = 0;
        const char* end = s.data() + s.size();
        auto [ptr, ec] = std::from_chars(s.data(), end, v);
        if (!s.empty() && ec == std::errc() && ptr == end) return TypedId{v};
      }
      return makeError(Code::InvalidArgument, "arguments.id: must be an integer for this target");
    }
  }
  return makeError(Code::Internal, "unknown id type");
}

bool appendTypedId(bson_t* doc, const char* key, const TypedId& id) {
  if (const auto* oid = std::get_if<bson_oid_t>(&id.value)) return BSON_APPEND_OID(doc, key, oid);
  if (const auto* s = std::get_if<std::string>(&id.value)) {
    return bson_append_utf8(doc, key, -1, s->data(), static_cast<int>(s->size()));
  }
  return BSON_APPEND_INT64(doc, key, std::get<std::int64_t>(id.value));
}

}  // namespace mcpdb::mongodb
