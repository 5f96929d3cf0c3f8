#include "protocol/answers.hpp"

#include "common/json_escape.hpp"
#include "protocol/jsonrpc.hpp"

namespace mcpdb::protocol {

std::string bounded(const std::string& s, std::size_t max) {
  return s.size() > max ? s.substr(0, max) + "..." : s;
}

std::string errorText(const Error& e) {
  std::string hint;
  switch (e.code) {
    case Code::TimedOut:
      hint = " The call ran out of time; narrow the request or try again later.";
      break;
    case Code::Unavailable: hint = " Retrying later may help."; break;
    case Code::ResourceExhausted:
      hint = " A limit was reached; wait and retry, or narrow the request.";
      break;
    default: break;
  }
  // The hint is a sentence of its own: the message gets its full stop first.
  const bool ended = !e.message.empty() && (e.message.back() == '.' || e.message.back() == '!' ||
                                            e.message.back() == '?');
  return "Error (" + std::string(codeName(e.code)) + "): " + e.message +
         (hint.empty() || ended ? "" : ".") + hint;
}

Json toolErrorResult(const std::string& text) {
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", text}}})},
              {"isError", true}};
}

std::string notRunText(const Unrun& unrun) {
  const Bulkhead* b = unrun.bulkhead;
  switch (unrun.why) {
    case NotRun::SourceFull:
      // Names the source as the operator named it (never a host), and says that other sources
      // still answer.
      return "Error (resource_exhausted): " + std::to_string(b->limit()) + " calls to " +
             b->name() + " are running and " + std::to_string(b->maxWaiting()) +
             " waiting, as many as one source may (server.max_calls_per_source); it may be slow "
             "or unreachable. Tools of other sources are not affected. Retry in a moment.";
    case NotRun::TimedOut:
      return "Error (timed_out): the call waited " + std::to_string(unrun.timeout.count()) +
             " ms (its timeout) for one of the " + std::to_string(b->limit()) + " calls " +
             b->name() +
             " may run at once (server.max_calls_per_source), and none came free; it may be "
             "slow or unreachable. Tools of other sources are not affected. Retry later.";
    case NotRun::Closed: return "Error (unavailable): the server is shutting down.";
    default:
      return "Error (resource_exhausted): the server is busy with other calls. Retry in a "
             "moment.";
  }
}

Fence effectiveFence(Fence result, Fence tool, Fence server) {
  return result != Fence::Inherit ? result : tool != Fence::Inherit ? tool : server;
}

std::string callSuccessLine(const CallSuccess& call) {
  const std::string id_text = serialize(call.id);
  std::string line;
  // Members in serialize()'s (sorted) order; at 2026-07-28 also _meta and resultType.
  line.reserve(2 * call.structured.size() + id_text.size() + 256);
  line.append(R"({"id":)");
  line.append(id_text);
  line.append(R"(,"jsonrpc":"2.0","result":{)");
  if (call.modern) {
    line.append(call.server_info_meta);
    line.push_back(',');
  }
  line.append(R"("content":[{"text":")");
  if (call.fenced) {
    const std::string nonce = fenceNonce();
    appendJsonEscaped(line, fenceOpening(nonce));
    appendJsonEscaped(line, call.structured);
    appendJsonEscaped(line, fenceClosing(nonce));
  } else {
    appendJsonEscaped(line, call.structured);
  }
  line.append(R"(","type":"text"}],"isError":false,)");
  if (call.modern) line.append(R"("resultType":"complete",)");
  line.append(R"("structuredContent":)");
  line.append(call.structured);
  line.append("}}");
  return line;
}

}  // namespace mcpdb::protocol
