// The serving binary contains no DynamoDB write operation name. The only exception is the
// self-check's denied-write probe, which must appear solely inside its marker literal
// (engines/dynamodb/doctor.hpp). The loader (a separate executable) is the only writer.
#include <gtest/gtest.h>

#include <fstream>
#include <algorithm>
#include <string>

#ifndef MCPDB_SERVER_BINARY
#error "MCPDB_SERVER_BINARY must name the built mcp-dbserver"
#endif

namespace {

constexpr std::string_view kMarkerPrefix = "mcpdb:self-check:denied-write-probe[";

std::string readBinary() {
  std::ifstream in(MCPDB_SERVER_BINARY, std::ios::binary | std::ios::ate);
  std::string bin(static_cast<std::size_t>(std::max<std::streamoff>(in.tellg(), 0)), '\0');
  in.seekg(0);
  in.read(bin.data(), static_cast<std::streamsize>(bin.size()));
  return bin;
}

bool wordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Occurrences of `needle` as a whole word (so PostgreSQL's parser node names linked in with
// libpg_query, such as CreateTableAsStmt, are not DynamoDB operations), split into those inside
// the probe marker and the rest.
std::pair<int, int> count(const std::string& hay, const std::string& needle) {
  int in_marker = 0, elsewhere = 0;
  for (auto pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) {
    const std::size_t end = pos + needle.size();
    if ((pos > 0 && wordChar(hay[pos - 1])) || (end < hay.size() && wordChar(hay[end]))) continue;
    const bool marked =
        pos >= kMarkerPrefix.size() &&
        hay.compare(pos - kMarkerPrefix.size(), kMarkerPrefix.size(), kMarkerPrefix) == 0 &&
        pos + needle.size() < hay.size() && hay[pos + needle.size()] == ']';
    (marked ? in_marker : elsewhere)++;
  }
  return {in_marker, elsewhere};
}

TEST(DynamoServingBinary, ContainsNoWriteOperation) {
  const std::string bin = readBinary();
  ASSERT_GT(bin.size(), 100000U) << "cannot read " << MCPDB_SERVER_BINARY;
  // The DynamoDB engine is linked in (otherwise this test would prove nothing).
  ASSERT_NE(bin.find("DynamoDB_20120810."), std::string::npos)
      << "the DynamoDB engine is not in the binary";
  ASSERT_NE(bin.find("scan_dynamodb_table"), std::string::npos);
  for (const std::string op :
       {"PutItem", "BatchWriteItem", "DeleteItem", "CreateTable", "DeleteTable",
        "TransactWriteItems", "BatchExecuteStatement", "ExecuteStatement", "ExecuteTransaction",
        "UpdateTable", "RestoreTableFromBackup", "ImportTable"}) {
    auto [marked, other] = count(bin, op);
    EXPECT_EQ(marked + other, 0) << op << " appears in the serving binary";
  }
  auto [marked, other] = count(bin, "UpdateItem");
  EXPECT_EQ(other, 0) << "UpdateItem appears outside the self-check's probe marker";
  EXPECT_GE(marked, 1) << "the self-check's probe marker is missing";
}

}  // namespace
