#include "auth/redis_limit_store.hpp"
#include "common/hex.hpp"

#include <hiredis.h>
#include <openssl/evp.h>
#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace mcpdb::auth {

namespace {

// A token bucket by the store's clock (microseconds). A bucket left alone until it would be full
// again expires: absent means full, so idle keys cost the store no memory.
constexpr std::string_view kTakeTokens = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'us')
local tokens = tonumber(s[1])
local last = tonumber(s[2])
if tokens == nil or last == nil then
  tokens = burst
  last = now
end
if now > last then
  tokens = tokens + (now - last) * rate / 1000000
  last = now
end
if tokens > burst then tokens = burst end
local granted = math.floor(tokens)
if granted > want then granted = want end
if granted < 0 then granted = 0 end
tokens = tokens - granted
local wait = 0
if granted == 0 then wait = math.ceil((1 - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'us', string.format('%.0f', last))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {granted, wait}
)lua";

// AuthThrottle::onFailure's rules by the store's clock (milliseconds); the key expires after
// `forget` quiet, which is the local throttle's "a source quiet this long starts over".
constexpr std::string_view kRecordFailure = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free = tonumber(ARGV[1])
local base = tonumber(ARGV[2])
local maxb = tonumber(ARGV[3])
local forget = tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'failures', 'until')
local failures = (tonumber(s[1]) or 0) + 1
local untilms = tonumber(s[2]) or 0
local retry = 0
local started = 0
if failures > free then
  local d = failures - free - 1
  if d > 30 then d = 30 end
  local backoff = base * (2 ^ d)
  if backoff > maxb then backoff = maxb end
  if untilms <= now then started = 1 end
  if now + backoff > untilms then untilms = now + backoff end
  retry = untilms - now
end
redis.call('HSET', KEYS[1], 'failures', string.format('%d', failures), 'until', string.format('%.0f', untilms))
redis.call('PEXPIRE', KEYS[1], forget)
return {failures, retry, started}
)lua";

// A key's concurrency slots, one hash field per holder (replica): "count:expiry_ms" by the store's
// clock. Expired holders (a crashed replica) are dropped first; the holder's new count is set only
// if every live holder then holds at most the cap (ARGV[3] > 0), or unchecked (0: renewal,
// release); count 0 removes the holder, and an empty hash is gone. The key itself expires with
// its latest holder. Arguments only: no value ever becomes script text.
constexpr std::string_view kSetSlots = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me = ARGV[1]
local held = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local h = redis.call('HGETALL', KEYS[1])
local others = 0
local latest = 0
for i = 1, #h, 2 do
  local c, e = string.match(h[i + 1], '^(%d+):(%d+)$')
  if c == nil or tonumber(e) <= now then
    redis.call('HDEL', KEYS[1], h[i])
  elseif h[i] ~= me then
    others = others + tonumber(c)
    if tonumber(e) > latest then latest = tonumber(e) end
  end
end
if cap > 0 and held > 0 and others + held > cap then
  return {0, others}
end
if held > 0 then
  redis.call('HSET', KEYS[1], me, string.format('%d:%.0f', held, now + ttl))
  if now + ttl > latest then latest = now + ttl end
else
  redis.call('HDEL', KEYS[1], me)
end
if latest > now then redis.call('PEXPIREAT', KEYS[1], latest) end
return {1, others + held}
)lua";

std::string sha1Hex(std::string_view text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), md, &len, EVP_sha1(), nullptr);
  return lowerHex(std::span<const unsigned char>(md, len));
}

timeval toTimeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyFree>;

ReplyPtr command(redisContext* c, const std::vector<std::string_view>& argv) {
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lens;
  for (auto a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  return ReplyPtr(static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data())));
}

