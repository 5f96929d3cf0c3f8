// libFuzzer target: JSON-RPC framing and MCP dispatch (everything a client controls on stdio and
// HTTP: both parse through protocol::parseMessage), the lone-surrogate repair before parsing, and
// the JSON text the server writes back.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "common/row_budget.hpp"
#include "protocol/jsonrpc.hpp"

#include "../../unit/protocol/fake_tools.hpp"
#include "protocol/session.hpp"

namespace {

// Our writer of JSON text (common/json_text.hpp) writes and counts exactly what the library's
// serializer writes, for any value a client can make the server parse or answer.
void checkJsonText(const mcpdb::Json& v) {
  const std::string want = v.dump(-1, ' ', false, mcpdb::Json::error_handler_t::replace);
  if (mcpdb::protocol::serialize(v) != want) __builtin_trap();
  if (mcpdb::serializedSize(v) != want.size()) __builtin_trap();
}

class NullOutbox : public mcpdb::protocol::Outbox {
 public:
  void send(const mcpdb::Json& message) override { checkJsonText(message); }
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

// The classification HTTP asks (protocol::classify) agrees with the session's own rules, and the
// session serves a classified message as it serves the text (the HTTP path).
void checkClassification(std::string_view line,
                         const std::shared_ptr<mcpdb::protocol::Session>& session,
                         const std::shared_ptr<mcpdb::protocol::Outbox>& out) {
  namespace p = mcpdb::protocol;
  auto parsed = p::parseMessage(line, core().options().parse);
  if (!parsed.message) return;
  mcpdb::Json& m = *parsed.message;
  checkJsonText(m);
  const p::Classified c = p::classify(m);
  if (c.batch != m.is_array()) __builtin_trap();
  if (!c.batch && (c.answered != p::getsAnswer(m) || c.tool_call != p::isToolCall(m)))
    __builtin_trap();
  if (c.era == p::Era::Modern && !c.meta) __builtin_trap();  // the metadata is always judged
  if (c.meta) {
    const auto* meta = std::get_if<p::ModernMeta>(&*c.meta);
    if (meta != nullptr && !p::isModernVersion(meta->version)) __builtin_trap();
  }
  if (c.name && (!c.method || p::nameMember(*c.method) == nullptr)) __builtin_trap();
  session->handleClassified(std::move(m), c, out);
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
    checkClassification(input.substr(0, nl), session, out);
    if (nl == std::string_view::npos) break;
    input.remove_prefix(nl + 1);
  }
  session->cancelAll();
  session->drain(std::chrono::milliseconds(100));
  return 0;
}
