// The engine kit (engines/kit/module.hpp): what every engine module gets from it.
#include "engines/kit/module.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace mcpdb::engines::kit {
namespace {

using Sev = Finding::Severity;

// A runtime that counts how many were made, and the figures of two sources.
struct FakeRuntime {
  double open_a = 2;
  double open_b = 5;
};

class FakeModule final : public Module<FakeRuntime> {
 public:
  std::atomic<int> made{0};

  std::string_view name() const override { return "fake"; }
  std::string_view enableHint() const override { return ""; }
  bool enabled(const Env&) const override { return true; }
  std::string_view securityPosture() const override { return ""; }
  std::string_view defaultSection() const override { return ""; }
  YAML::Node defaultSectionDocument() const override { return {}; }
  config::TopLevelKey configKey() const override { return {}; }
  void configure(const config::Node&, const Limits&) override {}
  Status registerTools(protocol::ToolRegistry&, EngineServices& services) override {
    runtime(services);
    return {};
  }
  bool declaresTools() const override { return true; }
  bool optional() const override { return false; }
  std::vector<std::string> unsetVariables(const Env&) const override { return {}; }
  std::vector<Finding> selfCheck(EngineServices& services) override {
    const auto rt = runtime(services);
    std::vector<Finding> out;
    addFindings(out, "a", several, {{Sev::Ok, "fake.a", "fine"}});
    addFindings(out, "b", several, {{Sev::Violation, "fake.b", "can write"}});
    return out;
  }
  std::vector<Finding> checkTools(EngineServices&) override { return {}; }

  bool several = true;
  std::shared_ptr<FakeRuntime> made_runtime;  // the one made, to drop in a test
  void drop() {
    made_runtime.reset();
    resetRuntime();
  }

 protected:
  std::shared_ptr<FakeRuntime> makeRuntime(EngineServices&) override {
    ++made;
    // Long enough that racing threads all ask while the first one is making it.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    made_runtime = std::make_shared<FakeRuntime>();
    return made_runtime;
  }
  std::vector<GaugeSpec> gaugeSpecs() const override {
    return {{"pool_connections_open", "Connections open."}};
  }
  Sampler<FakeRuntime> sampler() const override {
    return [](const FakeRuntime& rt, std::vector<SourceSample>& out) {
      out.push_back({"a", {rt.open_a}});
      out.push_back({"b", {rt.open_b}});
    };
  }
};

// Registration, the start-up self-check and doctor may ask for the runtime from different
// threads: one is made (MongoDB's was made without a lock, one per racing caller).
TEST(EngineKit, TheRuntimeIsMadeOnceWhateverTheThreadsAsking) {
  FakeModule m;
  EngineServices services;
  std::vector<std::jthread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&m, &services, i] {
      protocol::ToolRegistry registry;
      if (i % 2 == 0) {
        (void)m.registerTools(registry, services);
      } else {
        (void)m.selfCheck(services);
      }
    });
  }
  threads.clear();
  EXPECT_EQ(m.made.load(), 1);
}

TEST(EngineKit, FindingsNameTheirSourceOneWayWhenThereAreSeveral) {
  FakeModule m;
  EngineServices services;
  auto findings = m.selfCheck(services);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].message, "source 'a': fine");
  EXPECT_EQ(findings[1].message, "source 'b': can write");
  EXPECT_EQ(findings[1].severity, Sev::Violation);
  m.several = false;
  findings = m.selfCheck(services);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].message, "fine");
}

TEST(EngineKit, GaugesAreSummedAndLabelledBySource) {
  FakeModule m;
  EXPECT_TRUE(m.gauges().empty());  // no runtime yet: nothing is sampled, nothing made
  EXPECT_EQ(m.made.load(), 0);
  EngineServices services;
  protocol::ToolRegistry registry;
  ASSERT_TRUE(m.registerTools(registry, services));
  auto gauges = m.gauges();
  ASSERT_EQ(gauges.size(), 1u);
  EXPECT_EQ(gauges[0].name, "pool_connections_open");
  EXPECT_EQ(gauges[0].sample(), 7.0);
  ASSERT_TRUE(gauges[0].by_source);
  const auto by_source = gauges[0].by_source();
  ASSERT_EQ(by_source.size(), 2u);
  EXPECT_EQ(by_source[0], (std::pair<std::string, double>{"a", 2.0}));
  EXPECT_EQ(by_source[1], (std::pair<std::string, double>{"b", 5.0}));
  m.made_runtime->open_b = 1;  // sampled when asked, not when the gauge was made
  EXPECT_EQ(gauges[0].sample(), 3.0);
  // A sampler outliving its runtime reads nothing rather than a freed one.
  m.drop();
  EXPECT_EQ(gauges[0].sample(), 0.0);
  EXPECT_TRUE(gauges[0].by_source().empty());
}

TEST(EngineKit, PerSourceRuntimesAreMadeOncePerSource) {
  PerSource<int> runtimes;
  int made = 0;
  auto make = [&made] { return std::make_shared<int>(++made); };
  const auto a = runtimes.get("a", make);
  const auto b = runtimes.get("b", make);
  EXPECT_EQ(runtimes.get("a", make), a);
  EXPECT_NE(a, b);
  EXPECT_EQ(made, 2);
  const auto all = runtimes.made();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, "a");
  EXPECT_EQ(all[1].first, "b");
}

