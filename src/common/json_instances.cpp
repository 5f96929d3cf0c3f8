// The one copy of nlohmann-json's members and parser that unoptimised builds share (see json.hpp).
#define MCPDB_JSON_INSTANTIATE
#include "common/json.hpp"

#ifdef MCPDB_JSON_EXTERN_TEMPLATES
MCPDB_JSON_EXTERN_TEMPLATES()
#endif
