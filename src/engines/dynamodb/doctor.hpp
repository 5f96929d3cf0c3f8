#pragma once
// The startup/doctor self-check: each registered table is reachable and keyed as configured, and
// the principal cannot write to it.

#include <string_view>
#include <vector>

#include "engines/dynamodb/runtime.hpp"
#include "engines/dynamodb/config.hpp"
#include "engines/engine.hpp"

namespace mcpdb::dynamodb {

// The one write operation name in the serving binary, used only by the denied-write probe. It is
// cut out of a marker literal so that the binary-strings test can tell this use from any other.
std::string_view deniedWriteProbeOperation();
// The marker literal holding it (the test looks for exactly this).
inline constexpr std::string_view kDeniedWriteProbeMarker =
    "mcpdb:self-check:denied-write-probe[UpdateItem]";

// The probe's request: an update whose condition can never hold
// (attribute_not_exists(#pk) AND attribute_exists(#pk)) on a sentinel key, so it never changes
// data.
Json deniedWriteProbeRequest(const Target& target);

// Both checks run on the targets of one source, through its backend.
std::vector<engines::Finding> runSelfCheck(const std::vector<const Target*>& targets,
                                           Backend& backend);

// doctor: each target can be read as its tools read it (GetItem and Scan allowed, the table
// exists), one finding per target with its fix.
std::vector<engines::Finding> checkTargets(const std::vector<const Target*>& targets,
                                           Backend& backend);

}  // namespace mcpdb::dynamodb
