// Config reload (app/reload.hpp): the whole config re-assembled and checked as at start-up, swapped
// in one step, refused whole when anything is wrong (the running config stays), engines with
// unchanged inputs kept as they run, restart-only settings named, a storm of requests coalesced,
// the watched file applied only once it has settled.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "app/reload.hpp"

namespace mcpdb::app {
namespace {

using namespace std::chrono_literals;

YAML::Node yaml(const std::string& text) {
  return YAML::Load(text);
}

TEST(RestartOnlyChanges, NamesTheSettingsAReloadLeavesAndNothingElse) {
  const auto before = yaml(R"(
server: {workers: 8, max_calls_per_source: 2, self_check: warn}
http: {max_sessions: 10, tls: {cert_file: a.pem, key_file: a.key}, clients: {a: {key_sha256: x}}}
audit: {path: /tmp/a.log}
telemetry: {enabled: false}
limits: {max_rows: 10}
postgres: {tools: {}}
)");
  EXPECT_TRUE(restartOnlyChanges(before, before).empty());
  const auto after = yaml(R"(
server: {workers: 4, max_calls_per_source: 3, self_check: refuse}
http: {max_sessions: 10, tls: {cert_file: b.pem, key_file: a.key}, clients: {b: {key_sha256: y}}, rate_limit: {per_minute: 5}}
audit: {path: /tmp/b.log}
telemetry: {enabled: true, otlp_endpoint: "http://127.0.0.1:4318/v1/traces"}
limits: {max_rows: 20}
postgres: {optional: true}
)");
  EXPECT_EQ(restartOnlyChanges(before, after),
            (std::vector<std::string>{"server.workers", "http.tls", "audit", "telemetry"}));
  // A key that appears or disappears counts as a change too.
  EXPECT_EQ(restartOnlyChanges(yaml("{}"), yaml("server: {page_size: 5}\nhttp: {threads: 4}")),
            (std::vector<std::string>{"server.page_size", "http.threads"}));
  // The auth mode was checked against the listen address (none: loopback only): never reloaded.
  EXPECT_EQ(restartOnlyChanges(yaml("http: {auth: api_key}"), yaml("http: {auth: none}")),
            (std::vector<std::string>{"http.auth"}));
}

TEST(EngineUnchanged, FollowsItsSectionLimitsAndEmbeddingButNotFormatting) {
  const auto a = yaml("postgres:\n  tools: {q: {statement: SELECT 1}}\nlimits: {max_rows: 5}\n");
  const auto reformatted = yaml(
      "# a comment\npostgres:\n  tools:\n    q:\n      statement: SELECT 1\nlimits:\n  "
      "max_rows: 5\nhttp: {threads: 3}\n");
  EXPECT_TRUE(engineUnchanged(a, reformatted, "postgres"));
  EXPECT_FALSE(engineUnchanged(
      a, yaml("postgres:\n  tools: {q: {statement: SELECT 2}}\nlimits: {max_rows: 5}\n"),
      "postgres"));
  EXPECT_FALSE(engineUnchanged(
      a, yaml("postgres:\n  tools: {q: {statement: SELECT 1}}\nlimits: {max_rows: 6}\n"),
      "postgres"));
  EXPECT_FALSE(engineUnchanged(a,
                               yaml("postgres:\n  tools: {q: {statement: SELECT 1}}\nlimits: "
                                    "{max_rows: 5}\nembedding: {preload: false}\n"),
                               "postgres"));
  EXPECT_TRUE(engineUnchanged(a, a, "mongodb"));  // absent in both
}

const char* kOneClient = R"(
http:
  clients:
    - name: reader
      key_sha256: 0000000000000000000000000000000000000000000000000000000000000001
      scope: postgres
)";

std::string pgTools(const std::vector<std::string>& names, const std::string& statement = "1") {
  std::string s = "postgres:\n  tools:\n";
  for (const auto& n : names) {
    s += "    " + n + ":\n      kind: postgres-sql\n      description: Test tool " + n +
         "\n      statement: SELECT " + statement + " AS one\n";
  }
  return s;
}

class ReloaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("mcpdb-reload-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml");
  }
  void TearDown() override {
    reloader_.reset();
    core_.reset();
    std::filesystem::remove(path_);
  }
  void write(const std::string& text) {
    const auto tmp = path_.string() + ".tmp";
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, path_);  // as an editor that saves by renaming
  }
  void start(const std::string& text, Reloader::Hooks hooks = {}, Reloader::Settings s = {}) {
    write(text);
    options_.config_path = path_.string();
    std::ostringstream err;
    auto made = assemble(options_, env_, false, err);
    ASSERT_TRUE(made) << err.str();
    auto a = std::make_shared<Assembly>(std::move(*made));
    core_ = std::make_unique<protocol::ServerCore>(protocol::ServerOptions{}, a->registry, a);
    reloader_ = std::make_unique<Reloader>(options_, env_, *core_, a, nullptr, std::move(hooks), s);
  }
  std::vector<std::string> toolNames() {
    std::vector<std::string> out;
    for (const auto& t : core_->surface()->registry().tools()) out.push_back(t->name);
    return out;
  }
  std::size_t moduleIndex(std::string_view name) {
    const auto a = reloader_->current();
    for (std::size_t i = 0; i < a->modules.size(); ++i)
      if (a->modules[i]->name() == name) return i;
    return SIZE_MAX;
  }

  std::filesystem::path path_;
  Env env_ = Env::fromMap({{"POSTGRES_DSN", "postgresql://nobody@127.0.0.1:9/none"}});
  AppOptions options_;
  std::unique_ptr<protocol::ServerCore> core_;
  std::unique_ptr<Reloader> reloader_;
};

