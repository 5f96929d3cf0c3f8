#include "engines/mysql/cancel.hpp"

#include <thread>

#include "engines/mysql/raw_client.hpp"

namespace mcpdb::mysql {
namespace {

// How long the canceller waits for the statement to show up as 'Execute' (it may still be on
// its way to the server when the stop is requested).
constexpr int kProbeAttempts = 50;
constexpr std::chrono::milliseconds kProbeInterval{10};
constexpr std::chrono::seconds kSideIoTimeout{5};

bool allDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

std::string processlistProbe(Flavour flavour, unsigned long connectionId) {
  const std::string what = flavour == Flavour::MariaDB ? "QUERY_ID" : "ID";
  return "SELECT " + what +
         " FROM information_schema.PROCESSLIST WHERE ID = " + std::to_string(connectionId) +
         " AND COMMAND = 'Execute'";
}

std::string killStatement(Flavour flavour, unsigned long connectionId, std::string_view queryId) {
  if (flavour == Flavour::MariaDB) return "KILL QUERY ID " + std::string(queryId);
  return "KILL QUERY " + std::to_string(connectionId);
}

// One probe; true when the KILL was sent (or is moot).
bool Canceller::killOnce(MYSQL* side) {
  auto id = queryFirstValue(side, processlistProbe(flavour_, connection_id_), "cancel");
  if (!id) return true;  // the side connection failed: nothing more to try
  if (!id->has_value() || !allDigits(**id)) return false;
  // "unknown thread/query" once it finished meanwhile is fine: there is nothing left to kill.
  (void)queryFirstValue(side, killStatement(flavour_, connection_id_, **id), "cancel");
  return true;
}

void Canceller::cancel() {
  if (fired_.exchange(true)) return;
  if (!executing_.load()) return;  // the caller checks the stop token before executing
  side_.start([this] { killOnSide(); });
}

void Canceller::killOnSide() {
  Dsn side = dsn_;
  side.connect_timeout = std::min(side.connect_timeout, kSideIoTimeout);
  auto conn = connectRaw(side, kSideIoTimeout);
  if (!conn) return;  // nothing else to do: the statement's own time limit still holds
  for (int i = 0; i < kProbeAttempts && executing_.load(); ++i) {
    if (killOnce(conn->get())) return;
    std::this_thread::sleep_for(kProbeInterval);
  }
}

}  // namespace mcpdb::mysql
