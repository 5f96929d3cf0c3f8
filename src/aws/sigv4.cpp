#include "aws/sigv4.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include "aws/crypto.hpp"

namespace mcpdb::aws {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

// Trim, and collapse runs of spaces/tabs into one space (AWS "Trimall").
std::string trimAll(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  bool pendingSpace = false;
  for (char c : v) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      pendingSpace = !out.empty();
      continue;
    }
    if (pendingSpace) out.push_back(' ');
    pendingSpace = false;
    out.push_back(c);
  }
  return out;
}

void removeHeader(HeaderList& headers, std::string_view name) {
  std::erase_if(headers, [&](const auto& h) { return iequals(h.first, name); });
}

std::string formatUtc(Clock::time_point t, const char* fmt) {
  std::time_t tt = Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

struct CanonicalHeaders {
  std::string block;        // "name:value\n" lines
  std::string signedNames;  // "a;b;c"
};

CanonicalHeaders canonicalHeaders(const HeaderList& headers) {
  std::map<std::string, std::string> merged;  // sorted by lower-case name
  for (const auto& [name, value] : headers) {
    auto key = lower(name);
    auto v = trimAll(value);
    auto it = merged.find(key);
    if (it == merged.end()) {
      merged.emplace(std::move(key), std::move(v));
    } else {
      it->second += ',';
      it->second += v;
    }
  }
  CanonicalHeaders out;
  for (const auto& [name, value] : merged) {
    out.block += name;
    out.block += ':';
    out.block += value;
    out.block += '\n';
    if (!out.signedNames.empty()) out.signedNames += ';';
    out.signedNames += name;
  }
  return out;
}

std::string credentialScope(const SigningScope& scope) {
  return amzShortDate(scope.time) + "/" + scope.region + "/" + scope.service + "/aws4_request";
}

// Fills canonicalRequest, stringToSign, signature.
void computeSignature(Signature& sig, const SignableRequest& request,
                      const std::string& canonicalQuery, const CanonicalHeaders& headers,
                      const std::string& payloadHash, const Credentials& credentials,
                      const SigningScope& scope, const SignOptions& options) {
  sig.signedHeaders = headers.signedNames;
  sig.canonicalRequest = request.method + "\n" + canonicalUri(request.path, options.normalizePath) +
                         "\n" + canonicalQuery + "\n" + headers.block + "\n" + headers.signedNames +
                         "\n" + payloadHash;
  sig.stringToSign = std::string(kAlgorithm) + "\n" + amzDate(scope.time) + "\n" +
                     credentialScope(scope) + "\n" + sha256Hex(sig.canonicalRequest);
  auto key = deriveSigningKey(credentials.secretAccessKey, amzShortDate(scope.time), scope.region,
                              scope.service);
  sig.signature = toHex(hmacSha256(key, sig.stringToSign));
}

}  // namespace

std::string amzDate(Clock::time_point t) {
  return formatUtc(t, "%Y%m%dT%H%M%SZ");
}
std::string amzShortDate(Clock::time_point t) {
  return formatUtc(t, "%Y%m%d");
}

std::string uriEncode(std::string_view s, bool keepSlash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        (keepSlash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0x0f]);
    }
  }
  return out;
}

std::string uriDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string canonicalUri(std::string_view path, bool normalize) {
  if (path.empty()) return "/";
  if (!normalize) return uriEncode(path, true);
  // RFC 3986 dot-segment removal plus collapsing of empty segments, as AWS does for non-S3
  // services.
  std::vector<std::string_view> segments;
  std::string_view last;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    auto next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    auto seg = path.substr(pos, next - pos);
    last = seg;
    if (seg == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!seg.empty() && seg != ".") {
      segments.push_back(seg);
    }
    pos = next + 1;
  }
  std::string out;
  for (auto seg : segments) {
    out += '/';
    out += seg;
  }
  bool trailing = path.back() == '/' || last == "." || last == "..";
  if (out.empty() || trailing) out += '/';
  return uriEncode(out, true);
}