// The first word of a server error ("NOAUTH", "WRONGPASS", "ERR"): the class, never free text.
std::string errorClass(const redisReply& r) {
  std::string_view s(r.str != nullptr ? r.str : "", r.len);
  s = s.substr(0, std::min<std::size_t>(s.find(' '), 32));
  std::string out;
  for (char ch : s) out += (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ? ch : '?';
  return out.empty() ? "ERR" : out;
}

std::string format(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

struct RedisLimitStore::Script {
  explicit Script(std::string_view b) : body(b), sha(sha1Hex(b)) {}
  std::string_view body;
  std::string sha;
};

std::string StoreEndpoint::display() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port) + "/" + std::to_string(db);
}

Result<StoreEndpoint> parseStoreUrl(std::string_view url) {
  auto bad = [](std::string m) { return makeError(Code::InvalidArgument, std::move(m)); };
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, 9) == "rediss://") {
    return bad(
        "TLS to the store (rediss://) is not supported: Debian 12's hiredis 0.14 has no TLS; "
        "keep the store on a private network or loopback");
  }
  if (url.substr(0, kScheme.size()) != kScheme) return bad("expected redis://host[:port][/db]");
  std::string_view rest = url.substr(kScheme.size());
  StoreEndpoint e;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = rest.substr(0, at);
    if (userinfo.find(':') != std::string_view::npos) {
      return bad(
          "the store's password does not belong in the config: set "
          "MCPDB_SHARED_LIMITS_PASSWORD in the environment");
    }
    e.user = std::string(userinfo);
    rest = rest.substr(at + 1);
  }
  std::string_view hostport = rest;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    const std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) {
      const auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), e.db);
      if (ec != std::errc() || p != db.data() + db.size() || e.db < 0 || e.db > 1000000) {
        return bad("the database after the host must be a number (redis://host:port/0)");
      }
    }
  }
  std::string_view port_text;
  if (!hostport.empty() && hostport.front() == '[') {
    const auto close = hostport.find(']');
    if (close == std::string_view::npos) return bad("expected [IPV6]:PORT");
    e.host = std::string(hostport.substr(1, close - 1));
    if (close + 1 < hostport.size()) {
      if (hostport[close + 1] != ':') return bad("expected [IPV6]:PORT");
      port_text = hostport.substr(close + 2);
    }
  } else if (const auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
    e.host = std::string(hostport.substr(0, colon));
    port_text = hostport.substr(colon + 1);
  } else {
    e.host = std::string(hostport);
  }
  if (e.host.empty() || e.host.size() > 253) return bad("the store URL names no host");
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [p, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || p != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      return bad("the store's port must be 1-65535");
    }
    e.port = static_cast<std::uint16_t>(port);
  }
  return e;
}

void RedisLimitStore::ContextFree::operator()(redisContext* c) const {
  redisFree(c);
}

RedisLimitStore::RedisLimitStore(StoreEndpoint endpoint, std::string password,
                                 RedisTimeouts timeouts)
    : endpoint_(std::move(endpoint)), password_(std::move(password)), timeouts_(timeouts) {}

RedisLimitStore::~RedisLimitStore() = default;

bool RedisLimitStore::up() const {
  return up_.load(std::memory_order_relaxed);
}

Error RedisLimitStore::failLocked(std::string reason) {
  ctx_.reset();
  up_ = false;
  backoff_ =
      std::clamp(backoff_ * 2, std::chrono::milliseconds(100), std::chrono::milliseconds(5000));
  retry_at_ = Clock::now() + backoff_;
  return Error{Code::Unavailable, "the shared limits store is unavailable",
               endpoint_.display() + ": " + std::move(reason)};
}

