#pragma once
// The span of one MCP request (telemetry/span.hpp): started when the session takes the request,
// with the caller's W3C trace context as its parent (params._meta's `traceparent`/`tracestate`,
// else the transport's headers; protocol/classify.hpp), and ended when it is answered. A request
// answered on the spot ends with the RequestTrace that handleOne holds; tools/call and
// resources/read take the span along to their worker (takeRequestSpan) and end it there, after
// their answer.
//
// Only made when the server traces (ServerCore::tracer() not null): with tracing off a request
// costs one null test.

#include <memory>
#include <string_view>

#include "common/json.hpp"
#include "protocol/call_record.hpp"
#include "protocol/classify.hpp"
#include "telemetry/span.hpp"
#include "telemetry/tracer.hpp"

namespace mcpdb::protocol {

class RequestTrace {
 public:
  // Starts the request's span (none when the tracer does not record it) and makes it this
  // thread's current request span until destroyed.
  RequestTrace(telemetry::Tracer& tracer, const Classified& classified, std::string_view method,
               const Json& params, std::string_view protocol_version);
  // Ends the span unless a handler took it.
  ~RequestTrace();
  RequestTrace(const RequestTrace&) = delete;
  RequestTrace& operator=(const RequestTrace&) = delete;

 private:
  std::shared_ptr<telemetry::Span> span_;
  RequestTrace* outer_;  // the RequestTrace this one hides (a batch inside a request: never)
};

// The span of the request this thread is handling (null: not traced).
telemetry::Span* currentRequestSpan();
// Takes the current request's span to end it elsewhere (null: not traced).
std::shared_ptr<telemetry::Span> takeRequestSpan();

// What a call's record tells its span: engine, source, outcome (and the error's class when it
// failed), rows, truncation. Never values: CallRecord holds none.
void annotateCall(telemetry::Span* span, const CallRecord& record);
// annotateCall, then ends the span.
void endCallSpan(telemetry::Span* span, const CallRecord& record);

// The caller's trace context: params._meta's traceparent/tracestate when it has a valid
// traceparent, else the transport's (Classified::traceparent/tracestate); nullopt when neither.
std::optional<telemetry::SpanContext> remoteContext(const Classified& classified,
                                                    const Json& params);

}  // namespace mcpdb::protocol
