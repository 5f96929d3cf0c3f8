// libFuzzer target: SigV4 canonicalisation (paths, query strings, header values) and signing of
// arbitrary request shapes; must never crash and must be deterministic.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "aws/credentials.hpp"
#include "aws/sigv4.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mcpdb::aws;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // Split the input into path | query key | query value | header value.
  std::string parts[4];
  std::size_t field = 0;
  for (char c : in) {
    if (c == '\x1f' && field < 3) {
      ++field;
    } else {
      parts[field].push_back(c);
    }
  }
  (void)uriEncode(parts[0], true);
  (void)uriDecode(parts[0]);
  (void)canonicalUri(parts[0].empty() ? "/" : parts[0], true);
  (void)canonicalUri(parts[0].empty() ? "/" : parts[0], false);

  SignableRequest req;
  req.method = "POST";
  req.path = parts[0].empty() ? "/" : parts[0];
  req.query = {{parts[1], parts[2]}, {"b", parts[2]}};
  req.headers = {{"host", "dynamodb.us-east-1.amazonaws.com"}, {"x-amz-target", parts[3]}};
  req.body = parts[3];
  Credentials creds;
  creds.accessKeyId = "AKIDEXAMPLE";
  creds.secretAccessKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  SigningScope scope{"us-east-1", "dynamodb",
                     std::chrono::system_clock::time_point(std::chrono::seconds(1440938160))};
  SignableRequest copy = req;
  const auto a = signHeaders(req, creds, scope);
  const auto b = signHeaders(copy, creds, scope);
  if (a.authorization != b.authorization) __builtin_trap();
  SignableRequest pre;
  pre.path = req.path;
  pre.query = {{parts[1], parts[2]}};
  pre.headers = {{"host", "db.example:5432"}};
  (void)presignQuery(pre, creds, scope, std::chrono::seconds(900));
  return 0;
}
