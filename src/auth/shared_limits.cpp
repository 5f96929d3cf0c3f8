#include "auth/shared_limits.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "auth/api_key.hpp"
#include "auth/redis_limit_store.hpp"

namespace mcpdb::auth {

namespace {

constexpr std::chrono::seconds kWarningEvery{10};

std::string storeProblem(std::string_view url) {
  auto e = parseStoreUrl(url);
  return e ? "" : e.error().message;
}

std::string prefixProblem(std::string_view p) {
  if (p.empty() || p.size() > 64) return "must be 1-64 characters";
  for (char c : p) {
    if (c <= ' ' || c > '~') return "must be printable ASCII without spaces";
  }
  return "";
}

using Clock = SharedLimits::Clock;

// A replica's name in the store: 16 random bytes, hex (no host, no process id: nothing mapped).
std::string newHolder() {
  std::string id = randomHex(16);
  if (id.empty()) throw std::runtime_error("shared limits: no random bytes");
  return id;
}

// After a slots write failed, the background thread tries again no sooner than this.
constexpr std::chrono::milliseconds kSlotsRetry{200};

std::chrono::milliseconds ceilMs(Clock::duration d) {
  return std::chrono::ceil<std::chrono::milliseconds>(std::max(d, Clock::duration::zero()));
}

}  // namespace

const config::Section<SharedLimitsSettings>& sharedLimitsSection() {
  using S = SharedLimitsSettings;
  static const auto s =
      config::Section<S>(
          "limits shared by every replica through one Redis or Valkey store: each key's rate "
          "limit and concurrency cap, and each source's failed-key backoff")
          .string("store", &S::store,
                  "the store, `redis://[user@]host[:port][/db]`; its password only from "
                  "$MCPDB_SHARED_LIMITS_PASSWORD (no TLS: Debian 12's hiredis has none)",
                  config::kRequired, storeProblem)
          .example("redis://10.0.0.5:6379/0")
          .string("key_prefix", &S::key_prefix,
                  "the start of every key the server writes (replicas sharing limits use the "
                  "same one)",
                  config::kOptional, prefixProblem)
          .millis("local_cache_ms", &S::local_cache, 0, 10000,
                  "how long a replica spends a lease of tokens, or remembers the store's "
                  "refusal, without asking the store again (0: every request asks)")
          .integer("lease_tokens", &S::lease_tokens, 1, 1000,
                   "tokens a replica takes from a key's shared bucket at once (at most its burst)")
          .choice(
              "on_store_down", &S::on_store_down,
              {{"fail_closed", OnStoreDown::FailClosed}, {"per_replica", OnStoreDown::PerReplica}},
              "when the store does not answer: `fail_closed` refuses requests (503); "
              "`per_replica` applies each replica's own limits (counted and logged)")
          .millis("connect_timeout_ms", &S::connect_timeout, 10, 5000,
                  "how long a (re)connection to the store may take")
          .millis("command_timeout_ms", &S::command_timeout, 5, 5000,
                  "how long one round trip to the store may take")
          .millis("slot_ttl_ms", &S::slot_ttl, 1000, 600000,
                  "how long a replica's count of a key's calls in flight (its concurrency slots) "
                  "lives in the store unless renewed (every third of it while calls run): what "
                  "a crashed replica's calls keep counting at most")
          .exampleYaml(
              "shared_limits:\n  store: redis://10.0.0.5:6379/0\n  on_store_down: fail_closed\n");
  return s;
}

SharedLimits::SharedLimits(SharedLimitsSettings settings, std::unique_ptr<LimitStore> store)
    : settings_(std::move(settings)), store_(std::move(store)), holder_(newHolder()) {}

SharedLimits::~SharedLimits() {
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    stopping_ = true;
  }
  slots_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  // A replica that stops releases what it still announces (calls still running end with it);
  // a store that is down is not waited for: the counts expire after slot_ttl_ms.
  if (!store_->up()) return;
  for (const auto& [client, slots] : slots_) {
    if (slots.held > 0 || slots.dirty) {
      (void)store_->setSlots(settings_.key_prefix + "conc:" + client, holder_, 0, 0,
                             settings_.slot_ttl);
    }
  }
}

SharedLimits::Verdict SharedLimits::enterCalls(const std::string& client, std::size_t calls,
                                               std::size_t cap) {
  const auto n = static_cast<std::int64_t>(calls);
  std::lock_guard<std::mutex> wire(wire_mu_);
  std::int64_t held = 0;
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    if (const auto it = slots_.find(client); it != slots_.end()) held = it->second.held;
  }
  auto r = store_->setSlots(settings_.key_prefix + "conc:" + client, holder_, held + n,
                            std::max<std::int64_t>(1, static_cast<std::int64_t>(cap)),
                            settings_.slot_ttl);
  if (!r) {
    const Verdict v = storeFailed(r.error());
    if (v == Verdict::PerReplica) {
      // Counted here all the same: announced to the store once it answers again.
      std::lock_guard<std::mutex> lock(slots_mu_);
      Slots& s = slots_[client];
      s.held += n;
      s.dirty = true;
      startWorker();
    }
    return v;
  }
  storeAnswered();
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(slots_mu_);
  if (!r->admitted) return Verdict::Limited;
  Slots& s = slots_[client];
  s.held += n;
  s.written = now;
  // Calls ended while the store was asked: the store holds more than `held` until the next write.
  if (s.held != held + n) s.dirty = true;
  startWorker();
  if (s.dirty) slots_cv_.notify_one();
  return Verdict::Admitted;
}

