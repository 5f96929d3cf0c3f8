// A cancellation reaches PostgreSQL from a thread of its own (common/side_task.hpp). The defect
// class: a stop callback runs on the thread that requests the stop (the stdio reader that read
// notifications/cancelled, the HTTP I/O thread that saw its client go), and PQcancel connected to
// the server from there, so that thread waited for the database (minutes, with a server that
// accepts and never answers). The server's connection goes through a relay the test controls:
// the call's own connection is relayed both ways, the cancel's is accepted and never answered.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <chrono>
#include <stop_token>
#include <thread>
#include <vector>

#include "engines/postgres/exchange.hpp"
#include "integration/postgres/fixture.hpp"
#include "support/loopback_listener.hpp"

namespace mcpdb::postgres::itest {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int connectTo(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Relays the first connection it accepts to host:port; later ones are held open, never read.
class Relay {
 public:
  Relay(std::string host, int port) : host_(std::move(host)), port_(port) {
    std::uint16_t bound = 0;
    listener_ = mcpdb::testing::listenOnLoopback(8, &bound);
    EXPECT_GE(listener_, 0);
    local_port_ = bound;
    thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
  }
  ~Relay() {
    thread_.request_stop();
    thread_.join();
    releaseHeld();
    ::close(listener_);
  }
  int port() const { return local_port_; }
  int held() const { return held_count_.load(); }
  // Closes the connections held unanswered (the cancel's sender then sees the end).
  void releaseHeld() {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : held_) ::close(fd);
    held_.clear();
  }

 private:
  void run(const std::stop_token& stop) {
    int client = -1;
    int server = -1;
    char buf[16384];
    while (!stop.stop_requested()) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      if (client >= 0) fds.push_back({client, POLLIN, 0});
      if (server >= 0) fds.push_back({server, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 50) <= 0) continue;
      if ((fds[0].revents & POLLIN) != 0) {
        const int fd = ::accept(listener_, nullptr, nullptr);
        if (fd >= 0 && client < 0) {
          client = fd;
          server = connectTo(host_, port_);
        } else if (fd >= 0) {
          std::lock_guard<std::mutex> lock(mu_);
          held_.push_back(fd);  // the cancel's connection: accepted, never answered
          ++held_count_;
        }
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const int from = fds[i].fd;
        const int to = from == client ? server : client;
        const ssize_t n = ::read(from, buf, sizeof buf);
        if (n <= 0 || to < 0 || ::write(to, buf, static_cast<std::size_t>(n)) != n) {
          ::close(client);
          ::close(server);
          client = server = -1;
          break;
        }
      }
    }
    if (client >= 0) ::close(client);
    if (server >= 0) ::close(server);
  }

  std::string host_;
  int port_;
  int listener_ = -1;
  int local_port_ = 0;
  std::mutex mu_;
  std::vector<int> held_;  // under mu_
  std::atomic<int> held_count_{0};
  std::jthread thread_;
};

TEST(PostgresCancel, TheThreadAskingNeverWaitsForTheDatabase) {
  const std::string dsn = requireEnv("POSTGRES_DSN");
  PQconninfoOption* opts = PQconninfoParse(dsn.c_str(), nullptr);
  ASSERT_NE(opts, nullptr);
  std::string host;
  int port = 5432;
  for (auto* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    if (std::string(o->keyword) == "host") host = o->val;
    if (std::string(o->keyword) == "port") port = std::atoi(o->val);
  }
  PQconninfoFree(opts);
  ASSERT_FALSE(host.empty());
  Relay relay(host, port);
  const std::string port_text = std::to_string(relay.port());
  const char* keys[] = {"dbname", "host", "port", nullptr};
  const char* values[] = {dsn.c_str(), "127.0.0.1", port_text.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  ASSERT_EQ(PQstatus(conn), CONNECTION_OK) << PQerrorMessage(conn);
  PGcancel* cancel = PQgetCancel(conn);
  ASSERT_NE(cancel, nullptr);

  std::stop_source stop;
  Clock::duration asked{};
  Clock::duration scope{};
  const auto started = Clock::now();
  {
    // Lets the cancel's connection go half a second after it arrived. Declared first, so that the
    // canceller below is destroyed before it is joined: the scope then ends only once the cancel
    // has gone (no cancel is ever sent after its exchange). (Were the cancel sent on this
    // thread, request_stop() itself would wait for this release: the test fails, never hangs.)
    std::jthread release([&relay] {
      for (int i = 0; i < 500 && relay.held() == 0; ++i) std::this_thread::sleep_for(10ms);
      std::this_thread::sleep_for(500ms);
      relay.releaseHeld();
    });
    CancelOnStop on_stop(stop.get_token(), cancel, nullptr);
    stop.request_stop();  // runs the callback here, on this thread
    asked = Clock::now() - started;
    // The cancel is on its way (its connection accepted by the relay, never answered).
    for (int i = 0; i < 200 && relay.held() == 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(relay.held(), 1);
  }
  scope = Clock::now() - started;
  EXPECT_LT(asked, 300ms) << "the thread requesting the stop waited for PQcancel";
  EXPECT_GE(scope, 450ms) << "the exchange's scope ended before its cancel had gone";
  PQfreeCancel(cancel);
  PQfinish(conn);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
