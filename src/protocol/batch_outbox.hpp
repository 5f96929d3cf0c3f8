#pragma once
// Collects the responses to a JSON-RPC batch and sends them as one array once every answer the
// batch is due is in; notifications (progress, logs) pass straight through.

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/outbox.hpp"

namespace mcpdb::protocol {

class BatchOutbox final : public Outbox {
 public:
  BatchOutbox(std::shared_ptr<Outbox> parent, std::size_t expected)
      : parent_(std::move(parent)), expected_(expected) {}
  void send(const Json& message) override;
  void sendSerialized(std::string text, bool response) override;
  // A cancelled request sends nothing; stop waiting for it.
  void unanswered() override;
  std::optional<CallRefusal> admitCall() override { return parent_->admitCall(); }
  std::stop_token gone() const override { return parent_->gone(); }

 private:
  void add(std::string text);
  // The array of the collected responses, in the order they finished.
  std::string join();

  std::shared_ptr<Outbox> parent_;
  std::mutex mu_;
  std::size_t expected_;
  std::vector<std::string> responses_;
};

}  // namespace mcpdb::protocol
