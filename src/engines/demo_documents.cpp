// Reading the demo data set (data/demo_documents.jsonl): one JSON object per line. Shared by the
// loader executable and the integration tests that load the same data.
#include <fstream>

#include "common/json.hpp"
#include "engines/demo.hpp"

namespace mcpdb::engines {
namespace {

bool stringField(const Json& j, const char* key, bool required, std::string& out) {
  auto it = j.find(key);
  if (it == j.end()) return !required;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

}  // namespace

Result<std::vector<DemoDocument>> readDemoDocuments(const std::string& path) {
  std::ifstream in(path);
  if (!in) return makeError(Code::NotFound, "cannot read " + path);
  std::vector<DemoDocument> docs;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Json j = Json::parse(line, nullptr, false);
    DemoDocument d;
    bool ok = !j.is_discarded() && j.is_object() && stringField(j, "id", true, d.id) &&
              stringField(j, "body", true, d.body) && stringField(j, "title", false, d.title) &&
              stringField(j, "category", false, d.category) &&
              stringField(j, "published", false, d.published);
    if (ok && j.contains("tags")) {
      ok = j["tags"].is_array();
      for (const auto& t : ok ? j["tags"] : Json::array()) {
        if (!t.is_string()) {
          ok = false;
          break;
        }
        d.tags.push_back(t.get<std::string>());
      }
    }
    if (!ok) {
      return makeError(Code::InvalidArgument,
                       path + ":" + std::to_string(n) +
                           ": not a demo document (needs string id and body; optional string "
                           "title, category, published and a list of string tags)");
    }
    docs.push_back(std::move(d));
  }
  return docs;
}

}  // namespace mcpdb::engines
