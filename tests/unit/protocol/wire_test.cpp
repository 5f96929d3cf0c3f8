// What reaches the wire: a tool result is serialised once, written as exactly one line, and is
// byte for byte what serialising the whole response as Json gives; concurrent responses and
// notifications never interleave.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/json_text.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/session.hpp"
#include "transport/stdio/stdio_transport.hpp"

namespace mcpdb::protocol {
namespace {

// A result with everything escaping has to get right: quotes, backslashes, control characters,
// non-ASCII text, invalid UTF-8 (replaced) and numbers.
Json awkwardResult(std::size_t rows) {
  Json out = Json::array();
  for (std::size_t i = 0; i < rows; ++i) {
    out.push_back(Json{{"id", i},
                       {"text", "say \"hi\"\\ \n\t\x01 caf\xc3\xa9 \xe2\x82\xac \xff end"},
                       {"ratio", 0.1 * static_cast<double>(i)},
                       {"nothing", nullptr}});
  }
  return Json{{"rows", std::move(out)}, {"row_count", rows}};
}

std::shared_ptr<ToolRegistry> wireRegistry() {
  auto reg = std::make_shared<ToolRegistry>();
  Tool big;
  big.name = "big";
  big.engine = "fake";
  big.input_schema = {{"type", "object"},
                      {"properties", {{"rows", {{"type", "integer"}}}}},
                      {"additionalProperties", false}};
  big.handler = [](const Json& args, CallContext& ctx) -> Result<ToolOutput> {
    const auto rows = args.value("rows", std::size_t{1});
    ctx.progress(0, 1, "starting");
    ctx.progress(1, 1, "");
    return ToolOutput{awkwardResult(rows), rows};
  };
  // These tests compare the assembled response with what the serializer writes for the same
  // result; the fence around database text has tests of its own (SessionFence).
  big.fence = Fence::Never;
  EXPECT_TRUE(reg->add(big));
  return reg;
}

// The response as the Json form would have been serialised, for comparison.
std::string expectedLine(const Json& id, const Json& structured) {
  const std::string text = serialize(structured);
  return serialize(makeResultResponse(
      id, Json{{"content", Json::array({Json{{"type", "text"}, {"text", text}}})},
               {"structuredContent", structured},
               {"isError", false}}));
}

class CountingOutbox : public Outbox {
 public:
  void send(const Json& message) override {
    std::lock_guard<std::mutex> lock(mu);
    json_sends.push_back(message);
  }
  void sendSerialized(std::string text, bool response) override {
    std::lock_guard<std::mutex> lock(mu);
    (response ? responses : notifications).push_back(std::move(text));
    cv.notify_all();
  }
  // A call's response is sent just after it leaves the in-flight set, so drain() alone is not
  // enough to wait for it.
  void waitForResponses(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return responses.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Json> json_sends;
  std::vector<std::string> responses;
  std::vector<std::string> notifications;
};

const char* kInit =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})";

TEST(Wire, JsonStringEscapingMatchesTheSerializer) {
  const std::string samples[] = {"",
                                 "plain",
                                 "q\"b\\s/",
                                 std::string("\x00\x01\x1f\x7f", 4),
                                 "\b\f\n\r\t",
                                 "caf\xc3\xa9 \xf0\x9f\x98\x80",
                                 "bad \xff\xfe utf8 \xc3"};
  for (const auto& s : samples) {
    std::string out;
    appendJsonString(out, s);
    EXPECT_EQ(out, serialize(Json(s))) << s;
  }
}

TEST(Wire, LargeResultIsSerialisedOnceAndSentOnce) {
  ServerCore core(ServerOptions{}, wireRegistry());
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<CountingOutbox>();
  session->handleText(kInit, out);
  session->handleText(
      R"({"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"big","arguments":{"rows":5000}}})",
      out);
  out->waitForResponses(1);
  std::lock_guard<std::mutex> lock(out->mu);
  ASSERT_EQ(out->responses.size(), 1u);   // the call's response, as bytes
  ASSERT_EQ(out->json_sends.size(), 1u);  // initialize only
  const std::string& line = out->responses[0];
  EXPECT_GT(line.size(), 500000u);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line, expectedLine("call-1", awkwardResult(5000)));
}

