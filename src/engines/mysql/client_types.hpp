#pragma once
// The values the MySQL/MariaDB client layer takes and gives: typed statement parameters, the
// server's flavour, and a capped result whose cells are JSON values.

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/json.hpp"

namespace mcpdb::mysql {

enum class Flavour { MariaDB, MySQL };

struct ServerInfo {
  Flavour flavour = Flavour::MySQL;
  std::string version;               // SELECT VERSION(), e.g. "10.11.19-MariaDB-0+deb12u1"
  unsigned long version_number = 0;  // e.g. 101119
  std::uint64_t max_packet = 0;      // @@max_allowed_packet: the largest request it accepts
};

// A parameter sent as bytes, not text: the server gives it the binary character set.
struct Bytes {
  std::string data;
};

// One statement parameter: NULL, integer, double, text (UTF-8) or bytes.
using Param = std::variant<std::nullptr_t, std::int64_t, double, std::string, Bytes>;

struct Column {
  std::string name;
  std::string type;  // "int", "decimal", "double", "string", "bytes", "date", "time", "datetime",
                     // "timestamp", "year", "bit", "json", "enum", "set", "geometry"
};

// The rows of one statement, cut at the caps while fetching. Cells: integers, decimals as
// strings, doubles, strings, bytes as base64, dates and times as ISO text, null.
struct QueryResult {
  std::vector<Column> columns;
  std::vector<std::vector<Json>> rows;
  std::uint64_t bytes = 0;  // the rows' size as JSON objects, counted against the byte cap
  bool truncated = false;   // a cap stopped the fetch before the last row
  // Values the byte cap left in the database (source_cap.hpp): [{row, column}], row an index into
  // rows; each is null in its row.
  Json cut = Json::array();
};

struct CallLimits {
  std::uint32_t max_rows = 100;
  std::uint64_t max_bytes = std::uint64_t{256} * 1024;
  std::chrono::milliseconds timeout{5000};
};

}  // namespace mcpdb::mysql
