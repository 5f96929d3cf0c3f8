// mcpdb-prebuild-yaml: the build-time tool behind mcpdb_prebuilt_yaml() (cmake/Helpers.cmake).
//   mcpdb-prebuild-yaml IN.yaml OUT.cpp NAMESPACE TEXT_FUNCTION NODE_FUNCTION HEADER
// writes OUT.cpp defining the text of IN.yaml and its document, built without parsing
// (src/config/prebuilt.hpp). Exit 1 with a message when IN.yaml cannot be prebuilt.
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "config/prebuilt.hpp"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: mcpdb-prebuild-yaml IN.yaml OUT.cpp NAMESPACE TEXT_FUNCTION "
                 "NODE_FUNCTION HEADER\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << argv[1] << ": cannot read\n";
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string source;
  try {
    source = mcpdb::config::prebuiltSource(text.str(), {argv[3], argv[4], argv[5], argv[6]});
  } catch (const YAML::Exception& e) {
    std::cerr << argv[1] << ":" << e.mark.line + 1 << ": " << e.msg << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << source;
  out.close();
  if (!out) {
    std::cerr << argv[2] << ": cannot write\n";
    return 1;
  }
  return 0;
}
