// tools/call: the request checked and dispatched (session_dispatch.cpp), then, on its worker, the
// call's steps: its context, the memory for its result, the handler, the answer and its audit.

#include "protocol/request_trace.hpp"
#include "protocol/schema.hpp"
#include "protocol/session.hpp"

namespace mcpdb::protocol {

// One checked tools/call, as its worker runs it.
struct Session::Call {
  Json id;
  std::string key;  // the id, serialised
  // Shared with the registry so that the tool outlives the call even across a reload.
  std::shared_ptr<const Tool> tool;
  Json arguments;
  Json progress_token;  // null: the client asked for no progress
  std::shared_ptr<Outbox> out;
  bool modern = false;
  // The request's span (request_trace.hpp), ended after the answer; null when not traced.
  std::shared_ptr<telemetry::Span> span;
};

namespace {

// params._meta.progressToken when it is usable (a string or an integer); null otherwise.
Json progressToken(const Json& params) {
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  const auto token = meta->find("progressToken");
  if (token == meta->end() || !(token->is_string() || token->is_number_integer())) return nullptr;
  return *token;
}

Error resultMemoryExhausted(const MemoryBudget& budget) {
  return makeError(Code::ResourceExhausted,
                   "the server holds as much memory for results in flight as it may "
                   "(server.max_result_memory, " +
                       std::to_string(budget.total() >> 20) + " MiB); retry in a moment");
}

// The audit outcome of a call that never ran.
std::string notRunOutcome(NotRun why) {
  switch (why) {
    case NotRun::SourceFull: return "source_busy";
    case NotRun::Cancelled: return "cancelled";
    case NotRun::TimedOut: return std::string(codeName(Code::TimedOut));
    case NotRun::Closed: return std::string(codeName(Code::Unavailable));
    case NotRun::Busy: break;
  }
  return "busy";
}

}  // namespace

void Session::callTool(const Json& id, Json& params, const std::shared_ptr<Outbox>& out,
                       bool modern) {
  if (!params.contains("name") || !params["name"].is_string()) {
    out->send(
        makeErrorResponse(id, rpc::kInvalidParams, "tools/call needs params.name (a string)"));
    return;
  }
  const auto& name = params["name"].get_ref<const std::string&>();
  // The surface this call starts on: it finishes on it whatever a reload publishes meanwhile (the
  // tool's statement and its runtime's proof go together; protocol/server_core.hpp).
  std::shared_ptr<const ToolSurface> surface = core_.surface();
  std::shared_ptr<const Tool> tool = surface->registry().findShared(name);
  CallRecord record{.client_id = principal_.client_id,
                    .tool = bounded(name),
                    .engine = tool != nullptr ? tool->engine : "",
                    .request_id = requestIdText(id)};
  telemetry::Span* span = core_.tracer() != nullptr ? currentRequestSpan() : nullptr;
  if (span != nullptr && tool != nullptr) {
    // Only a name from the registry: the one a caller sent for an unknown tool is not written.
    span->setName("tools/call " + tool->name);
    span->setString("gen_ai.tool.name", tool->name);
    span->setString("gen_ai.operation.name", "execute_tool");
  }
  // A tool outside the caller's scope is indistinguishable from one that does not exist.
  if (tool == nullptr || !visible(*tool)) {
    record.outcome = tool == nullptr ? "unknown_tool" : "out_of_scope";
    core_.notify(record);
    annotateCall(span, record);
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "Unknown tool: " + bounded(name)));
    return;
  }
  auto found_arguments = params.find("arguments");
  Json arguments = found_arguments != params.end() ? std::move(*found_arguments) : Json::object();
  if (arguments.is_null()) arguments = Json::object();
  if (!arguments.is_object()) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams,
                                "tools/call params.arguments must be an object"));
    return;
  }
  if (auto st = validateJson(tool->input_schema, arguments); !st) {
    record.outcome = "invalid_arguments";
    core_.notify(record);
    annotateCall(span, record);
    out->send(makeResultResponse(
        id, finishResult(toolErrorResult("Invalid arguments: " + st.error().message), modern,
                         /*cacheable=*/false)));
    return;
  }
  std::stop_source source;
  if (!startRequest(id, out, source)) return;
  const std::string key = id.dump();
  if (auto refusal = out->admitCall()) {
    finishCall(key);
    record.outcome = refusal->outcome;
    core_.notify(record);
    annotateCall(span, record);
    out->send(makeErrorResponse(id, kLimitExceeded, refusal->message));
    return;
  }
  auto self = shared_from_this();
  // From here the call's worker ends the span, after the answer.
  std::shared_ptr<telemetry::Span> call_span = span != nullptr ? takeRequestSpan() : nullptr;
  Call call{.id = id,
            .key = key,
            .tool = tool,
            .arguments = std::move(arguments),
            .progress_token = progressToken(params),
            .out = out,
            .modern = modern,
            .span = call_span};
  dispatch(
      Job{.id = id,
          .key = key,
          .tool = tool.get(),
          .surface = std::move(surface),
          .honours_waits = tool->honours_waits,
          .run = [self, call = std::move(call)](
                     const std::stop_token& stop, Bulkhead::Slot* slot, Clock::time_point deadline,
                     CallWaits* waits) { self->runCall(call, stop, slot, deadline, waits); },
          .unrun =
              [self, id, modern, record = std::move(record),
               span = std::move(call_span)](const Unrun& unrun) {
                return self->callNotRunAnswer(id, modern, unrun, record, span.get());
              }},
      std::move(source), out);
}

