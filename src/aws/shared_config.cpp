#include "aws/shared_config.hpp"

#include <algorithm>
#include <cctype>

#include "aws/provider_util.hpp"

namespace mcpdb::aws {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Strips an inline comment: '#' or ';' preceded by whitespace.
std::string_view stripInlineComment(std::string_view v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    if ((v[i] == '#' || v[i] == ';') && (v[i - 1] == ' ' || v[i - 1] == '\t'))
      return v.substr(0, i);
  }
  return v;
}

}  // namespace

Result<Profiles> parseSharedFile(std::string_view text, SharedFileKind kind,
                                 std::string_view fileLabel) {
  Profiles out;
  ProfileValues* current = nullptr;  // null: outside any section, or inside an ignored one
  bool inIgnoredSection = false;
  bool lastKeyEmpty = false;  // "s3 =" followed by indented sub-properties
  int lineNo = 0;
  std::size_t pos = 0;
  auto fail = [&](const std::string& why) {
    return makeError(Code::FailedPrecondition,
                     std::string(fileLabel) + ": line " + std::to_string(lineNo) + ": " + why);
  };
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view raw = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineNo;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
    std::string line = detail::trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;

    if (line[0] == '[') {
      auto close = line.find(']');
      if (close == std::string::npos) return fail("section header without ']'");
      std::string section = detail::trim(std::string_view(line).substr(1, close - 1));
      std::string name;
      if (kind == SharedFileKind::Credentials) {
        name = section;
      } else if (section == "default") {
        name = "default";
      } else if (section.rfind("profile ", 0) == 0 || section.rfind("profile\t", 0) == 0) {
        name = detail::trim(std::string_view(section).substr(8));
      }  // other config sections (sso-session, services, bare names) are not profiles
      if (name.empty()) {
        current = nullptr;
        inIgnoredSection = true;
      } else {
        current = &out[name];
        inIgnoredSection = false;
      }
      lastKeyEmpty = false;
      continue;
    }
    if (indented && lastKeyEmpty) continue;  // sub-property of a nested block: not needed here
    auto eq = line.find('=');
    if (eq == std::string::npos) return fail("expected 'key = value'");
    if (current == nullptr && !inIgnoredSection)
      return fail("setting outside of a [profile] section");
    std::string key = lower(detail::trim(std::string_view(line).substr(0, eq)));
    std::string value = detail::trim(stripInlineComment(std::string_view(line).substr(eq + 1)));
    if (key.empty()) return fail("empty key");
    lastKeyEmpty = value.empty();
    if (current != nullptr) (*current)[key] = value;
  }
  return out;
}

}  // namespace mcpdb::aws
