#include "protocol/listing.hpp"

namespace mcpdb::protocol {

std::optional<std::size_t> listStart(const Json& params) {
  const auto cursor = params.find("cursor");
  if (cursor == params.end()) return 0;
  if (!cursor->is_string()) return std::nullopt;
  const auto& text = cursor->get_ref<const std::string&>();
  // At most 9 digits: no overflow, and no list is that long.
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return static_cast<std::size_t>(std::stoul(text));
}

}  // namespace mcpdb::protocol
