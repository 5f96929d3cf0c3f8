#include "transport/http/session_table.hpp"

#include <openssl/rand.h>

namespace mcpdb::transport::http {

std::string newSessionId() {
  unsigned char buf[32];
  if (RAND_bytes(buf, sizeof buf) != 1) return {};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char c : buf) {
    id += kHex[c >> 4];
    id += kHex[c & 15];
  }
  return id;
}

bool wellFormedSessionId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

std::optional<std::string> SessionTable::add(std::shared_ptr<protocol::Session> session,
                                             std::string owner, Clock::time_point now) {
  std::string id = newSessionId();
  if (id.empty()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (entries_.size() >= max_) return std::nullopt;
  entries_[id] = Entry{std::move(session), std::move(owner), now};
  return id;
}

std::shared_ptr<protocol::Session> SessionTable::find(std::string_view id, std::string_view owner,
                                                      Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.owner != owner) return nullptr;
  it->second.last_used = now;
  return it->second.session;
}

std::shared_ptr<protocol::Session> SessionTable::remove(std::string_view id,
                                                        std::string_view owner) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.owner != owner) return nullptr;
  auto s = std::move(it->second.session);
  entries_.erase(it);
  return s;
}

std::vector<std::shared_ptr<protocol::Session>> SessionTable::expire(std::chrono::milliseconds idle,
                                                                     Clock::time_point now) {
  std::vector<std::shared_ptr<protocol::Session>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now - it->second.last_used > idle && it->second.session->inFlight() == 0) {
      out.push_back(std::move(it->second.session));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<std::shared_ptr<protocol::Session>> SessionTable::all() const {
  std::vector<std::shared_ptr<protocol::Session>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, e] : entries_) out.push_back(e.session);
  return out;
}

std::size_t SessionTable::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace mcpdb::transport::http
