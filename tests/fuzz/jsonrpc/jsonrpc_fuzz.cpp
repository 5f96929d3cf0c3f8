// libFuzzer target: JSON-RPC framing and MCP dispatch (everything a client controls on stdio and
// HTTP: both parse through protocol::parseMessage), and the lone-surrogate repair before parsing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "protocol/jsonrpc.hpp"

#include "../../unit/protocol/fake_tools.hpp"
#include "protocol/session.hpp"

namespace {

class NullOutbox : public mcpdb::protocol::Outbox {
 public:
  void send(const mcpdb::Json& message) override { (void)mcpdb::protocol::serialize(message); }
};

mcpdb::protocol::ServerCore& core() {
  static mcpdb::protocol::ServerCore instance(
      [] {
        mcpdb::protocol::ServerOptions o;
        o.workers = 1;
        o.parse.max_bytes = 64 * 1024;
        return o;
      }(),
      mcpdb::protocol::testing::makeFakeRegistry(3));
  return instance;
}

}  // namespace

// The repair keeps the length, only ever writes "FFFD" over the digits of an escape, and leaves
// nothing for the parser to refuse as a lone surrogate (a repaired text never has one left).
void checkSurrogateRepair(std::string_view input) {
  const auto repaired = mcpdb::protocol::replaceLoneSurrogates(input);
  if (!repaired) return;
  if (repaired->size() != input.size()) __builtin_trap();
  for (std::size_t i = 0; i < input.size(); ++i) {
    if ((*repaired)[i] != input[i] && (*repaired)[i] != 'F' && (*repaired)[i] != 'D')
      __builtin_trap();
  }
  if (mcpdb::protocol::replaceLoneSurrogates(*repaired)) __builtin_trap();  // idempotent
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto session = std::make_shared<mcpdb::protocol::Session>(core(), mcpdb::protocol::Principal{});
  auto out = std::make_shared<NullOutbox>();
  // Initialise first so that every method is reachable, then feed the input line by line.
  session->handleText(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})",
      out);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  checkSurrogateRepair(input);
  while (!input.empty()) {
    const auto nl = input.find('\n');
    session->handleText(input.substr(0, nl), out);
    if (nl == std::string_view::npos) break;
    input.remove_prefix(nl + 1);
  }
  session->cancelAll();
  session->drain(std::chrono::milliseconds(100));
  return 0;
}
