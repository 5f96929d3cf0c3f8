// Boost 1.74 Asio under g++ 12 -std=c++20 needs <utility> before any Boost header (std::exchange).
#include <utility>

// Connection<Stream>, compiled once for both streams: its steps live in one file per concern
// (connection.hpp lists them), all instantiated here, so that no other source compiles them again
// and the steps of one request stay in one unit (as the compiler saw them before the split).
#include "transport/http/connection.hpp"
#include "transport/http/connection_io.hpp"
#include "transport/http/connection_read.hpp"
#include "transport/http/peer_watch.hpp"
#include "transport/http/post_answer.hpp"
#include "transport/http/post_handler.hpp"
#include "transport/http/request_router.hpp"

namespace mcpdb::transport::http {

template class Connection<PlainStream>;
template class Connection<TlsStream>;

}  // namespace mcpdb::transport::http
