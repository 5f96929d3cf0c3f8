#pragma once
// The engine kit: what every engine with named sources shares, so that an engine writes only what
// is its own (its settings, its runtime, its tools, its checks). An engine module derives from
// kit::Module<Runtime> and gets:
// - its runtime made once, on first use, under one lock (registering tools, the start-up
//   self-check and doctor may ask for it from different threads); tool handlers capture it at
//   registration, so a call takes no lock of the kit's;
// - per-source runtimes (PerSource<R>): a slot per source, its runtime made once on first use,
//   an error naming the source when it cannot be made, read by a call without a lock;
// - findings named by source one way ("source 'name': ...") when there are several sources;
// - connection gauges summed over the sources and labelled by source, from one per-source sample.
// The free helpers beside it (describeLimits, toolNameProblem, sourceError) are the texts every
// engine writes the same way.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/env.hpp"
#include "common/limits.hpp"
#include "common/result.hpp"
#include "engines/engine.hpp"

namespace mcpdb::engines::kit {

// " At most N rows and K KiB per call (a truncated result says so), T ms timeout.": appended to
// a tool's description.
std::string describeLimits(const Limits& limits);

// "" for a valid tool name (protocol::isValidToolName), else the problem (a config key check).
std::string toolNameProblem(std::string_view name);

// The error of a source that cannot serve (a variable unset, a server down):
// "<engine> source '<source>': <what>", naming the source and never a value.
Error sourceError(Code code, std::string_view engine, std::string_view source,
                  std::string_view what);

// The variables of `vars` that `env` does not set, each once, in order (unsetVariables()).
std::vector<std::string> unsetOf(const std::vector<std::string>& vars, const Env& env);

// doctor's and the self-check's finding for a tool that embeds text (`check` its id): Unusable,
// with the fix, when the embedding model cannot be made (services.embedder_check, which reads
// no model); nullopt when it can or nothing checks it.
std::optional<Finding> embeddingModelFinding(const std::string& check, const std::string& tool,
                                             EngineServices& services);

// Prefixes each finding's message with "source '<source>': " (the one form for every engine).
void nameSource(std::vector<Finding>& findings, std::string_view source);

// Readiness probes (EngineModule::probes): the statement a SQL engine sends ("SELECT 1": no
// table, no privilege, nothing the guard or the proof could object to).
inline constexpr std::string_view kProbeStatement = "SELECT 1";
// How long a probe waits for one of its source's connections when every one is leased: briefly,
// so that it never stands in a call's place in the pool's queue for long.
inline constexpr std::chrono::milliseconds kProbeSlotWait{100};
// The deadline of a probe's wait for a connection: kProbeSlotWait from now, or `deadline`.
std::chrono::steady_clock::time_point probeSlotDeadline(
    std::chrono::steady_clock::time_point deadline);
// A probe's verdict from what its round trip returned: Ok also for ResourceExhausted (every
// connection of the source is leased to a running call, so the source is serving; a source that
// stops answering frees them as its calls time out, and the next probe gets one).
Status probeOutcome(Status round_trip);

// One connection figure of an engine, exposed as mcpdb_<engine>_<name> (summed over the sources)
// and mcpdb_<engine>_<name>_by_source{source="..."}.
struct GaugeSpec {
  std::string name;
  std::string help;
};
// The figures of one source, in the order of the engine's GaugeSpecs.
struct SourceSample {
  std::string source;
  std::vector<double> values;
};
// Appends a sample for each source whose connections exist (sampling never connects).
template <class Runtime>
using Sampler = std::function<void(const Runtime&, std::vector<SourceSample>&)>;

// Gauges over `runtime` (held weakly: a sample after it is gone is 0 / no source).
template <class Runtime>
std::vector<Gauge> sourceGauges(std::weak_ptr<const Runtime> runtime, std::vector<GaugeSpec> specs,
                                Sampler<Runtime> sample) {
  auto samples = [runtime, sample]() {
    std::vector<SourceSample> out;
    if (const auto rt = runtime.lock()) sample(*rt, out);
    return out;
  };
  std::vector<Gauge> gauges;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    Gauge g;
    g.name = std::move(specs[i].name);
    g.help = std::move(specs[i].help);
    g.sample = [samples, i]() {
      double sum = 0;
      for (const auto& s : samples()) sum += i < s.values.size() ? s.values[i] : 0.0;
      return sum;
    };
    g.by_source = [samples, i]() {
      std::vector<std::pair<std::string, double>> out;
      for (auto& s : samples())
        out.emplace_back(std::move(s.source), i < s.values.size() ? s.values[i] : 0.0);
      return out;
    };
    gauges.push_back(std::move(g));
  }
  return gauges;
}

// One source's runtime, made on its first use (a call's or a check's; registering a tool that
// holds the slot makes nothing, nor does a metrics sample), once: under the slot's lock, so that
// threads asking together make one, and read without any lock once made, so a call pays one
// atomic load. A runtime that cannot be made (a variable unset, a bad URI) gives its maker's error
// (kit::sourceError: the source and the variable, never a value) to the use that asked, and is
// tried again on the next use: it fails only its own source's calls. Each slot has its own lock,
// so a source slow to make (a DNS lookup) delays no other source.
template <class R>
class SourceSlot {
 public:
  using Make = std::function<Result<std::shared_ptr<R>>()>;

