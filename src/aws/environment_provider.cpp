#include "aws/credential_provider.hpp"

namespace mcpdb::aws {

Result<Credentials> EnvironmentProvider::get() {
  auto id = env_.get("AWS_ACCESS_KEY_ID");
  auto secret = env_.get("AWS_SECRET_ACCESS_KEY");
  if (!id && !secret)
    return makeError(Code::NotFound, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set");
  if (!id)
    return makeError(Code::FailedPrecondition,
                     "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not");
  if (!secret)
    return makeError(Code::FailedPrecondition,
                     "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
  Credentials c;
  c.accessKeyId = *id;
  c.secretAccessKey = *secret;
  if (auto token = env_.get("AWS_SESSION_TOKEN")) c.sessionToken = *token;
  c.source = "environment";
  return c;
}

}  // namespace mcpdb::aws
