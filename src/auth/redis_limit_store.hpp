#pragma once
// The shared limits kept in Redis (or Valkey: the same protocol and scripting) through hiredis.
// Every operation is one Lua script run atomically by the server (EVALSHA, EVAL when the server
// answers NOSCRIPT), reading the server's clock (TIME). One connection, used under a lock, with
// short connect and command timeouts; after a failure the store is not tried again before a
// backoff (100 ms doubling to 5 s), so a store that is down costs a call no wait at all, and a
// reconnect attempt costs one call at most the connect timeout. No TLS: Debian 12's hiredis 0.14
// has none (SECURITY.md, "Limits across replicas").

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/limit_store.hpp"

struct redisContext;

namespace mcpdb::auth {

struct StoreEndpoint {
  std::string host;
  std::uint16_t port = 6379;
  int db = 0;
  std::string user;             // Redis 6 ACL user (AUTH user password); empty: AUTH password only
  std::string display() const;  // host:port/db, for the operator's log
};

// `redis://[user@]host[:port][/db]`. A password in the URL is refused (it comes from the
// environment only); `rediss://` is refused (no TLS with hiredis 0.14).
Result<StoreEndpoint> parseStoreUrl(std::string_view url);

struct RedisTimeouts {
  std::chrono::milliseconds connect{250};
  std::chrono::milliseconds command{100};
};

class RedisLimitStore final : public LimitStore {
 public:
  // `password`: from the environment (never the config); empty: no AUTH.
  RedisLimitStore(StoreEndpoint endpoint, std::string password, RedisTimeouts timeouts);
  ~RedisLimitStore() override;
  RedisLimitStore(const RedisLimitStore&) = delete;
  RedisLimitStore& operator=(const RedisLimitStore&) = delete;

  Result<TokenGrant> takeTokens(std::string_view key, double rate, double burst,
                                std::int64_t want) override;
  Result<FailureCount> recordFailure(std::string_view key,
                                     const AuthThrottleSettings& settings) override;
  Result<SlotCount> setSlots(std::string_view key, std::string_view holder, std::int64_t held,
                             std::int64_t cap, std::chrono::milliseconds ttl) override;
  bool up() const override;

 private:
  struct Script;
  struct ContextFree {
    void operator()(redisContext* c) const;
  };
  using ContextPtr = std::unique_ptr<redisContext, ContextFree>;
  using Clock = std::chrono::steady_clock;

  // The script's integer array reply (`n` integers), or why not. Connects first when needed.
  Result<std::vector<std::int64_t>> run(const Script& script, std::string_view key,
                                        const std::vector<std::string>& args, std::size_t n);
  Result<void> connectLocked();
  Error failLocked(std::string reason);

  const StoreEndpoint endpoint_;
  const std::string password_;
  const RedisTimeouts timeouts_;
  mutable std::mutex mu_;
  ContextPtr ctx_;
  Clock::time_point retry_at_{};
  std::chrono::milliseconds backoff_{0};
  std::atomic<bool> up_{false};  // read by the metrics without the lock
};

}  // namespace mcpdb::auth
