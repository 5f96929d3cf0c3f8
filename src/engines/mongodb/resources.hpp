#pragma once
// Schema resources of the MongoDB engine: one per collection that a registered target reads
// (mcpdb://mongodb/collections/<collection>, percent-encoded), with, per target, the id type, the
// fields the tools return (the projection) and the vector-search settings. Built from the
// registry alone: a collection has no fixed schema, and the projection is the contract the tools
// keep, so a read never connects. The JSON shape is documented in README.md ("Schema resources").

#include <string>
#include <string_view>

#include "common/result.hpp"
#include "engines/mongodb/config.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::mongodb {

// The resource URI of a collection (its name percent-encoded: collection names may hold '/', '#',
// '%', non-ASCII letters, ...).
std::string collectionResourceUri(std::string_view collection);

// Adds a resource per collection of `settings` and the template.
Status registerResources(protocol::ToolRegistry& registry, const Settings& settings);

}  // namespace mcpdb::mongodb