TEST_F(ReloaderTest, AppliesANewToolAndKeepsTheOldGenerationForItsCalls) {
  std::vector<ListChanges> told;
  Reloader::Hooks hooks;
  hooks.notify = [&told](ListChanges c) { told.push_back(c); };
  start(pgTools({"first_tool"}), std::move(hooks));
  auto old_surface = core_->surface();  // as a call in flight holds it
  std::weak_ptr<Assembly> old_assembly = reloader_->current();

  write(pgTools({"first_tool", "second_tool"}));
  EXPECT_EQ(reloader_->reloadNow("test"), Reloader::Outcome::Applied);
  EXPECT_EQ(toolNames(), (std::vector<std::string>{"first_tool", "second_tool"}));
  EXPECT_EQ(core_->surface()->generation(), 2U);
  EXPECT_EQ(reloader_->appliedCount(), 1U);
  ASSERT_EQ(told.size(), 1U);
  EXPECT_TRUE(told[0].tools);
  // The call's generation is intact and alive while held...
  EXPECT_EQ(old_surface->registry().size(), 1U);
  EXPECT_FALSE(old_assembly.expired());
  // ...and gone once released.
  old_surface.reset();
  EXPECT_TRUE(old_assembly.expired());
}

TEST_F(ReloaderTest, ABrokenConfigIsRefusedWholeAndTheRunningOneStays) {
  start(pgTools({"first_tool"}));
  // Each is refused: a syntax error (half a file), an unknown key, a statement the guard refuses,
  // a scope naming a tool that does not exist.
  const std::vector<std::pair<std::string, std::string>> broken = {
      // Half a file, cut inside a statement: the guard refuses what is left of it.
      {pgTools({"first_tool", "second_tool"}).substr(0, 120), "syntax error"},
      {pgTools({"first_tool"}) + "  bogus_key: 1\n", "bogus_key"},
      {"postgres:\n  tools:\n    bad:\n      kind: postgres-sql\n      description: Bad tool\n"
       "      statement: DELETE FROM t\n",
       "DELETE"},
      {pgTools({"first_tool"}) +
           "http:\n  clients:\n    - name: c\n      key_sha256: "
           "0000000000000000000000000000000000000000000000000000000000000001\n      scope: "
           "\"postgres:no_such_tool\"\n",
       "no_such_tool"},
  };
  for (const auto& [text, reason] : broken) {
    write(text);
    EXPECT_EQ(reloader_->reloadNow("test"), Reloader::Outcome::Refused) << text;
    // Refused for its own reason, named with the file and line.
    EXPECT_NE(reloader_->lastRefusal().find(reason), std::string::npos)
        << reason << " not in: " << reloader_->lastRefusal();
    EXPECT_NE(reloader_->lastRefusal().find(path_.string() + ":"), std::string::npos)
        << reloader_->lastRefusal();
    EXPECT_EQ(toolNames(), (std::vector<std::string>{"first_tool"})) << text;
    EXPECT_EQ(core_->surface()->generation(), 1U);
  }
  EXPECT_EQ(reloader_->refusedCount(), broken.size());
  EXPECT_EQ(reloader_->appliedCount(), 0U);
}

