// mcpdb-echo-server: an MCP server that answers instantly, to measure the load client's own
// ceiling (a benchmark of servers must not be a benchmark of its client).
//   mcpdb-echo-server                 newline-delimited JSON-RPC on stdin/stdout
//   mcpdb-echo-server --http PORT     Streamable HTTP (JSON answers) on 127.0.0.1:PORT/mcp
// It answers initialize, ping, tools/list (one tool) and tools/call with fixed results; a request
// that carries the 2026-07-28 _meta (io.modelcontextprotocol/protocolVersion) gets the same
// results with "resultType":"complete", and server/discover is answered.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "jsonrpc_scan.hpp"

namespace {

using mcpdb::bench::scanResponse;

// The answer to one message, or "" for a notification.
std::string answer(std::string_view line) {
  const auto info = scanResponse(line);
  if (info.raw_id.empty()) return {};
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += info.raw_id;
  if (line.find(R"("io.modelcontextprotocol/protocolVersion")") != std::string_view::npos) {
    if (info.method == "\"server/discover\"") {
      out +=
          R"(,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete"}})";
    } else if (info.method == "\"tools/list\"") {
      out +=
          R"(,"result":{"tools":[{"name":"echo","description":"Answers at once.","inputSchema":{"type":"object"}}],"resultType":"complete"}})";
    } else if (info.method == "\"tools/call\"") {
      out +=
          R"(,"result":{"content":[{"type":"text","text":"[{\"id\":\"doc-01\",\"title\":\"echo\"}]"}],"resultType":"complete"}})";
    } else {
      out += R"(,"error":{"code":-32601,"message":"Method not found"}})";
    }
    return out;
  }
  if (info.method == "\"initialize\"") {
    out +=
        R"(,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}})";
  } else if (info.method == "\"tools/list\"") {
    out +=
        R"(,"result":{"tools":[{"name":"echo","description":"Answers at once.","inputSchema":{"type":"object"}}]}})";
  } else if (info.method == "\"tools/call\"") {
    out +=
        R"(,"result":{"content":[{"type":"text","text":"[{\"id\":\"doc-01\",\"title\":\"echo\"}]"}]}})";
  } else {
    out += R"(,"result":{}})";
  }
  return out;
}

int serveStdio() {
  std::string buf;
  std::string out;
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n <= 0) return 0;
    buf.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (;;) {
      const auto nl = buf.find('\n', start);
      if (nl == std::string::npos) break;
      const std::string a = answer(std::string_view(buf).substr(start, nl - start));
      if (!a.empty()) {
        out += a;
        out += '\n';
      }
      start = nl + 1;
    }
    buf.erase(0, start);
    std::size_t off = 0;
    while (off < out.size()) {
      const ssize_t w = ::write(1, out.data() + off, out.size() - off);
      if (w <= 0) return 0;
      off += static_cast<std::size_t>(w);
    }
    out.clear();
  }
}

void serveConnection(int fd) {
  std::string in;
  char chunk[65536];
  for (;;) {
    std::size_t hend;
    while ((hend = in.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) return (void)::close(fd);
      in.append(chunk, static_cast<std::size_t>(n));
    }
    std::string head = in.substr(0, hend);
    std::transform(head.begin(), head.end(), head.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::size_t len = 0;
    if (const auto p = head.find("content-length:"); p != std::string::npos)
      len = std::strtoul(head.c_str() + p + 15, nullptr, 10);
    while (in.size() < hend + 4 + len) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) return (void)::close(fd);
      in.append(chunk, static_cast<std::size_t>(n));
    }
    const std::string body = in.substr(hend + 4, len);
    in.erase(0, hend + 4 + len);
    const std::string a = answer(body);
    std::string resp;
    if (a.empty()) {
      resp = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n";
    } else {
      resp =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: "
          "echo\r\nContent-Length: " +
          std::to_string(a.size()) + "\r\n\r\n" + a;
    }
    std::size_t off = 0;
    while (off < resp.size()) {
      const ssize_t w = ::send(fd, resp.data() + off, resp.size() - off, MSG_NOSIGNAL);
      if (w <= 0) return (void)::close(fd);
      off += static_cast<std::size_t>(w);
    }
  }
}

int serveHttp(int port) {
  const int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(ls, 256) != 0) {
    std::perror("echo-server: bind/listen");
    return 1;
  }
  for (;;) {
    const int fd = ::accept(ls, nullptr, nullptr);
    if (fd < 0) continue;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::thread(serveConnection, fd).detach();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--http") == 0) return serveHttp(std::atoi(argv[2]));
  return serveStdio();
}
