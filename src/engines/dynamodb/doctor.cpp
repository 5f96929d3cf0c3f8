#include "engines/dynamodb/doctor.hpp"

#include <set>

#include "engines/dynamodb/reply.hpp"
#include "engines/dynamodb/requests.hpp"

namespace mcpdb::dynamodb {
namespace {

using engines::Finding;

Json sentinel(KeyType type) {
  switch (type) {
    case KeyType::S: return {{"S", "mcpdb-self-check-probe"}};
    case KeyType::N: return {{"N", "-9.87654321E-120"}};
    case KeyType::B: return {{"B", "bWNwZGItc2VsZi1jaGVjay1wcm9iZQ=="}};
  }
  return {{"S", "mcpdb-self-check-probe"}};
}

std::string typeOf(const Json* defs, const std::string& name) {
  if (defs == nullptr) return {};
  for (const auto& d : *defs) {
    if (stringField(d, "AttributeName") == name) return stringField(d, "AttributeType");
  }
  return {};
}

// Compares DescribeTable's key schema with the config; empty when they agree.
std::string keySchemaMismatch(const Target& t, const Json& table) {
  const Json* schema = arrayField(table, "KeySchema");
  const Json* defs = arrayField(table, "AttributeDefinitions");
  std::string hash, range;
  if (schema != nullptr) {
    for (const auto& k : *schema) {
      if (stringField(k, "KeyType") == "HASH") hash = stringField(k, "AttributeName");
      if (stringField(k, "KeyType") == "RANGE") range = stringField(k, "AttributeName");
    }
  }
  if (hash != t.partition_key.name || typeOf(defs, hash) != keyTypeName(t.partition_key.type)) {
    return "the table's partition key differs from the config";
  }
  if (t.sort_key.has_value() != !range.empty())
    return "the table's sort key presence differs from the config";
  if (t.sort_key &&
      (range != t.sort_key->name || typeOf(defs, range) != keyTypeName(t.sort_key->type))) {
    return "the table's sort key differs from the config";
  }
  return {};
}

}  // namespace

std::string_view deniedWriteProbeOperation() {
  const auto open = kDeniedWriteProbeMarker.find('[');
  const auto close = kDeniedWriteProbeMarker.find(']');
  return kDeniedWriteProbeMarker.substr(open + 1, close - open - 1);
}

Json deniedWriteProbeRequest(const Target& target) {
  Json key = {{target.partition_key.name, sentinel(target.partition_key.type)}};
  if (target.sort_key) key[target.sort_key->name] = sentinel(target.sort_key->type);
  std::string probe_attr = "mcpdb_self_check_probe";
  while (probe_attr == target.partition_key.name ||
         (target.sort_key && probe_attr == target.sort_key->name)) {
    probe_attr += "_";
  }
  return {
      {"TableName", target.table},
      {"Key", key},
      {"UpdateExpression", "SET #probe = :probe"},
      {"ConditionExpression", "attribute_not_exists(#pk) AND attribute_exists(#pk)"},
      {"ExpressionAttributeNames", {{"#pk", target.partition_key.name}, {"#probe", probe_attr}}},
      {"ExpressionAttributeValues", {{":probe", {{"BOOL", true}}}}},
      {"ReturnValues", "NONE"}};
}

std::vector<Finding> runSelfCheck(const std::vector<const Target*>& targets, Backend& backend) {
  std::vector<Finding> out;
  auto transport = backend.transport();
  if (!transport) {
    out.push_back(
        {Finding::Severity::Inconclusive, "dynamodb.config",
         "could not reach DynamoDB, so nothing was proved: " + operatorText(transport.error())});
    return out;
  }
  std::set<std::string> done;
  for (const Target* target : targets) {
    const Target& t = *target;
    if (!done.insert(t.table).second) continue;
    const std::string label = "table " + t.table + " (target " + t.name + ")";
    CallOptions opts;
    opts.deadline = std::chrono::steady_clock::now() +
                    std::min(t.limits.timeout, std::chrono::milliseconds(10000));

    auto desc =
        (*transport)->call(readOpName(ReadOp::DescribeTable), describeTableRequest(t), opts);
    if (!desc) {
      out.push_back({Finding::Severity::Inconclusive, "dynamodb.reachable",
                     label + ": could not describe it: " + operatorText(desc.error())});
    } else {
      const Json* table_ptr = field(*desc, "Table");
      const Json table = table_ptr != nullptr ? *table_ptr : Json::object();
      out.push_back(
          {Finding::Severity::Ok, "dynamodb.reachable",
           (label + ": reachable, status ").append(stringField(table, "TableStatus", "UNKNOWN"))});
      if (auto why = keySchemaMismatch(t, table); !why.empty()) {
        out.push_back({Finding::Severity::Warning, "dynamodb.key_schema", label + ": " + why});
      }
    }

    CallInfo info;
    opts.deadline = std::chrono::steady_clock::now() +
                    std::min(t.limits.timeout, std::chrono::milliseconds(10000));
    auto probe =
        (*transport)->call(deniedWriteProbeOperation(), deniedWriteProbeRequest(t), opts, &info);
    const std::string fix =
        "give the principal an IAM policy that allows only dynamodb:GetItem, dynamodb:Scan and "
        "dynamodb:DescribeTable on arn:aws:dynamodb:<region>:<account>:table/" +
        t.table + " (remove dynamodb:* and every write action)";
    if (probe) {
      // Cannot happen with a condition that never holds; if it does, the principal wrote.
      out.push_back(
          {Finding::Severity::Violation, "dynamodb.write_denied",
           label + ": principal may write: a conditional update that can never match was accepted",
           fix});
    } else if (info.error_type == "ConditionalCheckFailedException") {
      out.push_back({Finding::Severity::Violation, "dynamodb.write_denied",
                     label + ": principal may write: the write was only stopped by the condition",
                     fix});
    } else if (probe.error().code == Code::PermissionDenied &&
               info.error_type == "AccessDeniedException") {
      out.push_back({Finding::Severity::Ok, "dynamodb.write_denied",
                     label + ": write denied (AccessDeniedException)"});
    } else {
      out.push_back(
          {Finding::Severity::Inconclusive, "dynamodb.write_denied",
           label + ": could not prove the principal cannot write: " + operatorText(probe.error())});
    }
  }
  return out;
}

std::vector<Finding> checkTargets(const std::vector<const Target*>& targets, Backend& backend) {
  std::vector<Finding> out;
  auto transport = backend.transport();
  if (!transport) {
    out.push_back({Finding::Severity::Inconclusive, "dynamodb.targets",
                   "could not check the targets: " + operatorText(transport.error())});
    return out;
  }
  for (const Target* target : targets) {
    const Target& t = *target;
    const std::string check = "dynamodb.target." + t.name;
    const std::string label = "target " + t.name + " (table " + t.table + ")";
    // What each tool sends: GetItem (a key that is never stored) and a one-item COUNT scan (no
    // item comes back).
    const Json key = deniedWriteProbeRequest(t)["Key"];
    const std::pair<ReadOp, Json> probes[] = {
        {ReadOp::GetItem, getItemRequest(t, key, false)},
        {ReadOp::Scan, countScanRequest(t, 1, std::nullopt)},
    };
    std::string failed;
    Finding::Severity severity = Finding::Severity::Ok;
    std::string fix;
    for (const auto& [op, body] : probes) {
      CallOptions opts;
      opts.deadline = std::chrono::steady_clock::now() +
                      std::min(t.limits.timeout, std::chrono::milliseconds(10000));
      CallInfo info;
      auto r = (*transport)->call(readOpName(op), body, opts, &info);
      if (r) continue;
      const std::string action = "dynamodb:" + std::string(readOpName(op));
      failed += (failed.empty() ? "" : "; ") + action + ": " + operatorText(r.error());
      if (info.error_type == "AccessDeniedException") {
        severity = Finding::Severity::Unusable;
        fix += (fix.empty() ? "allow " : ", ") + action;
      } else if (info.error_type == "ResourceNotFoundException") {
        severity = Finding::Severity::Unusable;
        fix = "create table " + t.table + ", or correct dynamodb.targets." + t.name + ".table";
      } else if (severity == Finding::Severity::Ok) {
        severity = Finding::Severity::Inconclusive;
      }
    }
    if (fix.rfind("allow ", 0) == 0) fix += " on table " + t.table + " to the principal";
    out.push_back(severity == Finding::Severity::Ok
                      ? Finding{Finding::Severity::Ok, check, label + ": GetItem and Scan allowed"}
                      : Finding{severity, check, label + ": " + failed, fix});
  }
  return out;
}

}  // namespace mcpdb::dynamodb