std::string Session::callNotRunAnswer(const Json& id, bool modern, const Unrun& unrun,
                                      CallRecord record, telemetry::Span* span) const {
  record.outcome = notRunOutcome(unrun.why);
  if (unrun.waited) record.duration = unrun.waited_for;
  core_.notify(record);
  endCallSpan(span, record);
  if (unrun.why == NotRun::Cancelled) return {};  // MCP: a cancelled request gets no response
  return serialize(makeResultResponse(
      id, finishResult(toolErrorResult(notRunText(unrun)), modern, /*cacheable=*/false)));
}

void Session::runCall(const Call& call, const std::stop_token& stop, Bulkhead::Slot* slot,
                      Clock::time_point deadline, CallWaits* waits) {
  const auto started = Clock::now();
  CallRecord record{.client_id = principal_.client_id,
                    .tool = call.tool->name,
                    .engine = call.tool->engine,
                    .request_id = requestIdText(call.id)};
  if (stop.stop_requested()) {
    if (slot != nullptr) slot->release();
    return endCancelledCall(call, std::move(record));
  }
  CallContext ctx = callContext(call, stop, started, deadline, waits);
  // The result's memory is held from before the call until its answer is written, and given back
  // before the call counts as finished (drain() and the next call see it returned).
  auto held = core_.resultMemory().tryReserve(kResultCopies * ctx.limits.max_bytes);
  const Result<ToolOutput> result =
      held ? invokeTool(call, ctx)
           : Result<ToolOutput>(resultMemoryExhausted(core_.resultMemory()));
  // The source is free again before anyone reads the answer, so a client's next call finds it so.
  if (slot != nullptr) slot->release();
  record.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  record.source = std::move(ctx.audit.source);
  record.truncated = ctx.audit.truncated;
  if (stop.stop_requested()) {
    held.reset();
    return endCancelledCall(call, std::move(record));
  }
  std::string line = callAnswer(call, result, record);
  const Sending sending(*this, call.key);
  core_.notify(record);
  call.out->sendSerialized(std::move(line), true);
  held.reset();
  endCallSpan(call.span.get(), record);
}

void Session::endCancelledCall(const Call& call, CallRecord record) {
  record.outcome = "cancelled";
  core_.notify(record);
  endCallSpan(call.span.get(), record);
  endUnanswered(call.key, call.out);  // MCP: a cancelled request gets no response
}

CallContext Session::callContext(const Call& call, const std::stop_token& stop,
                                 Clock::time_point started, Clock::time_point deadline,
                                 CallWaits* waits) const {
  CallContext ctx;
  ctx.stop = stop;
  // Only a tool that promised to honour them gets them (a runner may offer them to any call).
  if (call.tool->honours_waits) ctx.waits = waits;
  ctx.deadline = std::min(started + call.tool->limits.timeout, deadline);
  ctx.limits = call.tool->limits;
  ctx.principal = principal_;
  ctx.span = call.span.get();
  if (!call.progress_token.is_null()) {
    ctx.progress = [out = call.out, token = call.progress_token, stop](
                       double progress, std::optional<double> total, const std::string& msg) {
      if (stop.stop_requested()) return;
      Json p = {{"progressToken", token}, {"progress", progress}};
      if (total) p["total"] = *total;
      if (!msg.empty()) p["message"] = msg;
      out->send(makeNotification("notifications/progress", std::move(p)));
    };
  }
  return ctx;
}

Result<ToolOutput> Session::invokeTool(const Call& call, CallContext& ctx) const {
  try {
    return call.tool->handler(call.arguments, ctx);
  } catch (const std::exception&) {
    // Handlers must not throw; if one does, the agent gets a safe message and nothing else.
    return makeError(Code::Internal, "internal error in tool '" + call.tool->name + "'");
  }
}

std::string Session::callAnswer(const Call& call, const Result<ToolOutput>& result,
                                CallRecord& record) const {
  if (!result.ok()) {
    record.outcome = std::string(codeName(result.error().code));
    return serialize(
        makeResultResponse(call.id, finishResult(toolErrorResult(errorText(result.error())),
                                                 call.modern, /*cacheable=*/false)));
  }
  // The structured result is dumped once; the response is assembled around that text.
  const std::string text = serialize(result->structured);
  record.rows = result->rows;
  record.bytes = text.size();
  record.outcome = "ok";
  const Fence fence = effectiveFence(result->fence, call.tool->fence, core_.options().fence);
  return callSuccessLine(
      CallSuccess{.id = call.id,
                  .structured = text,
                  .fenced = fence == Fence::Always || (fence == Fence::Auto && result->free_text),
                  .modern = call.modern,
                  .server_info_meta = core_.serverInfoMetaMember()});
}

}  // namespace mcpdb::protocol
