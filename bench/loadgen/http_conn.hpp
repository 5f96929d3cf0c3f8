// A blocking HTTP/1.1 keep-alive client for one loopback MCP Streamable HTTP connection.
// Hand-written (libcurl would work too) so the per-request cost of the load client stays a few
// microseconds: it speaks only what the benchmark needs (POST, Content-Length or chunked bodies,
// application/json or a text/event-stream body that ends after the response).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace mcpdb::bench {

struct Url {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string path = "/mcp";
};

// Parses http://HOST:PORT/PATH (loopback addresses only); throws on anything else.
Url parseUrl(const std::string& text);

struct HttpReply {
  int status = 0;
  std::string session_id;  // Mcp-Session-Id header, when present
  std::string message;     // the JSON-RPC message (the JSON body, or the SSE event data with an id)
};

class HttpConn {
 public:
  explicit HttpConn(Url url) : url_(std::move(url)) {}
  ~HttpConn();
  HttpConn(const HttpConn&) = delete;
  HttpConn& operator=(const HttpConn&) = delete;

  // Connects (once; again after the server closed the connection). False when refused.
  bool connect();
  // POSTs one JSON-RPC message and reads the reply; false on a transport failure or timeout.
  // `extra_headers` (complete "Name: value\r\n" lines, e.g. the 2026-07-28 Mcp-Method and
  // Mcp-Name) go after MCP-Protocol-Version; empty adds nothing.
  bool post(const std::string& body, HttpReply& reply, std::chrono::milliseconds timeout,
            std::string_view extra_headers = {});

  std::string session_id;        // sent as Mcp-Session-Id once set
  std::string protocol_version;  // sent as MCP-Protocol-Version once set
  std::string bearer;            // sent as Authorization: Bearer when set

 private:
  bool readMore(std::chrono::steady_clock::time_point deadline);
  void closeFd();

  Url url_;
  int fd_ = -1;
  std::string in_;   // bytes received, not yet consumed
  std::string out_;  // request being written
};

}  // namespace mcpdb::bench
