#pragma once
// The engine kit: what every engine with named sources shares, so that an engine writes only what
// is its own (its settings, its runtime, its tools, its checks). An engine module derives from
// kit::Module<Runtime> and gets:
// - its runtime made once, on first use, under one lock (registering tools, the start-up
//   self-check and doctor may ask for it from different threads); tool handlers capture it at
//   registration, so a call takes no lock of the kit's;
// - findings named by source one way ("source 'name': ...") when there are several sources;
// - connection gauges summed over the sources and labelled by source, from one per-source sample.
// The free helpers beside it (describeLimits, toolNameProblem, sourceError) are the texts every
// engine writes the same way.

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

// Runtimes made per source, each on first use under one lock: the runtime of an engine whose
// sources share nothing (kit::Module<kit::PerSource<R>>). Handlers hold the R they were
// registered with, so a call never takes this lock.
template <class R>
class PerSource {
 public:
  // The runtime of `source`, made by `make()` (returning std::shared_ptr<R>) on first use.
  template <class Make>
  std::shared_ptr<R> get(const std::string& source, Make&& make) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, rt] : made_) {
      if (name == source) return rt;
    }
    made_.emplace_back(source, make());
    return made_.back().second;
  }
  // The runtimes made so far, in the order they were made.
  std::vector<std::pair<std::string, std::shared_ptr<R>>> made() const {
    std::lock_guard<std::mutex> lock(mu_);
    return made_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::shared_ptr<R>>> made_;
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
