// libFuzzer target: arbitrary bytes on the stdio transport's input (runStdio over real pipes),
// with a tool that runs on the reader's fibers and sleeps through its waits (CallWaits) beside the
// fake plain tools. Checks: reading ends at end of input whatever the bytes (framing, over-long
// lines, CRLF, a final line without a newline, calls cancelled mid-sleep), every line written is
// one JSON value, and every call on a fiber ends (a fiber left suspended aborts the process).
#include <poll.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "../../unit/protocol/fake_tools.hpp"
#include "common/call_waits.hpp"
#include "protocol/session.hpp"
#include "transport/stdio/stdio_transport.hpp"

namespace {

using mcpdb::Json;
namespace protocol = mcpdb::protocol;
namespace transport = mcpdb::transport;

// "nap": sleeps through its waits on a pipe nobody writes, three times 1 ms, unless cancelled.
int napFd() {
  static int fds[2] = {-1, -1};
  if (fds[0] < 0 && ::pipe(fds) != 0) std::abort();
  return fds[0];
}

protocol::ServerCore& core() {
  static protocol::ServerCore instance(
      [] {
        protocol::ServerOptions o;
        o.workers = 3;
        o.max_queue = 4;
        o.parse.max_bytes = 64 * 1024;
        return o;
      }(),
      [] {
        auto reg = protocol::testing::makeFakeRegistry(1);
        protocol::Tool nap;
        nap.name = "nap";
        nap.engine = "fake";
        nap.description = "Sleeps through its waits.";
        nap.input_schema = {
            {"type", "object"}, {"properties", Json::object()}, {"additionalProperties", false}};
        nap.honours_waits = true;
        nap.handler = [](const Json&,
                         protocol::CallContext& ctx) -> mcpdb::Result<protocol::ToolOutput> {
          for (int i = 0; i < 3 && !ctx.stop.stop_requested(); ++i)
            (void)mcpdb::waitFor(ctx.waits, napFd(), POLLIN, 1);
          return protocol::ToolOutput{Json{{"ok", true}}, 0};
        };
        (void)reg->add(nap);
        return reg;
      }());
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int in[2];
  int out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) std::abort();
  auto session = std::make_shared<protocol::Session>(core(), protocol::Principal{"stdio"});
  auto outbox = std::make_shared<transport::FdOutbox>(out[1]);
  transport::StdioOptions io;
  io.in_fd = in[0];
  io.readers = 2;
  io.max_line_bytes = 4096;
  io.on_stop = [&session](transport::StopReason) { session->drain(std::chrono::milliseconds(20)); };
  std::thread writer([&] {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::write(in[1], data + done, size - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(in[1]);
  });
  std::string written;
  std::thread reader([&] {
    char chunk[4096];
    for (;;) {
      const ssize_t n = ::read(out[0], chunk, sizeof chunk);
      if (n <= 0) break;
      written.append(chunk, static_cast<std::size_t>(n));
    }
  });
  const transport::StopReason why = transport::runStdio(*session, outbox, io);
  writer.join();
  outbox.reset();
  session.reset();
  ::close(out[1]);
  reader.join();
  ::close(in[0]);
  ::close(out[0]);
  if (why != transport::StopReason::EndOfInput) std::abort();
  std::string_view rest(written);
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    if (nl == std::string_view::npos) std::abort();  // a line written without its newline
    const Json line = Json::parse(rest.substr(0, nl), nullptr, false);
    if (line.is_discarded()) std::abort();
    rest.remove_prefix(nl + 1);
  }
  return 0;
}
