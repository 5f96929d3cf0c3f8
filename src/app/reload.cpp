#include "app/reload.hpp"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "common/sha256_md.hpp"
#include "common/hex.hpp"

namespace mcpdb::app {
namespace {

// The `server:` settings that only a restart applies: the worker pool and its queue, the message
// and page sizes, the result memory budget, the drain, the fence and log format, the watch itself.
// (self_check and the bulkhead sizes are applied by a reload; require_environment has no effect.)
constexpr std::string_view kRestartOnlyServer[] = {"workers",   "max_queue",  "max_message_bytes",
                                                   "page_size", "drain_ms",   "max_result_memory",
                                                   "fence",     "log_format", "watch_config"};

// The `http:` settings a reload applies: the client keys and their limits. Every other one (the
// listener's TLS files, hosts and origins, connection and session caps, threads, metrics, the
// shared limit store, stateless mode, and the auth mode, which was checked against the listen
// address: `none` only on loopback) is read once when the listener starts.
constexpr std::string_view kReloadableHttp[] = {"clients", "rate_limit", "max_concurrent_calls"};

YAML::Node childOf(const YAML::Node& node, const std::string& key) {
  return node.IsDefined() && node.IsMap() ? node[key] : YAML::Node();
}

bool sameNode(const YAML::Node& a, const YAML::Node& b) {
  return sameYaml(a, b);
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// Each line of `text` (an assembly's error report) to the log, as one reload line each.
void logLines(std::string_view why, const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) spdlog::error("reload ({}): {}", why, line);
  }
}

}  // namespace

std::vector<std::string> restartOnlyChanges(const YAML::Node& before, const YAML::Node& after) {
  std::vector<std::string> out;
  const YAML::Node sb = childOf(before, "server");
  const YAML::Node sa = childOf(after, "server");
  for (const auto key : kRestartOnlyServer) {
    const std::string k(key);
    if (!sameNode(childOf(sb, k), childOf(sa, k))) out.push_back("server." + k);
  }
  const YAML::Node hb = childOf(before, "http");
  const YAML::Node ha = childOf(after, "http");
  std::set<std::string> keys;
  for (const YAML::Node& h : {hb, ha}) {
    if (!h.IsDefined() || !h.IsMap()) continue;
    for (const auto& kv : h) {
      if (kv.first.IsScalar()) keys.insert(kv.first.Scalar());
    }
  }
  for (const auto& k : keys) {
    if (std::find(std::begin(kReloadableHttp), std::end(kReloadableHttp), k) !=
        std::end(kReloadableHttp))
      continue;
    if (!sameNode(childOf(hb, k), childOf(ha, k))) out.push_back("http." + k);
  }
  if (!sameNode(childOf(before, "audit"), childOf(after, "audit"))) out.push_back("audit");
  // The tracer and its export thread are made once, at start (telemetry:).
  if (!sameNode(childOf(before, "telemetry"), childOf(after, "telemetry")))
    out.push_back("telemetry");
  return out;
}

bool engineUnchanged(const YAML::Node& before, const YAML::Node& after, std::string_view engine) {
  return sameSection(before, after, engine) && sameSection(before, after, "limits") &&
         sameSection(before, after, "embedding");
}

ListChanges listChanges(const protocol::ToolRegistry& before, const protocol::ToolRegistry& after) {
  auto toolsOf = [](const protocol::ToolRegistry& r) {
    Json all = Json::array();
    for (const auto& t : r.tools()) all.push_back(protocol::ToolRegistry::describe(*t));
    return all;
  };
  auto resourcesOf = [](const protocol::ToolRegistry& r) {
    Json all = Json::array();
    for (const auto& x : r.resources()) all.push_back(protocol::ToolRegistry::describe(*x));
    for (const auto& t : r.templates()) all.push_back(protocol::ToolRegistry::describe(t));
    return all;
  };
  return {toolsOf(before) != toolsOf(after), resourcesOf(before) != resourcesOf(after)};
}

FileStamp stampOf(const std::string& path, std::string* text) {
  FileStamp s;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return s;
  if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes) return s;
  std::ifstream in(path, std::ios::binary);
  if (!in) return s;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad() || bytes.size() > kMaxConfigBytes) return s;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, sha256Md(), nullptr) != 1) return s;
  s.ok = true;
  s.size = bytes.size();
  s.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  s.digest.assign(reinterpret_cast<const char*>(md), len);
  if (text != nullptr) *text = std::move(bytes);
  return s;
}