void SharedLimits::leaveCalls(const std::string& client, std::size_t calls) {
  std::lock_guard<std::mutex> lock(slots_mu_);
  const auto it = slots_.find(client);
  if (it == slots_.end()) return;
  it->second.held = std::max<std::int64_t>(0, it->second.held - static_cast<std::int64_t>(calls));
  it->second.dirty = true;
  slots_cv_.notify_one();
}

std::size_t SharedLimits::slotsHeld(const std::string& client) const {
  std::lock_guard<std::mutex> lock(slots_mu_);
  const auto it = slots_.find(client);
  return it == slots_.end() ? 0 : static_cast<std::size_t>(it->second.held);
}

void SharedLimits::syncSlots(Clock::time_point now) {
  std::lock_guard<std::mutex> wire(wire_mu_);
  const auto renew_every = settings_.slot_ttl / 3;
  std::vector<std::pair<std::string, std::int64_t>> todo;
  {
    std::lock_guard<std::mutex> lock(slots_mu_);
    for (auto& [client, s] : slots_) {
      if (s.dirty || (s.held > 0 && now - s.written >= renew_every)) {
        todo.emplace_back(client, s.held);
        s.dirty = false;  // a change from now on sets it again
      }
    }
  }
  for (const auto& [client, held] : todo) {
    // Unchecked (cap 0): a renewal or a release never refuses calls already running.
    auto r = store_->setSlots(settings_.key_prefix + "conc:" + client, holder_, held, 0,
                              settings_.slot_ttl);
    std::lock_guard<std::mutex> lock(slots_mu_);
    const auto it = slots_.find(client);
    if (it == slots_.end()) continue;
    if (!r) {
      it->second.dirty = true;
      continue;
    }
    it->second.written = now;
    if (it->second.held == 0 && !it->second.dirty) slots_.erase(it);
  }
}

void SharedLimits::startWorker() {
  if (worker_.joinable()) return;
  worker_ = std::thread([this] {
    const auto every =
        std::max<Clock::duration>(settings_.slot_ttl / 3, std::chrono::milliseconds(1));
    auto anyDirty = [this] {
      return std::any_of(slots_.begin(), slots_.end(),
                         [](const auto& e) { return e.second.dirty; });
    };
    std::unique_lock<std::mutex> lock(slots_mu_);
    while (!stopping_) {
      slots_cv_.wait_for(lock, every, [&] { return stopping_ || anyDirty(); });
      if (stopping_) break;
      lock.unlock();
      syncSlots();
      lock.lock();
      // Still dirty: the store did not answer (or a call ended meanwhile): not before a pause.
      if (anyDirty() && !store_->up()) {
        slots_cv_.wait_for(lock, kSlotsRetry, [&] { return stopping_; });
      }
    }
  });
}

SharedLimits::Decision SharedLimits::takeToken(const std::string& client, double rate, double burst,
                                               Clock::time_point now) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Lease& l = leases_[client];
    if (l.tokens > 0 && now < l.expires) {
      --l.tokens;
      return {Verdict::Admitted, {}};
    }
    if (now < l.limited_until) return {Verdict::Limited, ceilMs(l.retry_at - now)};
  }
  // No lease left: ask the store (outside the lock: other keys go on meanwhile).
  const std::int64_t burst_tokens = std::max<std::int64_t>(1, static_cast<std::int64_t>(burst));
  const std::int64_t want =
      settings_.local_cache.count() == 0
          ? 1
          : std::clamp<std::int64_t>(static_cast<std::int64_t>(settings_.lease_tokens), 1,
                                     burst_tokens);
  auto grant = store_->takeTokens(settings_.key_prefix + "rate:" + client, rate, burst, want);
  if (!grant) return {storeFailed(grant.error()), std::chrono::milliseconds(1000)};
  storeAnswered();
  std::lock_guard<std::mutex> lock(mu_);
  Lease& l = leases_[client];
  if (grant->granted == 0) {
    l.retry_at = now + grant->wait;
    l.limited_until = now + std::min<Clock::duration>(grant->wait, settings_.local_cache);
    return {Verdict::Limited, grant->wait};
  }
  // Tokens still leased (another thread's lease meanwhile) are kept; the new ones join them.
  l.tokens = (now < l.expires ? l.tokens : 0) + grant->granted - 1;
  l.expires = now + settings_.local_cache;
  l.limited_until = {};
  return {Verdict::Admitted, {}};
}

SharedLimits::FailureDecision SharedLimits::recordFailure(std::string_view source,
                                                          const AuthThrottleSettings& settings) {
  std::string key = settings_.key_prefix + "authfail:";
  key += source;
  auto count = store_->recordFailure(key, settings);
  if (!count) return {storeFailed(count.error()), {}};
  storeAnswered();
  return {Verdict::Admitted, *count};
}

SharedLimits::Verdict SharedLimits::storeFailed(const Error& e) {
  const bool closed = settings_.on_store_down == OnStoreDown::FailClosed;
  (closed ? refusals_ : fallbacks_).fetch_add(1, std::memory_order_relaxed);
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (!warned_down_ || now - last_warning_ >= kWarningEvery) {
    warned_down_ = true;
    last_warning_ = now;
    // The detail names host:port and the client library's reason; never the password.
    spdlog::warn(
        "shared limits: {} ({}); {} (fallbacks so far: {}, refusals so far: {})", e.message,
        e.detail,
        closed ? "on_store_down fail_closed: requests are refused (503) until it answers"
               : "on_store_down per_replica: each replica applies its own limits until it answers",
        fallbacks(), storeDownRefusals());
  }
  return closed ? Verdict::StoreDown : Verdict::PerReplica;
}

void SharedLimits::storeAnswered() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!warned_down_) return;
  warned_down_ = false;
  spdlog::info("shared limits: the store answers again; limits are shared again");
}

}  // namespace mcpdb::auth
