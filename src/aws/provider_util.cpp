#include "aws/provider_util.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include "common/json.hpp"

namespace mcpdb::aws::detail {

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

Result<std::string> readSmallFile(const std::string& path, std::string_view what) {
  constexpr std::size_t kMax = 1 << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError(Code::FailedPrecondition,
                     "cannot read " + std::string(what) + " file " + path);
  std::string data;
  data.resize(kMax + 1);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<std::size_t>(in.gcount()));
  if (data.size() > kMax)
    return makeError(Code::FailedPrecondition,
                     std::string(what) + " file " + path + " is too large");
  return data;
}

Result<Credentials> credentialsFromJson(std::string_view body, const std::string& source) {
  auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return makeError(Code::Internal, source + " returned a response that is not a JSON object");
  }
  auto field = [&](const char* key) -> std::string {
    auto it = doc.find(key);
    return (it != doc.end() && it->is_string()) ? it->get<std::string>() : std::string();
  };
  if (auto code = field("Code"); !code.empty() && code != "Success") {
    return makeError(Code::Unavailable, source + " reported status '" + code + "'");
  }
  Credentials c;
  c.accessKeyId = field("AccessKeyId");
  c.secretAccessKey = field("SecretAccessKey");
  c.sessionToken = field("Token");
  c.source = source;
  if (c.accessKeyId.empty() || c.secretAccessKey.empty()) {
    return makeError(Code::Internal, source + " response lacks AccessKeyId or SecretAccessKey");
  }
  if (auto exp = field("Expiration"); !exp.empty()) {
    c.expiration = parseIso8601(exp);
    if (!c.expiration)
      return makeError(Code::Internal, source + " response has an unreadable Expiration");
  }
  return c;
}

std::string expandHome(const std::string& path, const std::string& home) {
  if (!home.empty() && (path == "~" || path.rfind("~/", 0) == 0)) return home + path.substr(1);
  return path;
}

}  // namespace mcpdb::aws::detail
