// <utility> must precede any Boost header: Boost 1.74's asio/awaitable.hpp uses std::exchange
// without including it, which g++ 12 in C++20 mode rejects.
#include <utility>

#include "fake_http_server.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <condition_variable>
#include <list>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace mcpdb::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::optional<std::string> FakeRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() &&
        std::equal(k.begin(), k.end(), name.begin(), [](unsigned char a, unsigned char b) {
          return std::tolower(a) == std::tolower(b);
        })) {
      return v;
    }
  }
  return std::nullopt;
}

std::string FakeRequest::path() const {
  return target.substr(0, target.find('?'));
}

struct FakeHttpServer::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::thread acceptThread;
  std::uint16_t port = 0;

  mutable std::mutex mu;
  std::condition_variable cv;  // wakes delayed handlers on stop
  bool stopping = false;
  FakeHandler handler;
  std::vector<FakeRequest> requests;
  std::size_t connections = 0;

  struct Conn {
    std::shared_ptr<tcp::socket> socket;
    std::thread thread;
  };
  std::list<Conn> conns;

  void startAccept() {
    auto socket = std::make_shared<tcp::socket>(ioc);
    acceptor.async_accept(*socket, [this, socket](const boost::system::error_code& ec) {
      if (ec) return;  // acceptor closed
      {
        std::lock_guard lock(mu);
        if (stopping) return;
        ++connections;
        conns.push_back(Conn{socket, std::thread([this, socket] { serve(*socket); })});
      }
      startAccept();
    });
  }

  void serve(tcp::socket& socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      boost::system::error_code ec;
      http::read(socket, buffer, req, ec);
      if (ec) return;

      FakeRequest rec;
      rec.method = std::string(req.method_string());
      rec.target = std::string(req.target());
      for (const auto& field : req)
        rec.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      rec.body = req.body();

      FakeHandler h;
      {
        std::lock_guard lock(mu);
        requests.push_back(rec);
        h = handler;
      }
      FakeResponse out = h ? h(rec) : FakeResponse{404, {}, "no handler"};

      if (out.delay.count() > 0) {
        std::unique_lock lock(mu);
        if (cv.wait_for(lock, out.delay, [this] { return stopping; })) return;
      }
      if (out.dropConnection) {
        socket.shutdown(tcp::socket::shutdown_both, ec);  // the fd stays open until stop()
        return;
      }

      http::response<http::string_body> res;
      res.version(req.version());
      res.result(static_cast<unsigned>(out.status));
      for (const auto& [k, v] : out.headers) res.set(k, v);
      res.body() = std::move(out.body);
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      http::write(socket, res, ec);
      if (ec || !req.keep_alive()) {
        socket.shutdown(tcp::socket::shutdown_both, ec);
        return;
      }
    }
  }
};

FakeHttpServer::FakeHttpServer(FakeHandler handler) : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->startAccept();
  impl_->acceptThread = std::thread([this] { impl_->ioc.run(); });
}

FakeHttpServer::~FakeHttpServer() {
  stop();
}

void FakeHttpServer::stop() {
  if (!impl_ || !impl_->acceptThread.joinable()) return;
  asio::post(impl_->ioc, [this] {
    boost::system::error_code ec;
    impl_->acceptor.close(ec);
  });
  impl_->acceptThread.join();  // run() returns once the accept handler is cancelled
  std::list<Impl::Conn> conns;
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    conns.swap(impl_->conns);
    // Unblocks threads sitting in a blocking read: shutdown(2) is safe from another thread.
    for (auto& c : conns) ::shutdown(c.socket->native_handle(), SHUT_RDWR);
  }
  impl_->cv.notify_all();
  for (auto& c : conns) {
    if (c.thread.joinable()) c.thread.join();
  }
}

std::uint16_t FakeHttpServer::port() const {
  return impl_->port;
}

std::string FakeHttpServer::url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port);
}

std::vector<FakeRequest> FakeHttpServer::requests() const {
  std::lock_guard lock(impl_->mu);
  return impl_->requests;
}

std::size_t FakeHttpServer::requestCount() const {
  std::lock_guard lock(impl_->mu);
  return impl_->requests.size();
}

void FakeHttpServer::clearRequests() {
  std::lock_guard lock(impl_->mu);
  impl_->requests.clear();
}

std::size_t FakeHttpServer::connectionCount() const {
  std::lock_guard lock(impl_->mu);
  return impl_->connections;
}

void FakeHttpServer::setHandler(FakeHandler handler) {
  std::lock_guard lock(impl_->mu);
  impl_->handler = std::move(handler);
}

std::uint16_t unusedLocalPort() {
  asio::io_context ioc;
  tcp::acceptor a(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  auto port = a.local_endpoint().port();
  a.close();
  return port;
}

}  // namespace mcpdb::test
