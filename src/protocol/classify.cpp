#include "protocol/classify.hpp"

#include <algorithm>
#include <array>

namespace mcpdb::protocol {
namespace {

bool validId(const Json& id) {
  return id.is_string() || id.is_number_integer();
}

// The per-request part of one message (an object).
void classifyObject(const Json& message, Classified& c) {
  c.answered = getsAnswer(message);
  if (const auto id = message.find("id"); id != message.end() && validId(*id)) c.id = *id;
  if (const auto method = message.find("method"); method != message.end() && method->is_string())
    c.method = method->get<std::string>();
  c.initialize = c.method == "initialize";
  c.tool_call = c.method == "tools/call" && !c.id.is_null();
  c.subscription = c.method == "subscriptions/listen";
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return;
  if (c.era == Era::Legacy && carriesModernMeta(*params)) c.era = Era::Modern;
  if (c.method == "tools/call" && message.contains("id")) {
    const auto meta = params->find("_meta");
    c.wants_progress =
        meta != params->end() && meta->is_object() && meta->contains("progressToken");
  }
  if (const char* member = c.method ? nameMember(*c.method) : nullptr) {
    if (const auto n = params->find(member); n != params->end() && n->is_string())
      c.name = n->get<std::string>();
  }
}

}  // namespace

bool getsAnswer(const Json& message) {
  if (!message.is_object()) return true;
  if (!message.contains("id")) return false;
  // A client's response to a request of ours (no method, a result or an error) is not answered.
  return message.contains("method") || !(message.contains("result") || message.contains("error"));
}

bool isToolCall(const Json& message) {
  if (!message.is_object() || !message.contains("id") || !validId(message["id"])) return false;
  const auto method = message.find("method");
  return method != message.end() && *method == "tools/call";
}

Classified classify(const Json& message, std::optional<std::string_view> transport_version) {
  Classified c;
  if (transport_version && isModernVersion(*transport_version)) c.era = Era::Modern;
  c.batch = message.is_array();
  if (!message.is_object()) return c;
  classifyObject(message, c);
  if (c.era != Era::Modern) return c;
  static const Json kNoParams = Json::object();
  const auto params = message.find("params");
  c.meta = checkModernMeta(params != message.end() ? *params : kNoParams);
  c.known_method = c.method && isModernMethod(*c.method);
  return c;
}

const char* nameMember(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  return nullptr;
}

}  // namespace mcpdb::protocol
