#pragma once
// One JSON type for the whole project (nlohmann-json from Debian).
#include <nlohmann/json.hpp>

namespace mcpdb {
using Json = nlohmann::json;
}  // namespace mcpdb

// Build time, not behaviour. Unoptimised builds (the sanitizer, debug and fuzz presets define
// MCPDB_JSON_EXTERN) would otherwise compile, in every file that uses Json, their own copy of each
// member it calls and of the parser: a quarter to a third of such a file's compile time. These
// declarations make them use the one copy json_instances.cpp compiles. Optimised builds keep the
// library's usual inline copies, which the compiler can inline on the hot path. The parser and
// lexer are the library's detail classes, so the declarations are tied to the version they were
// written for.
#if defined(MCPDB_JSON_EXTERN) && NLOHMANN_JSON_VERSION_MAJOR == 3 && \
    NLOHMANN_JSON_VERSION_MINOR == 11
#define MCPDB_JSON_EXTERN_TEMPLATES(kind)                                                     \
  kind template class nlohmann::basic_json<>;                                                 \
  kind template class nlohmann::detail::json_sax_dom_parser<nlohmann::json>;                  \
  kind template class nlohmann::detail::json_sax_dom_callback_parser<nlohmann::json>;         \
  kind template class nlohmann::detail::parser<                                               \
      nlohmann::json, nlohmann::detail::iterator_input_adapter<const char*>>;                 \
  kind template class nlohmann::detail::lexer<                                                \
      nlohmann::json, nlohmann::detail::iterator_input_adapter<const char*>>;                 \
  kind template class nlohmann::detail::parser<                                               \
      nlohmann::json, nlohmann::detail::iterator_input_adapter<std::string::const_iterator>>; \
  kind template class nlohmann::detail::lexer<                                                \
      nlohmann::json, nlohmann::detail::iterator_input_adapter<std::string::const_iterator>>;
#ifndef MCPDB_JSON_INSTANTIATE
MCPDB_JSON_EXTERN_TEMPLATES(extern)
#endif
#endif