TEST_F(ReloaderTest, ARefusingCheckChangesNothingAndPutsTheKeptEnginesBack) {
  bool refuse = true;
  Reloader::Hooks hooks;
  hooks.check = [&refuse](Assembly&, std::shared_ptr<void>&) { return !refuse; };
  start(pgTools({"first_tool"}), std::move(hooks));
  const std::size_t pg = moduleIndex("postgres");
  const auto* module = reloader_->current()->modules[pg].get();
  write(pgTools({"first_tool"}) + kOneClient);  // postgres unchanged: its module is kept
  EXPECT_EQ(reloader_->reloadNow("test"), Reloader::Outcome::Refused);
  EXPECT_EQ(reloader_->current()->modules[pg].get(), module)
      << "a refused reload must leave the running engines where they were";
  refuse = false;
  EXPECT_EQ(reloader_->reloadNow("test"), Reloader::Outcome::Applied);
  EXPECT_EQ(reloader_->current()->modules[pg].get(), module)
      << "an engine whose section is unchanged keeps its module (pools, proofs)";
  write(pgTools({"first_tool"}, "2"));
  EXPECT_EQ(reloader_->reloadNow("test"), Reloader::Outcome::Applied);
  EXPECT_NE(reloader_->current()->modules[pg].get(), module)
      << "an engine whose statement changed must get a new runtime (and proof)";
}

TEST_F(ReloaderTest, AStormOfRequestsCoalesces) {
  Reloader::Settings s;
  s.poll = 20ms;
  s.min_interval = 300ms;
  start(pgTools({"first_tool"}), {}, s);
  for (int i = 0; i < 200; ++i) reloader_->request();
  std::this_thread::sleep_for(500ms);
  for (int i = 0; i < 200; ++i) reloader_->request();
  std::this_thread::sleep_for(900ms);
  const auto done = reloader_->appliedCount() + reloader_->refusedCount();
  EXPECT_GE(done, 1U);
  EXPECT_LE(done, 4U) << "400 requests must not make hundreds of reloads";
}

TEST_F(ReloaderTest, TheWatchAppliesASettledChangeAndRefusesAHalfWrittenFile) {
  Reloader::Settings s;
  s.watch = true;
  s.poll = 50ms;
  s.min_interval = 0ms;
  start(pgTools({"first_tool"}), {}, s);
  auto waitFor = [this](auto pred) {
    for (int i = 0; i < 100 && !pred(); ++i) std::this_thread::sleep_for(20ms);
    return pred();
  };
  // Half a file, written in place (an editor that does not rename): refused, never applied.
  {
    const std::string whole = pgTools({"first_tool", "second_tool"});
    std::ofstream(path_) << whole.substr(0, whole.size() - 20);
  }
  EXPECT_TRUE(waitFor([this] { return reloader_->refusedCount() >= 1; }));
  EXPECT_EQ(toolNames(), (std::vector<std::string>{"first_tool"}));
  // The whole file: applied once it has settled.
  write(pgTools({"first_tool", "second_tool"}));
  EXPECT_TRUE(waitFor([this] { return reloader_->appliedCount() >= 1; }));
  EXPECT_EQ(toolNames(), (std::vector<std::string>{"first_tool", "second_tool"}));
  // Not applied again while it stays the same.
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(reloader_->appliedCount(), 1U);
}

}  // namespace
}  // namespace mcpdb::app