std::string canonicalQueryString(const QueryParams& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [k, v] : query) encoded.emplace_back(uriEncode(k, false), uriEncode(v, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) out += '&';
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

std::string deriveSigningKey(std::string_view secretAccessKey, std::string_view shortDate,
                             std::string_view region, std::string_view service) {
  auto kDate = hmacSha256("AWS4" + std::string(secretAccessKey), shortDate);
  auto kRegion = hmacSha256(kDate, region);
  auto kService = hmacSha256(kRegion, service);
  return hmacSha256(kService, "aws4_request");
}

Signature signHeaders(SignableRequest& request, const Credentials& credentials,
                      const SigningScope& scope, const SignOptions& options) {
  const std::string payloadHash =
      options.payloadHash ? *options.payloadHash : sha256Hex(request.body);
  for (auto name :
       {"X-Amz-Date", "Authorization", "X-Amz-Security-Token", "X-Amz-Content-Sha256"}) {
    removeHeader(request.headers, name);
  }
  request.headers.emplace_back("X-Amz-Date", amzDate(scope.time));
  const bool token = !credentials.sessionToken.empty();
  if (token && options.signSecurityToken)
    request.headers.emplace_back("X-Amz-Security-Token", credentials.sessionToken);
  if (options.addContentSha256Header)
    request.headers.emplace_back("x-amz-content-sha256", payloadHash);

  Signature sig;
  computeSignature(sig, request, canonicalQueryString(request.query),
                   canonicalHeaders(request.headers), payloadHash, credentials, scope, options);
  sig.authorization = std::string(kAlgorithm) + " Credential=" + credentials.accessKeyId + "/" +
                      credentialScope(scope) + ", SignedHeaders=" + sig.signedHeaders +
                      ", Signature=" + sig.signature;
  if (token && !options.signSecurityToken)
    request.headers.emplace_back("X-Amz-Security-Token", credentials.sessionToken);
  request.headers.emplace_back("Authorization", sig.authorization);
  return sig;
}

Signature presignQuery(SignableRequest& request, const Credentials& credentials,
                       const SigningScope& scope, std::optional<std::chrono::seconds> expires,
                       const SignOptions& options) {
  const std::string payloadHash =
      options.payloadHash ? *options.payloadHash : sha256Hex(request.body);
  std::erase_if(request.query, [](const auto& q) { return q.first.rfind("X-Amz-", 0) == 0; });
  auto headers = canonicalHeaders(request.headers);
  request.query.emplace_back("X-Amz-Algorithm", std::string(kAlgorithm));
  request.query.emplace_back("X-Amz-Credential",
                             credentials.accessKeyId + "/" + credentialScope(scope));
  request.query.emplace_back("X-Amz-Date", amzDate(scope.time));
  if (expires) request.query.emplace_back("X-Amz-Expires", std::to_string(expires->count()));
  request.query.emplace_back("X-Amz-SignedHeaders", headers.signedNames);
  const bool token = !credentials.sessionToken.empty();
  if (token && options.signSecurityToken)
    request.query.emplace_back("X-Amz-Security-Token", credentials.sessionToken);

  Signature sig;
  const std::string canonicalQuery = canonicalQueryString(request.query);
  computeSignature(sig, request, canonicalQuery, headers, payloadHash, credentials, scope, options);
  sig.query = canonicalQuery;
  if (token && !options.signSecurityToken) {
    request.query.emplace_back("X-Amz-Security-Token", credentials.sessionToken);
    sig.query += "&X-Amz-Security-Token=" + uriEncode(credentials.sessionToken, false);
  }
  request.query.emplace_back("X-Amz-Signature", sig.signature);
  sig.query += "&X-Amz-Signature=" + sig.signature;
  return sig;
}

}  // namespace mcpdb::aws
