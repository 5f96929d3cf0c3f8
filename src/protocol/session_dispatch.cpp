// The one path of the requests that run on a worker (tools/call, resources/read): the id in
// flight, cancellation (notifications/cancelled, the client gone), the source's bulkhead and its
// queue, the worker pool, and the answer of a request that never ran.

#include "protocol/session.hpp"

namespace mcpdb::protocol {

bool Session::startRequest(const Json& id, const std::shared_ptr<Outbox>& out,
                           std::stop_source& source) {
  const std::string key = id.dump();
  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_.count(key) != 0 || subscriptions_.count(key) != 0) {
    out->send(makeErrorResponse(id, rpc::kInvalidRequest,
                                "a request with this id is already in progress"));
    return false;
  }
  source = in_flight_[key];
  return true;
}

void Session::dispatch(Job job, std::stop_source source, const std::shared_ptr<Outbox>& out) {
  // The request is cancelled when whoever waits for its answer goes away (a closed HTTP
  // connection).
  using OnGone = std::stop_callback<std::function<void()>>;
  std::shared_ptr<OnGone> on_gone;
  if (const std::stop_token gone = out->gone(); gone.stop_possible()) {
    on_gone = std::make_shared<OnGone>(
        gone, std::function<void()>([source]() mutable { source.request_stop(); }));
  }
  const std::stop_token stop = source.get_token();
  // The source's own share first, before a worker or a queue slot: a hung source holds only its
  // bulkhead, never the workers every other source needs.
  Bulkhead* bulkhead =
      job.tool != nullptr && job.surface ? job.surface->bulkheadFor(*job.tool) : nullptr;
  std::shared_ptr<Bulkhead::Slot> slot;  // none when the server has no bulkheads
  if (bulkhead != nullptr) slot = std::make_shared<Bulkhead::Slot>(bulkhead->tryAcquire());
  const auto timeout = job.tool != nullptr ? job.tool->limits.timeout : Limits{}.timeout;
  // A request that waits for its source's slot keeps the deadline it had when it came.
  const bool waits = slot && !*slot;
  const Clock::time_point deadline = waits ? Clock::now() + timeout : Clock::time_point::max();
  // The work holds the surface: the slot's bulkhead and the tool live until it has run.
  CallJob work = [run = std::move(job.run), stop, on_gone, slot, deadline, surface = job.surface](
                     CallWaits* offered) { run(stop, slot.get(), deadline, offered); };
  auto self = shared_from_this();
  if (waits) {
    auto ended = [self, key = job.key, out, unrun = job.unrun, bulkhead, deadline,
                  timeout](NotRun why) {
      // The wait, from when the request came.
      const auto waited_for =
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - deadline + timeout);
      std::string line = unrun(Unrun{why, true, waited_for, bulkhead, timeout});
      if (why == NotRun::Cancelled) return self->endUnanswered(key, out);
      self->finishAndSend(key, out, std::move(line));
    };
    switch (waitForSlot(*bulkhead, deadline, stop, slot, work, ended)) {
      case SlotWait::Queued: return;
      case SlotWait::Now: break;  // a slot came free meanwhile
      case SlotWait::Full: {
        std::string line = job.unrun(Unrun{NotRun::SourceFull, false, {}, bulkhead, timeout});
        finishCall(job.key);
        out->sendSerialized(std::move(line), true);
        return;
      }
    }
  }
  const bool queued =
      dispatch_ ? dispatch_(work, job.honours_waits) : core_.pool().trySubmit(std::move(work));
  if (!queued) {
    if (slot) slot->release();
    std::string line = job.unrun(Unrun{NotRun::Busy, false, {}, bulkhead, timeout});
    finishCall(job.key);
    out->sendSerialized(std::move(line), true);
  }
}

Session::SlotWait Session::waitForSlot(Bulkhead& bulkhead, Clock::time_point deadline,
                                       const std::stop_token& stop,
                                       const std::shared_ptr<Bulkhead::Slot>& slot, CallJob& work,
                                       const std::function<void(NotRun)>& ended) {
  // The work is moved into the queue only when it waits there.
  auto held = std::make_shared<CallJob>(std::move(work));
  using Hook = std::stop_callback<std::function<void()>>;
  auto hook = std::make_shared<std::unique_ptr<Hook>>();  // set once the ticket is known
  Bulkhead::Waiter waiter;
  waiter.granted = [held, slot, ended, hook, pool = &core_.pool()](Bulkhead::Slot given) {
    // On the thread that gave the slot back: the request goes to a worker holding it.
    *slot = std::move(given);
    if (!pool->trySubmit([held](CallWaits* offered) { (*held)(offered); })) {
      slot->release();
      ended(NotRun::Busy);
    }
  };
  waiter.refused = [ended, hook](Bulkhead::Refusal why) {
    ended(why == Bulkhead::Refusal::TimedOut    ? NotRun::TimedOut
          : why == Bulkhead::Refusal::Cancelled ? NotRun::Cancelled
                                                : NotRun::Closed);
  };
  Bulkhead::Admission admission = bulkhead.acquireOrWait(deadline, waiter);
  if (admission.ticket == 0) {
    work = std::move(*held);
    if (!admission.slot) return SlotWait::Full;
    *slot = std::move(admission.slot);
    return SlotWait::Now;
  }
  // Cancelled (notifications/cancelled, the HTTP client gone) while it waits: out of the queue,
  // answered as cancelled (Bulkhead::cancel runs the answer off this thread, which may hold mu_).
  if (stop.stop_possible()) {
    *hook = std::make_unique<Hook>(
        stop,
        std::function<void()>([b = &bulkhead, ticket = admission.ticket] { b->cancel(ticket); }));
  }
  return SlotWait::Queued;
}

void Session::endUnanswered(const std::string& key, const std::shared_ptr<Outbox>& out) {
  finishCall(key);  // MCP: a cancelled request gets no response
  out->unanswered();
}

Session::Sending::Sending(Session& session, const std::string& key) : session_(session) {
  std::lock_guard<std::mutex> lock(session_.mu_);
  session_.in_flight_.erase(key);
  ++session_.sending_;
}

Session::Sending::~Sending() {
  std::lock_guard<std::mutex> lock(session_.mu_);
  --session_.sending_;
  if (session_.in_flight_.empty() && session_.sending_ == 0) session_.idle_cv_.notify_all();
}

void Session::finishAndSend(const std::string& key, const std::shared_ptr<Outbox>& out,
                            std::string line) {
  const Sending sending(*this, key);
  out->sendSerialized(std::move(line), true);
}

void Session::finishCall(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(key);
  if (in_flight_.empty() && sending_ == 0) idle_cv_.notify_all();
}

}  // namespace mcpdb::protocol
