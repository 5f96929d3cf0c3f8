#pragma once
// AWS Signature Version 4, hand-written: libcurl 7.88 can sign headers (CURLOPT_AWS_SIGV4) but
// cannot presign a query string (the RDS IAM auth token), and the engines need the same signer for
// both. Hashing/HMAC come from OpenSSL. Checked against the published AWS SigV4 test suite
// (tests/unit/aws/sigv4/).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aws/credentials.hpp"

namespace mcpdb::aws {

using QueryParams = std::vector<std::pair<std::string, std::string>>;
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// A request to sign. Every header in `headers` is signed (callers add only what the service needs;
// Host is required).
struct SignableRequest {
  std::string method = "GET";
  // The path as it appears in the request line, e.g. "/" or "/example%20space/". The canonical URI
  // encodes it once more, as AWS requires for every service except S3.
  std::string path = "/";
  QueryParams query{};  // decoded names and values, in any order
  HeaderList headers{};
  std::string body{};
};

struct SigningScope {
  std::string region;
  std::string service;
  Clock::time_point time;
};

struct SignOptions {
  // Remove "." / ".." segments and duplicate slashes from the path before signing (all services but
  // S3).
  bool normalizePath = true;
  // Sign X-Amz-Security-Token (most services, DynamoDB included). When false the token header is
  // added after signing.
  bool signSecurityToken = true;
  // Add an x-amz-content-sha256 header (S3 requires it; DynamoDB does not).
  bool addContentSha256Header = false;
  // Payload hash to use instead of hashing the body (e.g. "UNSIGNED-PAYLOAD").
  std::optional<std::string> payloadHash{};
};

// Every intermediate of one signature (tests compare them with the AWS suite).
struct Signature {
  std::string canonicalRequest;
  std::string stringToSign;
  std::string signedHeaders;  // "host;x-amz-date"
  std::string signature;      // 64 hex chars
  std::string authorization;  // header form only: "AWS4-HMAC-SHA256 Credential=...,
                              // SignedHeaders=..., Signature=..."
  std::string query;          // presign only: the canonical query string including X-Amz-Signature
};

// "20150830T123600Z" and "20150830".
std::string amzDate(Clock::time_point t);
std::string amzShortDate(Clock::time_point t);

// RFC 3986 percent-encoding as AWS requires: unreserved A-Z a-z 0-9 - . _ ~ pass, everything else
// is %XX (upper-case hex). With keepSlash, '/' passes too (paths).
std::string uriEncode(std::string_view s, bool keepSlash);
// Decodes %XX sequences ('+' is left alone, as AWS does for query strings it signs).
std::string uriDecode(std::string_view s);

// The canonical URI of a request path (normalised when asked, then encoded).
std::string canonicalUri(std::string_view path, bool normalize);
// Sorted, encoded "k=v&k=v".
std::string canonicalQueryString(const QueryParams& query);

// Derives kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request").
std::string deriveSigningKey(std::string_view secretAccessKey, std::string_view shortDate,
                             std::string_view region, std::string_view service);

// Header signing: sets X-Amz-Date (and X-Amz-Security-Token, x-amz-content-sha256 as configured)
// and Authorization on `request.headers`, and returns all intermediates.
Signature signHeaders(SignableRequest& request, const Credentials& credentials,
                      const SigningScope& scope, const SignOptions& options = {});

// Query-string presigning: adds X-Amz-Algorithm, -Credential, -Date, (-Expires), -SignedHeaders and
// (-Security-Token) to the query, signs, and returns the canonical query string with
// X-Amz-Signature appended in `Signature::query`. `request.query` is updated to the final
// parameters.
Signature presignQuery(SignableRequest& request, const Credentials& credentials,
                       const SigningScope& scope, std::optional<std::chrono::seconds> expires,
                       const SignOptions& options = {});

}  // namespace mcpdb::aws
