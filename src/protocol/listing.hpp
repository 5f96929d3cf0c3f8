#pragma once
// Paging of the list methods (tools/list, resources/list, resources/templates/list,
// prompts/list): one cursor format, one page shape.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace mcpdb::protocol {

// The start index params.cursor names (the decimal index of the page's first item, opaque to
// clients); 0 without a cursor, nullopt for a malformed one.
std::optional<std::size_t> listStart(const Json& params);

// One page of `items` from `start`, each described by `describe`: `{member: [...]}` and, when
// more follow, nextCursor; nullopt when the start lies beyond the list (a bad cursor). Only the
// page's items are described.
template <class Item, class Describe>
std::optional<Json> pageOf(const std::vector<Item>& items, std::size_t start, std::size_t page_size,
                           const char* member, Describe describe) {
  if (start > items.size()) return std::nullopt;
  const std::size_t end = std::min(items.size(), start + std::max<std::size_t>(1, page_size));
  Json page = Json::array();
  for (std::size_t i = start; i < end; ++i) page.push_back(describe(items[i]));
  Json result = {{member, std::move(page)}};
  if (end < items.size()) result["nextCursor"] = std::to_string(end);
  return result;
}

}  // namespace mcpdb::protocol