// Calls, doctor and the self-check may use a source first from several threads at once: its
// runtime is made once, and every one of them gets that one.
TEST(EngineKit, ASourceSlotIsMadeOnceWhateverTheThreadsAsking) {
  PerSource<int> runtimes;
  std::atomic<int> made{0};
  const auto slot = runtimes.slot("a", [&made]() -> Result<std::shared_ptr<int>> {
    ++made;
    // Long enough that racing threads all ask while the first one is making it.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return std::make_shared<int>(42);
  });
  EXPECT_EQ(slot->ifMade(), nullptr);  // a slot makes nothing until it is used
  EXPECT_EQ(made.load(), 0);
  std::vector<int*> seen(8, nullptr);
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      threads.emplace_back([&slot, &seen, i] {
        auto r = slot->get();
        if (r) seen[i] = *r;
      });
    }
  }
  EXPECT_EQ(made.load(), 1);
  for (int* p : seen) {
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p, seen[0]);
    EXPECT_EQ(*p, 42);
  }
  EXPECT_EQ(slot->ifMade().get(), seen[0]);
  // Asking for the source's slot again gives the same slot, whatever maker is passed.
  EXPECT_EQ(
      runtimes.slot("a", [] { return Result<std::shared_ptr<int>>(std::make_shared<int>(1)); }),
      slot);
  EXPECT_EQ(**runtimes.slot("a", {})->get(), 42);
  EXPECT_EQ(made.load(), 1);
}

// A source whose runtime cannot be made (its variable unset) fails its own uses with its maker's
// error, naming the source and the variable; another source is made and served; the failed one
// is tried again on its next use and served once it can be made.
TEST(EngineKit, ASourceThatCannotBeMadeFailsOnlyItself) {
  PerSource<std::string> runtimes;
  bool variable_set = false;
  int attempts = 0;
  const auto broken = runtimes.slot("reports", [&]() -> Result<std::shared_ptr<std::string>> {
    ++attempts;
    if (!variable_set) {
      return sourceError(Code::FailedPrecondition, "mongodb", "reports", "REPORTS_URI is not set");
    }
    return std::make_shared<std::string>("reports runtime");
  });
  const auto fine = runtimes.slot("main", [] {
    return Result<std::shared_ptr<std::string>>(std::make_shared<std::string>("main runtime"));
  });
  for (int i = 0; i < 2; ++i) {
    auto r = broken->get();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, Code::FailedPrecondition);
    EXPECT_EQ(r.error().message, "mongodb source 'reports': REPORTS_URI is not set");
    auto ok = fine->get();
    ASSERT_TRUE(ok);
    EXPECT_EQ(**ok, "main runtime");
  }
  EXPECT_EQ(attempts, 2);  // the failure is not kept
  EXPECT_EQ(broken->ifMade(), nullptr);
  ASSERT_EQ(runtimes.made().size(), 1u);  // only what was made is sampled
  EXPECT_EQ(runtimes.made()[0].first, "main");
  variable_set = true;
  auto r = broken->get();
  ASSERT_TRUE(r);
  EXPECT_EQ(**r, "reports runtime");
  EXPECT_EQ(attempts, 3);
  // A maker that makes nothing is an error, not a null runtime.
  const auto empty =
      runtimes.slot("empty", [] { return Result<std::shared_ptr<std::string>>(nullptr); });
  auto e = empty->get();
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, Code::Internal);
}

// made() lists the runtimes made so far in the order their slots were first asked for (the
// order an engine declares its sources in when it asks for them so), whatever order they were
// made in; sampling it makes none.
TEST(EngineKit, MadeRuntimesAreListedInTheOrderTheirSlotsWereAskedFor) {
  PerSource<int> runtimes;
  int made = 0;
  auto make = [&made] { return Result<std::shared_ptr<int>>(std::make_shared<int>(++made)); };
  const auto c = runtimes.slot("c", make);
  const auto a = runtimes.slot("a", make);
  const auto b = runtimes.slot("b", make);
  EXPECT_TRUE(runtimes.made().empty());
  ASSERT_TRUE(b->get());
  ASSERT_TRUE(c->get());
  auto all = runtimes.made();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, "c");
  EXPECT_EQ(*all[0].second, 2);
  EXPECT_EQ(all[1].first, "b");
  EXPECT_EQ(*all[1].second, 1);
  EXPECT_EQ(a->ifMade(), nullptr);
  EXPECT_EQ(made, 2);
  const auto slots = runtimes.slots();
  ASSERT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots[0], c);
  EXPECT_EQ(slots[1], a);
  EXPECT_EQ(slots[2], b);
  // get() makes now, through the same slot.
  EXPECT_EQ(runtimes.get("a", [] { return std::make_shared<int>(99); }).get(), *a->get());
  EXPECT_EQ(runtimes.made().size(), 3u);
}

TEST(EngineKit, CommonTexts) {
  Limits l;
  l.max_rows = 50;
  l.max_bytes = 64 * 1024;
  l.timeout = std::chrono::milliseconds(1500);
  EXPECT_EQ(describeLimits(l),
            " At most 50 rows and 64 KiB per call (a truncated result says so), 1500 ms timeout.");
  EXPECT_EQ(toolNameProblem("find_user.v2-x"), "");
  for (const std::string& bad :
       std::vector<std::string>{"", "bad name", "semi;colon", "ünï", std::string(129, 'a')}) {
    EXPECT_EQ(toolNameProblem(bad), "invalid tool name (1-128 characters of A-Z a-z 0-9 _ - .)")
        << bad;
  }
  const Error e = sourceError(Code::Unavailable, "mysql", "reports", "REPORTS_DSN is not set");
  EXPECT_EQ(e.code, Code::Unavailable);
  EXPECT_EQ(e.message, "mysql source 'reports': REPORTS_DSN is not set");
}

}  // namespace
}  // namespace mcpdb::engines::kit
