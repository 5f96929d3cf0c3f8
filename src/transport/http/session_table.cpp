#include "transport/http/session_table.hpp"

#include "auth/api_key.hpp"

namespace mcpdb::transport::http {

std::string newSessionId() {
  return auth::randomHex(32);
}

bool wellFormedSessionId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

SessionTable::Added SessionTable::add(std::shared_ptr<protocol::Session> session, std::string owner,
                                      Clock::time_point now) {
  Added out;
  std::string id = newSessionId();
  if (id.empty()) {
    out.refused = Added::Refused::TableFull;
    return out;
  }
  std::lock_guard<std::mutex> lock(mu_);
  const auto held = per_owner_.find(owner);
  if (held != per_owner_.end() && held->second >= max_per_owner_) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.owner != owner || it->second.session->inFlight() != 0) continue;
      if (oldest == entries_.end() || it->second.last_used < oldest->second.last_used) oldest = it;
    }
    if (oldest == entries_.end()) {
      out.refused = Added::Refused::OwnerFull;
      return out;
    }
    out.evicted = std::move(oldest->second.session);
    eraseLocked(oldest);
  }
  if (entries_.size() >= max_) {
    out.refused = Added::Refused::TableFull;
    return out;
  }
  ++per_owner_[owner];
  entries_[id] = Entry{std::move(session), std::move(owner), now};
  out.id = std::move(id);
  return out;
}

void SessionTable::eraseLocked(Entries::iterator it) {
  auto n = per_owner_.find(it->second.owner);
  if (n != per_owner_.end() && --n->second == 0) per_owner_.erase(n);
  entries_.erase(it);
}

std::size_t SessionTable::countOf(std::string_view owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto n = per_owner_.find(owner);
  return n == per_owner_.end() ? 0 : n->second;
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
  eraseLocked(it);
  return s;
}

std::vector<std::shared_ptr<protocol::Session>> SessionTable::expire(std::chrono::milliseconds idle,
                                                                     Clock::time_point now) {
  std::vector<std::shared_ptr<protocol::Session>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now - it->second.last_used > idle && it->second.session->inFlight() == 0) {
      out.push_back(std::move(it->second.session));
      eraseLocked(it++);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<protocol::Session>>> SessionTable::removeIf(
    const std::function<bool(std::string_view owner)>& drop) {
  std::vector<std::pair<std::string, std::shared_ptr<protocol::Session>>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (drop(it->second.owner)) {
      out.emplace_back(it->second.owner, std::move(it->second.session));
      eraseLocked(it++);
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