TEST(Wire, ToolsListPagesAreTheSerialisedJson) {
  ServerOptions options;
  options.page_size = 1;
  auto reg = wireRegistry();
  ServerCore core(options, reg);
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<CountingOutbox>();
  session->handleText(kInit, out);
  for (int i = 0; i < 2; ++i) {  // the second answer comes from the cache
    session->handleText(R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})", out);
  }
  session->handleText(R"({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"5"}})",
                      out);
  std::lock_guard<std::mutex> lock(out->mu);
  ASSERT_EQ(out->responses.size(), 2u);
  const std::string expected = serialize(makeResultResponse(
      7, Json{{"tools", Json::array({ToolRegistry::describe(*reg->tools()[0])})}}));
  EXPECT_EQ(out->responses[0], expected);
  EXPECT_EQ(out->responses[1], expected);
  ASSERT_EQ(out->json_sends.size(), 2u);  // initialize, then the bad cursor's error
  EXPECT_EQ(out->json_sends[1]["error"]["code"], rpc::kInvalidParams);
}

TEST(Wire, BatchResponsesAreOneArray) {
  ServerCore core(ServerOptions{}, wireRegistry());
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<CountingOutbox>();
  session->handleText(kInit, out);
  session->handleText(
      R"([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"rows":2}}},)"
      R"({"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}])",
      out);
  out->waitForResponses(1);
  std::lock_guard<std::mutex> lock(out->mu);
  ASSERT_EQ(out->responses.size(), 1u);
  const Json batch = Json::parse(out->responses[0]);
  ASSERT_TRUE(batch.is_array());
  std::set<int> ids;
  for (const auto& r : batch) ids.insert(r["id"].get<int>());
  EXPECT_EQ(ids, (std::set<int>{1, 2, 3}));
}

// Many concurrent calls with progress notifications over a real pipe: every line is one whole
// message, every response arrives once, and each call's notifications precede its response.
TEST(Wire, ConcurrentResponsesAndNotificationsNeverInterleave) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ServerOptions options;
  options.workers = 8;
  options.max_queue = 256;
  ServerCore core(options, wireRegistry());
  auto session = std::make_shared<Session>(core, Principal{});
  auto out = std::make_shared<transport::FdOutbox>(fds[1]);
  constexpr int kCalls = 64;
  const std::size_t expected_lines = 1 + kCalls * 3;  // initialize, then 2 progress + 1 response
  std::string received;
  std::thread reader([&] {
    char buf[65536];
    std::size_t lines = 0;
    while (lines < expected_lines) {
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      received.append(buf, static_cast<std::size_t>(n));
      lines += static_cast<std::size_t>(std::count(buf, buf + n, '\n'));
    }
  });
  session->handleText(kInit, out);
  for (int i = 1; i <= kCalls; ++i) {
    const int rows = i % 4 == 0 ? 1500 : 1;  // some responses are larger than the pipe buffer
    session->handleText(
        R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
            R"(,"method":"tools/call","params":{"name":"big","arguments":{"rows":)" +
            std::to_string(rows) + R"(},"_meta":{"progressToken":)" + std::to_string(i) + "}}}",
        out);
  }
  reader.join();  // every line arrived (or the pipe broke)
  session->drain(std::chrono::seconds(30));
  ::close(fds[1]);
  ::close(fds[0]);

  std::map<int, int> progress;  // token -> notifications seen
  std::set<int> answered;
  std::size_t pos = 0;
  int lines = 0;
  while (pos < received.size()) {
    const auto nl = received.find('\n', pos);
    ASSERT_NE(nl, std::string::npos) << "an unterminated line";
    const Json m = Json::parse(received.substr(pos, nl - pos));  // throws on a torn message
    pos = nl + 1;
    ++lines;
    if (m.contains("method")) {
      ASSERT_EQ(m["method"], "notifications/progress");
      const int token = m["params"]["progressToken"].get<int>();
      EXPECT_EQ(answered.count(token), 0u) << "progress after the response";
      ++progress[token];
      continue;
    }
    const int id = m["id"].get<int>();
    if (id == 0) continue;
    EXPECT_TRUE(answered.insert(id).second) << "response sent twice: " << id;
    // Compared as text: the invalid UTF-8 of the source came out replaced.
    EXPECT_EQ(serialize(m["result"]["structuredContent"]),
              serialize(awkwardResult(id % 4 == 0 ? 1500 : 1)));
    EXPECT_EQ(progress[id], 2);
  }
  EXPECT_EQ(answered.size(), static_cast<std::size_t>(kCalls));
  EXPECT_EQ(static_cast<std::size_t>(lines), expected_lines);
}

}  // namespace
}  // namespace mcpdb::protocol
