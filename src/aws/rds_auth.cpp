#include "aws/rds_auth.hpp"

#include "aws/sigv4.hpp"

namespace mcpdb::aws {

std::string generateRdsAuthToken(std::string_view host, std::uint16_t port, std::string_view dbUser,
                                 std::string_view region, const Credentials& credentials,
                                 Clock::time_point now) {
  const std::string endpoint = std::string(host) + ":" + std::to_string(port);
  SignableRequest request;
  request.method = "GET";
  request.path = "/";
  request.query = {{"Action", "connect"}, {"DBUser", std::string(dbUser)}};
  request.headers = {{"Host", endpoint}};
  SigningScope scope{std::string(region), "rds-db", now};
  auto sig = presignQuery(request, credentials, scope, kRdsTokenLifetime);
  return endpoint + "/?" + sig.query;
}

}  // namespace mcpdb::aws
