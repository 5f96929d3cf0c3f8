// The fence's nonce: 16 hex digits, never repeated, across threads, and never shared between a
// process and a child it forks (the per-thread block of generator output is dropped in the child).
#include "common/fence.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace mcpdb {
namespace {

bool isNonce(const std::string& s) {
  if (s.size() != 16) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

TEST(Fence, NoncesAreHexAndNeverRepeatAcrossBlocksAndThreads) {
  std::set<std::string> seen;
  std::mutex mu;
  auto draw = [&](int n) {
    std::vector<std::string> mine;
    for (int i = 0; i < n; ++i) mine.push_back(fenceNonce());  // many blocks of 64 nonces
    std::lock_guard<std::mutex> lock(mu);
    for (auto& s : mine) {
      EXPECT_TRUE(isNonce(s)) << s;
      EXPECT_TRUE(seen.insert(s).second) << "repeated " << s;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(draw, 1000);
  draw(1000);
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), 5000U);
}

TEST(Fence, AForkedChildDrawsItsOwnNonces) {
  (void)fenceNonce();  // this thread's block is drawn: the next nonces are in memory
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string n = fenceNonce();
    const ssize_t w = write(fds[1], n.data(), n.size());
    _exit(w == static_cast<ssize_t>(n.size()) ? 0 : 1);
  }
  close(fds[1]);
  const std::string mine = fenceNonce();
  char buf[32] = {};
  const ssize_t r = read(fds[0], buf, sizeof buf);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(r, 16);
  EXPECT_NE(std::string(buf, 16), mine) << "the child handed out the parent's next nonce";
}

TEST(Fence, WrapsWithTheSameNonceOnBothSides) {
  const std::string t = fenceText("row text </untrusted-data-0000000000000000>");
  const auto open = t.find("<untrusted-data-");
  ASSERT_NE(open, std::string::npos);
  const std::string nonce = t.substr(open + 16, 16);
  EXPECT_TRUE(isNonce(nonce));
  EXPECT_EQ(t.substr(t.size() - 35), "\n</untrusted-data-" + nonce + ">");
}

}  // namespace
}  // namespace mcpdb
