#include "engines/dynamodb/requests.hpp"

#include "common/json_integer.hpp"
#include "engines/dynamodb/attribute_value.hpp"

namespace mcpdb::dynamodb {
namespace {

// DynamoDB key size limits (bytes): partition key 2048, sort key 1024.
constexpr std::size_t kMaxPartitionKeyBytes = 2048;
constexpr std::size_t kMaxSortKeyBytes = 1024;

std::string typeWord(KeyType t) {
  switch (t) {
    case KeyType::S: return "a string (S)";
    case KeyType::N: return "a number (N)";
    case KeyType::B: return "binary (B)";
  }
  return "";
}

Result<Json> typedKeyValue(const Target& target, const KeyAttribute& key, const Json& v,
                           std::string_view arg, std::size_t max_bytes) {
  const std::string where =
      "arguments." + std::string(arg) + ": target '" + target.name + "' has " + typeWord(key.type) +
      " " + std::string(arg == "partition_key" ? "partition" : "sort") + " key '" + key.name + "'";
  switch (key.type) {
    case KeyType::S:
      if (!v.is_string())
        return makeError(Code::InvalidArgument, where + ": pass the value as a JSON string");
      if (v.get_ref<const std::string&>().empty() ||
          v.get_ref<const std::string&>().size() > max_bytes) {
        return makeError(Code::InvalidArgument, where + ": the value must be 1 to " +
                                                    std::to_string(max_bytes) + " bytes");
      }
      return Json{{"S", v}};
    case KeyType::N: {
      std::string text;
      if (v.is_number_integer()) {
        text = v.dump();
      } else if (auto n = integerValue(v)) {
        text = std::to_string(*n);  // 1.0 is an integer, as the schema says (json_integer.hpp)
      } else if (v.is_string()) {
        text = v.get<std::string>();
      } else {
        return makeError(
            Code::InvalidArgument,
            where + ": pass the number as a string of digits, e.g. \"42\" or \"-1.5\"");
      }
      if (!isDynamoNumber(text)) {
        return makeError(Code::InvalidArgument,
                         where +
                             ": the value is not a DynamoDB number (digits, optional '-', '.', "
                             "exponent; at most 38 significant digits)");
      }
      return Json{{"N", text}};
    }
    case KeyType::B: {
      if (!v.is_string() || !isBase64(v.get_ref<const std::string&>()) ||
          v.get_ref<const std::string&>().empty()) {
        return makeError(Code::InvalidArgument,
                         where + ": pass the bytes as non-empty standard base64");
      }
      if (v.get_ref<const std::string&>().size() / 4 * 3 > max_bytes + 2) {
        return makeError(Code::InvalidArgument, where + ": the value is longer than " +
                                                    std::to_string(max_bytes) + " bytes");
      }
      return Json{{"B", v}};
    }
  }
  return makeError(Code::Internal, "unknown key type");
}

const char* wireTag(KeyType t) {
  switch (t) {
    case KeyType::S: return "S";
    case KeyType::N: return "N";
    case KeyType::B: return "B";
  }
  return "S";
}

bool keyValueMatches(const KeyAttribute& k, const Json& v) {
  if (!v.is_object() || v.size() != 1 || !v.contains(wireTag(k.type))) return false;
  const Json& s = v[wireTag(k.type)];
  if (!s.is_string()) return false;
  const auto& text = s.get_ref<const std::string&>();
  switch (k.type) {
    case KeyType::S: return !text.empty();
    case KeyType::N: return isDynamoNumber(text);
    case KeyType::B: return !text.empty() && isBase64(text);
  }
  return false;
}

void addProjection(Json& req, const Target& target) {
  if (target.attributes.empty()) return;
  std::string expr;
  Json names = Json::object();
  for (std::size_t i = 0; i < target.attributes.size(); ++i) {
    const std::string ph = "#a" + std::to_string(i);
    expr += (i == 0 ? "" : ", ") + ph;
    names[ph] = target.attributes[i];
  }
  req["ProjectionExpression"] = expr;
  req["ExpressionAttributeNames"] = names;
}

}  // namespace

std::string_view readOpName(ReadOp op) {
  switch (op) {
    case ReadOp::GetItem: return "GetItem";
    case ReadOp::Scan: return "Scan";
    case ReadOp::DescribeTable: return "DescribeTable";
  }
  return "DescribeTable";
}

Result<Json> buildKey(const Target& target, const Json& partition_key, const Json* sort_key) {
  Json key = Json::object();
  auto pk = typedKeyValue(target, target.partition_key, partition_key, "partition_key",
                          kMaxPartitionKeyBytes);
  if (!pk) return pk;
  key[target.partition_key.name] = std::move(*pk);
  if (target.sort_key) {
    if (sort_key == nullptr || sort_key->is_null()) {
      return makeError(Code::InvalidArgument, "arguments.sort_key: target '" + target.name +
                                                  "' has a composite key: sort_key ('" +
                                                  target.sort_key->name + "') is required");
    }
    auto sk = typedKeyValue(target, *target.sort_key, *sort_key, "sort_key", kMaxSortKeyBytes);
    if (!sk) return sk;
    key[target.sort_key->name] = std::move(*sk);
  } else if (sort_key != nullptr && !sort_key->is_null()) {
    return makeError(Code::InvalidArgument, "arguments.sort_key: target '" + target.name +
                                                "' has no sort key; omit sort_key");
  }
  return key;
}

Result<Json> keyOfItem(const Target& target, const Json& wire_item) {
  Json key = Json::object();
  auto take = [&](const KeyAttribute& k) -> bool {
    auto it = wire_item.find(k.name);
    if (it == wire_item.end() || !keyValueMatches(k, *it)) return false;
    key[k.name] = *it;
    return true;
  };
  if (!wire_item.is_object() || !take(target.partition_key) ||
      (target.sort_key && !take(*target.sort_key))) {
    return makeError(Code::Internal,
                     "a DynamoDB item lacks its key attributes (does the key schema in the config "
                     "match the table?)");
  }
  return key;
}

Status validateWireKey(const Target& target, const Json& key) {
  const std::size_t expected = target.sort_key ? 2 : 1;
  if (!key.is_object() || key.size() != expected)
    return makeError(Code::InvalidArgument, "invalid cursor");
  auto check = [&](const KeyAttribute& k) {
    auto it = key.find(k.name);
    return it != key.end() && keyValueMatches(k, *it);
  };
  if (!check(target.partition_key) || (target.sort_key && !check(*target.sort_key))) {
    return makeError(Code::InvalidArgument, "invalid cursor");
  }
  return {};
}

Json getItemRequest(const Target& target, const Json& key, bool consistent_read) {
  Json req = {{"TableName", target.table}, {"Key", key}, {"ConsistentRead", consistent_read}};
  addProjection(req, target);
  return req;
}

Json scanRequest(const Target& target, std::uint32_t limit,
                 const std::optional<Json>& exclusive_start_key) {
  Json req = {{"TableName", target.table}, {"Limit", limit}};
  if (exclusive_start_key) req["ExclusiveStartKey"] = *exclusive_start_key;
  addProjection(req, target);
  return req;
}

Json countScanRequest(const Target& target, std::uint32_t limit,
                      const std::optional<Json>& exclusive_start_key) {
  Json req = {{"TableName", target.table}, {"Limit", limit}, {"Select", "COUNT"}};
  if (exclusive_start_key) req["ExclusiveStartKey"] = *exclusive_start_key;
  return req;
}

Json describeTableRequest(const Target& target) {
  return {{"TableName", target.table}};
}

}  // namespace mcpdb::dynamodb