Reloader::Reloader(AppOptions options, const Env& env, protocol::ServerCore& core,
                   std::shared_ptr<Assembly> current, std::shared_ptr<void> background, Hooks hooks,
                   Settings settings)
    : options_(std::move(options)),
      env_(env),
      core_(core),
      hooks_(std::move(hooks)),
      settings_(settings),
      current_(std::move(current)),
      background_(std::move(background)) {
  if (current_->config_path) {
    last_applied_ = stampOf(*current_->config_path);
    last_seen_ = last_applied_;
  }
  thread_ = std::thread([this] { run(); });
}

Reloader::~Reloader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Reloader::request() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = true;
  }
  cv_.notify_all();
}

void Reloader::setApply(std::function<void(Assembly&, const Assembly&)> apply) {
  std::lock_guard<std::mutex> lock(reload_mu_);
  hooks_.apply = std::move(apply);
}

std::string Reloader::lastRefusal() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_refusal_;
}

std::shared_ptr<Assembly> Reloader::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return current_;
}

void Reloader::addMetrics(observe::Metrics& metrics) {
  metrics.addCounter("mcpdb_config_reloads_total",
                     "Config reloads applied (SIGHUP or server.watch_config).",
                     [this] { return static_cast<double>(applied_.load()); });
  metrics.addCounter("mcpdb_config_reload_failures_total",
                     "Config reloads refused (the running config stayed).",
                     [this] { return static_cast<double>(refused_.load()); });
  metrics.addGauge("mcpdb_config_generation",
                   "The config generation serving new calls (1 at start, one more per reload).",
                   [this] { return static_cast<double>(generation_.load()); });
}

// The reload thread: one reload at a time. A request that comes while one runs makes one more
// after it; reloads are at least settings_.min_interval apart, so a storm of signals (or a file
// rewritten many times a second) coalesces instead of piling up assemblies.
void Reloader::run() {
  auto last = std::chrono::steady_clock::now() - settings_.min_interval;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, settings_.poll, [this] { return stopping_ || pending_; });
    if (stopping_) break;
    const auto wait = last + settings_.min_interval - std::chrono::steady_clock::now();
    if (pending_ && wait > std::chrono::steady_clock::duration::zero()) {
      cv_.wait_for(lock, wait, [this] { return stopping_; });
      if (stopping_) break;
    }
    const bool asked = pending_;
    pending_ = false;
    lock.unlock();
    const bool changed = !asked && settings_.watch && fileSettledAndChanged();
    if (asked || changed) {
      (void)reloadNow(asked ? "SIGHUP" : "the config file changed");
      last = std::chrono::steady_clock::now();
    }
    lock.lock();
  }
}

bool Reloader::fileSettledAndChanged() {
  std::lock_guard<std::mutex> lock(reload_mu_);  // the stamps, which reloadNow() writes
  const auto a = current();
  if (!a->config_path) return false;
  const FileStamp now = stampOf(*a->config_path);
  const bool settled = now.ok && now == last_seen_;  // the same on two looks a poll apart
  last_seen_ = now;
  return settled && !(now == last_applied_);
}

