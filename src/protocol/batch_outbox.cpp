#include "protocol/batch_outbox.hpp"

#include "protocol/jsonrpc.hpp"

namespace mcpdb::protocol {

void Outbox::sendSerialized(std::string text, bool /*response*/) {
  send(Json::parse(text, nullptr, /*allow_exceptions=*/false));
}

void BatchOutbox::send(const Json& message) {
  if (!message.contains("id")) {
    parent_->send(message);
    return;
  }
  add(serialize(message));
}

void BatchOutbox::sendSerialized(std::string text, bool response) {
  if (!response) {
    parent_->sendSerialized(std::move(text), false);
    return;
  }
  add(std::move(text));
}

void BatchOutbox::unanswered() {
  std::string done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (expected_ == 0) return;
    --expected_;
    if (responses_.empty() || responses_.size() < expected_) return;
    done = join();
  }
  parent_->sendSerialized(std::move(done), true);
}

void BatchOutbox::add(std::string text) {
  std::string done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    responses_.push_back(std::move(text));
    if (responses_.size() < expected_) return;
    done = join();
  }
  parent_->sendSerialized(std::move(done), true);
}

std::string BatchOutbox::join() {
  std::string out = "[";
  for (std::size_t i = 0; i < responses_.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(responses_[i]);
  }
  out.push_back(']');
  responses_.clear();
  return out;
}

}  // namespace mcpdb::protocol