Result<void> RedisLimitStore::connectLocked() {
  if (Clock::now() < retry_at_) {
    return Error{Code::Unavailable, "the shared limits store is unavailable",
                 endpoint_.display() + ": waiting before the next reconnect"};
  }
  ContextPtr c(redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port,
                                       toTimeval(timeouts_.connect)));
  if (!c) return failLocked("out of memory");
  if (c->err != 0) return failLocked(std::string("connect: ") + c->errstr);
  if (redisSetTimeout(c.get(), toTimeval(timeouts_.command)) != REDIS_OK) {
    return failLocked("cannot set the command timeout");
  }
  ctx_ = std::move(c);
  if (!password_.empty()) {
    auto r = endpoint_.user.empty() ? command(ctx_.get(), {"AUTH", password_})
                                    : command(ctx_.get(), {"AUTH", endpoint_.user, password_});
    if (!r) return failLocked(std::string("AUTH: ") + ctx_->errstr);
    if (r->type == REDIS_REPLY_ERROR) return failLocked("AUTH refused (" + errorClass(*r) + ")");
  }
  if (endpoint_.db != 0) {
    auto r = command(ctx_.get(), {"SELECT", std::to_string(endpoint_.db)});
    if (!r) return failLocked(std::string("SELECT: ") + ctx_->errstr);
    if (r->type == REDIS_REPLY_ERROR) return failLocked("SELECT refused (" + errorClass(*r) + ")");
  }
  return {};
}

Result<std::vector<std::int64_t>> RedisLimitStore::run(const Script& script, std::string_view key,
                                                       const std::vector<std::string>& args,
                                                       std::size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ctx_) {
    if (auto c = connectLocked(); !c) return c.error();
  }
  std::vector<std::string_view> argv{"EVALSHA", script.sha, "1", key};
  for (const auto& a : args) argv.push_back(a);
  auto r = command(ctx_.get(), argv);
  if (r && r->type == REDIS_REPLY_ERROR &&
      std::string_view(r->str, r->len).starts_with("NOSCRIPT")) {
    // The server does not have the script (restarted, SCRIPT FLUSH): send it whole once.
    argv[0] = "EVAL";
    argv[1] = script.body;
    r = command(ctx_.get(), argv);
  }
  if (!r) return failLocked(ctx_->errstr);
  if (r->type == REDIS_REPLY_ERROR) return failLocked("script refused (" + errorClass(*r) + ")");
  if (r->type != REDIS_REPLY_ARRAY || r->elements != n) return failLocked("unexpected reply");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    if (r->element[i]->type != REDIS_REPLY_INTEGER) return failLocked("unexpected reply");
    out.push_back(r->element[i]->integer);
  }
  up_ = true;
  backoff_ = std::chrono::milliseconds(0);
  return out;
}

Result<TokenGrant> RedisLimitStore::takeTokens(std::string_view key, double rate, double burst,
                                               std::int64_t want) {
  static const Script script(kTakeTokens);
  auto r = run(script, key, {format(rate), format(burst), std::to_string(want)}, 2);
  if (!r) return r.error();
  TokenGrant g;
  g.granted = std::clamp<std::int64_t>((*r)[0], 0, want);
  g.wait = std::chrono::milliseconds(std::max<std::int64_t>((*r)[1], 0));
  return g;
}

Result<FailureCount> RedisLimitStore::recordFailure(std::string_view key,
                                                    const AuthThrottleSettings& s) {
  static const Script script(kRecordFailure);
  auto r = run(script, key,
               {std::to_string(s.free_failures), std::to_string(s.base_backoff.count()),
                std::to_string(s.max_backoff.count()), std::to_string(s.forget_after.count())},
               3);
  if (!r) return r.error();
  FailureCount f;
  f.failures = std::max<std::int64_t>((*r)[0], 0);
  f.retry_after = std::chrono::milliseconds(std::max<std::int64_t>((*r)[1], 0));
  f.backoff_started = (*r)[2] != 0;
  return f;
}

Result<SlotCount> RedisLimitStore::setSlots(std::string_view key, std::string_view holder,
                                            std::int64_t held, std::int64_t cap,
                                            std::chrono::milliseconds ttl) {
  static const Script script(kSetSlots);
  auto r = run(script, key,
               {std::string(holder), std::to_string(std::max<std::int64_t>(held, 0)),
                std::to_string(std::max<std::int64_t>(cap, 0)),
                std::to_string(std::max<std::int64_t>(ttl.count(), 1))},
               2);
  if (!r) return r.error();
  return SlotCount{(*r)[0] != 0, std::max<std::int64_t>((*r)[1], 0)};
}

}  // namespace mcpdb::auth