Reloader::Outcome Reloader::reloadNow(std::string_view why) {
  std::lock_guard<std::mutex> reload_lock(reload_mu_);
  const std::shared_ptr<Assembly> previous = current();
  if (!previous->config_path) {
    spdlog::info("reload ({}): the server runs the built-in allowlist; there is nothing to reload",
                 why);
    return Outcome::Skipped;
  }
  const std::string path = *previous->config_path;
  std::ostringstream err;
  auto refuse = [&](const std::string& reason) {
    ++refused_;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_refusal_ = err.str() + reason;
    }
    spdlog::error("reload ({}): refused, {}; the running config stays (generation {}, {} tool(s))",
                  why, reason, generation_.load(), previous->registry->size());
    return Outcome::Refused;
  };
  std::string text;
  const FileStamp stamp = stampOf(path, &text);
  if (!stamp.ok) return refuse("cannot read " + path + " (a regular file of at most 16 MiB)");
  if (settings_.watch) last_seen_ = stamp;
  // Each attempt is tried once: the watch does not retry a refused file until it changes again.
  last_applied_ = stamp;

  AppOptions o = options_;
  o.config_path = path;
  o.config_text = text;
  o.inherit = previous.get();
  std::optional<Assembly> made = assemble(o, env_, /*all_engines=*/false, err);
  if (!made) {
    logLines(why, err.str());
    return refuse("the config is invalid (see above)");
  }
  auto next = std::make_shared<Assembly>(std::move(*made));
  if (refuseUnservable(*next, env_, "it cannot serve", err)) {
    logLines(why, err.str());
    return refuse("it cannot serve (see above)");
  }

  // The previous generation's background check ends before its modules may move.
  background_.reset();
  // Engines whose inputs are unchanged keep their module, and with it their runtime: pools,
  // proofs and cached statements. The fresh twin goes to the previous assembly, which dies with
  // its last call. (Tool handlers hold their runtime, never their module: engines/engine.hpp.)
  std::vector<std::size_t> kept;
  std::vector<std::string> kept_names, rebuilt_names;
  for (std::size_t i = 0; i < next->modules.size() && i < previous->modules.size(); ++i) {
    if (!next->enabled[i]) continue;
    if (previous->enabled[i] &&
        engineUnchanged(previous->config.root, next->config.root, next->modules[i]->name())) {
      kept.push_back(i);
      kept_names.emplace_back(next->modules[i]->name());
    } else if (next->modules[i]->declaresTools()) {
      rebuilt_names.emplace_back(next->modules[i]->name());
    }
  }
  auto swapKept = [&] {
    for (const auto i : kept) std::swap(next->modules[i], previous->modules[i]);
  };
  swapKept();
  if (!kept.empty()) {
    // The registry again, in engine order, each kept engine's tools from its running module.
    auto registry = std::make_shared<protocol::ToolRegistry>();
    for (std::size_t i = 0; i < next->modules.size(); ++i) {
      if (!next->enabled[i]) continue;
      const bool is_kept = std::find(kept.begin(), kept.end(), i) != kept.end();
      Status st = is_kept ? next->modules[i]->registerTools(*registry, previous->services)
                          : next->modules[i]->registerTools(*registry, next->services);
      if (!st) {
        swapKept();
        return refuse("registering the " + std::string(next->modules[i]->name()) +
                      " tools again failed: " + operatorText(st.error()));
      }
    }
    next->registry = std::move(registry);
  }

  std::shared_ptr<void> background;
  if (hooks_.check && !hooks_.check(*next, background)) {
    background.reset();
    swapKept();
    return refuse("the start-up self-check refused it (see above)");
  }
  // An editor still saving: the bytes checked must be the file's bytes now.
  if (!(stampOf(path) == stamp)) {
    background.reset();
    swapKept();
    last_applied_ = FileStamp{};  // tried again once it settles
    return refuse("the file changed while it was read (an editor still saving?)");
  }

  const ListChanges lists = listChanges(*previous->registry, *next->registry);
  const std::vector<std::string> restart =
      restartOnlyChanges(previous->config.root, next->config.root);
  // The swap: calls from now on see the new surface; calls in flight keep theirs, which holds
  // `previous` until the last of them ends.
  const std::uint64_t generation =
      core_.replaceTools(next->registry,
                         protocol::SourceLimits{next->config.server.max_calls_per_source,
                                                next->config.server.max_calls_by_source},
                         next);
  generation_ = generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = next;
  }
  background_ = std::move(background);
  if (hooks_.apply) hooks_.apply(*next, *previous);
  ++applied_;
  spdlog::info(
      "reload ({}): applied {} (sha256 {}), generation {}: {} tool(s); engines kept as they ran "
      "(pools and proofs): {}; rebuilt: {}",
      why, path, lowerHex(stamp.digest).substr(0, 16), generation, next->registry->size(),
      kept_names.empty() ? "none" : joined(kept_names),
      rebuilt_names.empty() ? "none" : joined(rebuilt_names));
  if (!restart.empty()) {
    spdlog::warn(
        "reload ({}): changed but not applied, these need a restart (the running values stay): {}",
        why, joined(restart));
  }
  for (const auto& w : next->warnings) spdlog::warn("reload ({}): config: {}", why, w);
  if (hooks_.notify && (lists.tools || lists.resources)) hooks_.notify(lists);
  return Outcome::Applied;
}

}  // namespace mcpdb::app