  SourceSlot(std::string source, Make make) : source_(std::move(source)), make_(std::move(make)) {}
  SourceSlot(const SourceSlot&) = delete;
  SourceSlot& operator=(const SourceSlot&) = delete;

  const std::string& source() const { return source_; }
  // The runtime, made now if it was not.
  Result<R*> get() {
    if (R* r = ready_.load(std::memory_order_acquire)) return r;
    std::lock_guard<std::mutex> lock(mu_);
    if (made_) return made_.get();
    auto r = make_();
    if (!r) return r.error();
    if (!*r) return makeError(Code::Internal, "source '" + source_ + "': no runtime was made");
    made_ = std::move(*r);
    ready_.store(made_.get(), std::memory_order_release);
    return made_.get();
  }
  // The runtime if made (metrics: sampling never makes one); null before.
  std::shared_ptr<R> ifMade() const {
    // made_ is written once, before ready_ is published, and never again.
    return ready_.load(std::memory_order_acquire) != nullptr ? made_ : nullptr;
  }

 private:
  const std::string source_;
  const Make make_;
  std::mutex mu_;            // making the runtime
  std::shared_ptr<R> made_;  // written once, under mu_
  std::atomic<R*> ready_{nullptr};
};

// The runtimes of an engine's sources, one slot per source: kit::Module<kit::PerSource<R>> for
// an engine whose sources share nothing, or a member of the engine's runtime. Tool handlers hold
// the slot (or the runtime) of their source from registration on, so a call never takes the
// lock of this list nor looks a source up.
template <class R>
class PerSource {
 public:
  using Slot = SourceSlot<R>;
  using SlotPtr = std::shared_ptr<Slot>;

  // The slot of `source`, its runtime made by `make` on first use (Slot::get). The first `make`
  // given for a source is the one used.
  SlotPtr slot(const std::string& source, typename Slot::Make make) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& s : slots_) {
      if (s->source() == source) return s;
    }
    slots_.push_back(std::make_shared<Slot>(source, std::move(make)));
    return slots_.back();
  }
  // The runtime of `source`, made now by `make()` (returning std::shared_ptr<R>, which cannot
  // fail) if it was not.
  template <class Make>
  std::shared_ptr<R> get(const std::string& source, Make&& make) {
    const SlotPtr s =
        slot(source,
             [make = std::forward<Make>(make)]() -> Result<std::shared_ptr<R>> { return make(); });
    if (!s->get()) return nullptr;
    return s->ifMade();
  }
  // The runtimes made so far, in the order their slots were asked for (sampling makes none).
  std::vector<std::pair<std::string, std::shared_ptr<R>>> made() const {
    std::vector<std::pair<std::string, std::shared_ptr<R>>> out;
    for (const auto& s : slots()) {
      if (auto r = s->ifMade()) out.emplace_back(s->source(), std::move(r));
    }
    return out;
  }
  // Every slot, in the order they were asked for.
  std::vector<SlotPtr> slots() const {
    std::lock_guard<std::mutex> lock(mu_);
    return slots_;
  }

 private:
  mutable std::mutex mu_;  // the list of slots, never held while a runtime is made
  std::vector<SlotPtr> slots_;
};

template <class Runtime>
class Module : public EngineModule {
 public:
  std::vector<Gauge> gauges() override {
    const auto rt = runtimeIfMade();
    if (!rt) return {};  // no tools registered: no connections to count
    auto specs = gaugeSpecs();
    if (specs.empty()) return {};
    return sourceGauges<Runtime>(std::weak_ptr<const Runtime>(rt), std::move(specs), sampler());
  }

 protected:
  // Makes the runtime (called once, under the kit's lock; must not connect).
  virtual std::shared_ptr<Runtime> makeRuntime(EngineServices& services) = 0;
  // The engine's connection figures and how to read them per source; none by default.
  virtual std::vector<GaugeSpec> gaugeSpecs() const { return {}; }
  virtual Sampler<Runtime> sampler() const { return {}; }

  // The runtime, made on first use.
  std::shared_ptr<Runtime> runtime(EngineServices& services) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!runtime_) runtime_ = makeRuntime(services);
    return runtime_;
  }
  // The runtime if made already (metrics: sampling never makes one).
  std::shared_ptr<Runtime> runtimeIfMade() const {
    std::lock_guard<std::mutex> lock(mu_);
    return runtime_;
  }
  // Drops the runtime (a new configuration; calls already holding it keep it).
  void resetRuntime() {
    std::lock_guard<std::mutex> lock(mu_);
    runtime_.reset();
  }

  // Appends `findings` of `source`, naming the source when the engine has several.
  static void addFindings(std::vector<Finding>& out, std::string_view source, bool several,
                          std::vector<Finding> findings) {
    if (several) nameSource(findings, source);
    for (auto& f : findings) out.push_back(std::move(f));
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<Runtime> runtime_;
};

}  // namespace mcpdb::engines::kit
