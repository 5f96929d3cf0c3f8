#include "engines/mongodb/bson_json.hpp"

#include <openssl/evp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace mcpdb::mongodb {

namespace {

constexpr std::int64_t kMaxSafeInteger = 9007199254740992LL;  // 2^53

std::string hex2(unsigned v) {
  char buf[3];
  std::snprintf(buf, sizeof buf, "%02x", v & 0xffU);
  return buf;
}

Json utf8OrTagged(const char* s, std::size_t len) {
  if (bson_utf8_validate(s, len, /*allow_null=*/true)) return Json(std::string(s, len));
  return Json{{"$invalidUtf8", base64Encode(reinterpret_cast<const std::uint8_t*>(s), len)}};
}

std::string keyString(const char* key, std::size_t len) {
  if (bson_utf8_validate(key, len, false)) return std::string(key, len);
  return "$invalidUtf8:" + base64Encode(reinterpret_cast<const std::uint8_t*>(key), len);
}

Json convertDocument(bson_iter_t& it, bool is_array, int depth);

Json convertValue(const bson_iter_t& iter, int depth) {
  switch (bson_iter_type(&iter)) {
    case BSON_TYPE_DOUBLE: {
      const double d = bson_iter_double(&iter);
      if (std::isnan(d)) return Json{{"$numberDouble", "NaN"}};
      if (std::isinf(d)) return Json{{"$numberDouble", d > 0 ? "Infinity" : "-Infinity"}};
      return Json(d);
    }
    case BSON_TYPE_UTF8: {
      uint32_t len = 0;
      const char* s = bson_iter_utf8(&iter, &len);
      return utf8OrTagged(s, len);
    }
    case BSON_TYPE_DOCUMENT:
    case BSON_TYPE_ARRAY: {
      const bool is_array = bson_iter_type(&iter) == BSON_TYPE_ARRAY;
      if (depth >= kMaxDepth)
        return Json{{"$truncated", "nesting deeper than " + std::to_string(kMaxDepth) + " levels"}};
      bson_iter_t child;
      if (!bson_iter_recurse(&iter, &child))
        return Json{{"$invalidBson", "unreadable nested document"}};
      return convertDocument(child, is_array, depth + 1);
    }
    case BSON_TYPE_BINARY: {
      bson_subtype_t subtype = BSON_SUBTYPE_BINARY;
      uint32_t len = 0;
      const uint8_t* data = nullptr;
      bson_iter_binary(&iter, &subtype, &len, &data);
      if (subtype == BSON_SUBTYPE_UUID && len == 16 && data != nullptr) {
        std::string u;
        for (uint32_t i = 0; i < 16; ++i) {
          if (i == 4 || i == 6 || i == 8 || i == 10) u += '-';
          u += hex2(data[i]);
        }
        return Json{{"$uuid", u}};
      }
      return Json{{"$binary",
                   {{"base64", base64Encode(data, data == nullptr ? 0 : len)},
                    {"subType", hex2(subtype)}}}};
    }
    case BSON_TYPE_UNDEFINED: return Json{{"$undefined", true}};
    case BSON_TYPE_OID: {
      char hex[25];
      bson_oid_to_string(bson_iter_oid(&iter), hex);
      return Json{{"$oid", std::string(hex)}};
    }
    case BSON_TYPE_BOOL: return Json(bson_iter_bool(&iter));
    case BSON_TYPE_DATE_TIME: {
      const std::int64_t ms = bson_iter_date_time(&iter);
      std::string iso = isoDateFromMillis(ms);
      if (!iso.empty()) return Json{{"$date", iso}};
      return Json{{"$date", {{"$numberLong", std::to_string(ms)}}}};
    }
    case BSON_TYPE_NULL: return Json(nullptr);
    case BSON_TYPE_REGEX: {
      const char* options = nullptr;
      const char* pattern = bson_iter_regex(&iter, &options);
      return Json{{"$regularExpression",
                   {{"pattern", utf8OrTagged(pattern, pattern ? std::strlen(pattern) : 0)},
                    {"options", utf8OrTagged(options, options ? std::strlen(options) : 0)}}}};
    }
    case BSON_TYPE_DBPOINTER: {
      uint32_t len = 0;
      const char* coll = nullptr;
      const bson_oid_t* oid = nullptr;
      bson_iter_dbpointer(&iter, &len, &coll, &oid);
      char hex[25] = {0};
      if (oid != nullptr) bson_oid_to_string(oid, hex);
      return Json{
          {"$dbPointer",
           {{"$ref", utf8OrTagged(coll, coll ? len : 0)}, {"$id", {{"$oid", std::string(hex)}}}}}};
    }
    case BSON_TYPE_CODE: {
      uint32_t len = 0;
      const char* code = bson_iter_code(&iter, &len);
      return Json{{"$code", utf8OrTagged(code, code ? len : 0)}};
    }
    case BSON_TYPE_SYMBOL: {
      uint32_t len = 0;
      const char* sym = bson_iter_symbol(&iter, &len);
      return Json{{"$symbol", utf8OrTagged(sym, sym ? len : 0)}};
    }
    case BSON_TYPE_CODEWSCOPE: {
      uint32_t len = 0;
      uint32_t scope_len = 0;
      const uint8_t* scope = nullptr;
      const char* code = bson_iter_codewscope(&iter, &len, &scope_len, &scope);
      Json out{{"$code", utf8OrTagged(code, code ? len : 0)}};
      bson_t scope_doc;
      bson_iter_t sit;
      if (depth >= kMaxDepth) {
        out["$scope"] =
            Json{{"$truncated", "nesting deeper than " + std::to_string(kMaxDepth) + " levels"}};
      } else if (scope != nullptr && bson_init_static(&scope_doc, scope, scope_len) &&
                 bson_iter_init(&sit, &scope_doc)) {
        out["$scope"] = convertDocument(sit, false, depth + 1);
      } else {
        out["$scope"] = Json{{"$invalidBson", "unreadable scope"}};
      }
      return out;
    }
    case BSON_TYPE_INT32: return Json(bson_iter_int32(&iter));
    case BSON_TYPE_TIMESTAMP: {
      uint32_t t = 0;
      uint32_t i = 0;
      bson_iter_timestamp(&iter, &t, &i);
      return Json{{"$timestamp", {{"t", t}, {"i", i}}}};
    }
    case BSON_TYPE_INT64: {
      const std::int64_t v = bson_iter_int64(&iter);
      if (v >= -kMaxSafeInteger && v <= kMaxSafeInteger) return Json(v);
      return Json{{"$numberLong", std::to_string(v)}};
    }
    case BSON_TYPE_DECIMAL128: {
      bson_decimal128_t dec;
      bson_iter_decimal128(&iter, &dec);
      char buf[BSON_DECIMAL128_STRING];
      bson_decimal128_to_string(&dec, buf);
      return Json{{"$numberDecimal", std::string(buf)}};
    }
    case BSON_TYPE_MAXKEY: return Json{{"$maxKey", 1}};
    case BSON_TYPE_MINKEY: return Json{{"$minKey", 1}};
    case BSON_TYPE_EOD:
    default: return Json{{"$unsupportedBsonType", static_cast<int>(bson_iter_type(&iter))}};
  }
}

Json convertDocument(bson_iter_t& it, bool is_array, int depth) {
  if (is_array) {
    Json arr = Json::array();
    while (bson_iter_next(&it)) arr.push_back(convertValue(it, depth));
    return arr;
  }
  Json obj = Json::object();
  bool dollar_key = false;
  while (bson_iter_next(&it)) {
    std::string key = keyString(bson_iter_key(&it), bson_iter_key_len(&it));
    if (!key.empty() && key.front() == '$') dollar_key = true;
    if (obj.contains(key)) {
      // Duplicate field names are legal BSON; keep every value under a distinct key.
      for (int n = 2;; ++n) {
        std::string alt = key + " (" + std::to_string(n) + ")";
        if (!obj.contains(alt)) {
          key = std::move(alt);
          break;
        }
      }
    }
    obj[key] = convertValue(it, depth);
  }
  if (dollar_key) return Json{{"$document", std::move(obj)}};
  return obj;
}

}  // namespace

