#include "http_conn.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <stdexcept>

#include "jsonrpc_scan.hpp"

namespace mcpdb::bench {

Url parseUrl(const std::string& text) {
  const std::string prefix = "http://";
  if (text.rfind(prefix, 0) != 0)
    throw std::runtime_error("only http:// URLs are supported: " + text);
  const auto rest = text.substr(prefix.size());
  const auto slash = rest.find('/');
  const auto hostport = rest.substr(0, slash);
  const auto colon = hostport.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("URL needs a port: " + text);
  Url u;
  u.host = hostport.substr(0, colon);
  u.port = std::stoi(hostport.substr(colon + 1));
  u.path = slash == std::string::npos ? "/" : rest.substr(slash);
  if (u.host == "localhost") u.host = "127.0.0.1";
  if (u.host.rfind("127.", 0) != 0)
    throw std::runtime_error("the benchmark runs on loopback only: " + text);
  return u;
}

HttpConn::~HttpConn() {
  closeFd();
}

void HttpConn::closeFd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
}

bool HttpConn::connect() {
  if (fd_ >= 0) return true;
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(url_.port));
  ::inet_pton(AF_INET, url_.host.c_str(), &addr.sin_addr);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    closeFd();
    return false;
  }
  // A connect to a port nobody listens on yet can succeed as a TCP self-connect when the port is
  // in the ephemeral range: that is not a server.
  sockaddr_in local{};
  socklen_t len = sizeof local;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
      local.sin_port == addr.sin_port) {
    closeFd();
    return false;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return true;
}

bool HttpConn::readMore(std::chrono::steady_clock::time_point deadline) {
  char buf[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    in_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The JSON-RPC response inside an SSE body: the data of the first event whose message has an id.
std::string messageFromSse(const std::string& body) {
  std::string data;
  std::size_t pos = 0;
  while (pos <= body.size()) {
    auto eol = body.find('\n', pos);
    if (eol == std::string::npos) eol = body.size();
    std::string line = body.substr(pos, eol - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (!data.empty() && scanResponse(data).id) return data;
      data.clear();
    } else if (line.rfind("data:", 0) == 0) {
      std::size_t start = 5;
      if (start < line.size() && line[start] == ' ') ++start;
      if (!data.empty()) data.push_back('\n');
      data.append(line, start);
    }
    pos = eol + 1;
  }
  return data;
}

}  // namespace

bool HttpConn::post(const std::string& body, HttpReply& reply, std::chrono::milliseconds timeout,
                    std::string_view extra_headers) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!connect()) return false;
    out_.clear();
    out_ += "POST " + url_.path + " HTTP/1.1\r\nHost: " + url_.host + ":" +
            std::to_string(url_.port) +
            "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
    if (!session_id.empty()) out_ += "Mcp-Session-Id: " + session_id + "\r\n";
    if (!protocol_version.empty()) out_ += "MCP-Protocol-Version: " + protocol_version + "\r\n";
    out_ += extra_headers;
    if (!bearer.empty()) out_ += "Authorization: Bearer " + bearer + "\r\n";
    out_ += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    out_ += body;
    std::size_t off = 0;
    bool write_failed = false;
    while (off < out_.size()) {
      const ssize_t n = ::send(fd_, out_.data() + off, out_.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        write_failed = true;
        break;
      }
      off += static_cast<std::size_t>(n);
    }
    if (write_failed) {
      closeFd();  // a kept-alive connection the server closed: reconnect once
      continue;
    }
    // Headers.
    std::size_t hend;
    while ((hend = in_.find("\r\n\r\n")) == std::string::npos) {
      if (!readMore(deadline)) break;
    }
    if (hend == std::string::npos) {
      const bool nothing = in_.empty();
      closeFd();
      if (nothing && attempt == 0 && std::chrono::steady_clock::now() < deadline) continue;
      return false;
    }
    const std::string head = in_.substr(0, hend);
    in_.erase(0, hend + 4);
    reply = HttpReply{};
    long content_length = -1;
    bool chunked = false;
    bool close_after = false;
    bool sse = false;
    std::size_t pos = head.find("\r\n");
    const std::string status_line = head.substr(0, pos);
    const auto sp = status_line.find(' ');
    if (sp != std::string::npos) reply.status = std::atoi(status_line.c_str() + sp + 1);
    while (pos != std::string::npos && pos < head.size()) {
      const std::size_t start = pos + 2;
      pos = head.find("\r\n", start);
      const std::string line =
          head.substr(start, pos == std::string::npos ? std::string::npos : pos - start);
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const std::string name = lower(line.substr(0, colon));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      if (name == "content-length") content_length = std::atol(value.c_str());
      if (name == "transfer-encoding" && lower(value).find("chunked") != std::string::npos)
        chunked = true;
      if (name == "connection" && lower(value) == "close") close_after = true;
      if (name == "content-type" && lower(value).find("text/event-stream") != std::string::npos)
        sse = true;
      if (name == "mcp-session-id") reply.session_id = value;
    }
    std::string payload;
    if (chunked) {
      for (;;) {
        std::size_t le;
        while ((le = in_.find("\r\n")) == std::string::npos) {
          if (!readMore(deadline)) return closeFd(), false;
        }
        const long size = std::strtol(in_.c_str(), nullptr, 16);
        if (size == 0) {
          // Last chunk, then the (empty) trailer.
          while (in_.find("\r\n\r\n") == std::string::npos && in_.size() < le + 4) {
            if (!readMore(deadline)) return closeFd(), false;
          }
          const auto tend = in_.find("\r\n", le + 2);
          in_.erase(0, tend == std::string::npos ? in_.size() : tend + 2);
          break;
        }
        while (in_.size() < le + 2 + static_cast<std::size_t>(size) + 2) {
          if (!readMore(deadline)) return closeFd(), false;
        }
        payload.append(in_, le + 2, static_cast<std::size_t>(size));
        in_.erase(0, le + 2 + static_cast<std::size_t>(size) + 2);
        // An SSE response stream may stay open after the response: stop once we hold it.
        if (sse && payload.find("\n\n") != std::string::npos &&
            scanResponse(messageFromSse(payload)).id) {
          close_after = true;  // the rest of this stream is not ours to wait for
          break;
        }
      }
    } else if (content_length >= 0) {
      while (in_.size() < static_cast<std::size_t>(content_length)) {
        if (!readMore(deadline)) return closeFd(), false;
      }
      payload = in_.substr(0, static_cast<std::size_t>(content_length));
      in_.erase(0, static_cast<std::size_t>(content_length));
    } else if (reply.status != 202 && reply.status != 204) {
      // Body until close (or, for SSE, until the response event arrived).
      for (;;) {
        if (sse && in_.find("\n\n") != std::string::npos && scanResponse(messageFromSse(in_)).id)
          break;
        if (!readMore(deadline)) break;
      }
      payload.swap(in_);
      close_after = true;
    }
    reply.message = sse ? messageFromSse(payload) : payload;
    if (close_after) closeFd();
    return true;
  }
  return false;
}

}  // namespace mcpdb::bench