std::string base64Encode(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return {};
  std::string out(4 * ((size + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  return out;
}

std::string isoDateFromMillis(std::int64_t ms) {
  using namespace std::chrono;
  // Years 0-9999 only: ISO 8601 without an expanded year form.
  constexpr std::int64_t kMin = -62167219200000LL;  // 0000-01-01T00:00:00Z
  constexpr std::int64_t kMax = 253402300799999LL;  // 9999-12-31T23:59:59.999Z
  if (ms < kMin || ms > kMax) return {};
  const sys_time<milliseconds> tp{milliseconds(ms)};
  const auto day = floor<days>(tp);
  const year_month_day ymd{day};
  const auto in_day = tp - day;
  const auto h = duration_cast<hours>(in_day);
  const auto m = duration_cast<minutes>(in_day - h);
  const auto s = duration_cast<seconds>(in_day - h - m);
  const auto frac = in_day - h - m - s;
  // Sized for the widest values the format could print (g++ -O3 checks -Wformat-truncation
  // against the int ranges, not the range check above).
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(h.count()),
                static_cast<int>(m.count()), static_cast<int>(s.count()),
                static_cast<int>(frac.count()));
  return buf;
}

Json bsonValueToJson(const bson_iter_t& iter) {
  return convertValue(iter, 0);
}

Json bsonToJson(const bson_t& doc) {
  bson_iter_t it;
  if (!bson_iter_init(&it, &doc)) return Json{{"$invalidBson", "unreadable document"}};
  return convertDocument(it, false, 0);
}

Result<Json> bsonBytesToJson(const std::uint8_t* data, std::size_t size) {
  bson_t doc;
  if (data == nullptr || !bson_init_static(&doc, data, size)) {
    return makeError(Code::InvalidArgument, "not a BSON document (bad length)");
  }
  std::size_t offset = 0;
  if (!bson_validate(&doc, BSON_VALIDATE_NONE, &offset)) {
    return makeError(Code::InvalidArgument,
                     "not a valid BSON document (offset " + std::to_string(offset) + ")");
  }
  return bsonToJson(doc);
}

}  // namespace mcpdb::mongodb
