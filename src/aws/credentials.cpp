#include "aws/credentials.hpp"

#include <cstdio>
#include <ctime>
#include <ostream>

namespace mcpdb::aws {

std::string redactKeyId(std::string_view id) {
  if (id.size() < 12) return "****";
  return std::string(id.substr(0, 4)) + "****" + std::string(id.substr(id.size() - 4));
}

std::string Credentials::describe() const {
  std::string out = (source.empty() ? std::string("unknown source") : source) + " (" +
                    redactKeyId(accessKeyId) + ")";
  if (expiration) out += ", expires " + formatIso8601(*expiration);
  return out;
}

std::string formatIso8601(Clock::time_point t) {
  std::time_t tt = Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<Clock::time_point> parseIso8601(std::string_view s) {
  // Fixed layout: a hand-written parse is simpler than std::chrono::parse (absent in libstdc++ 12).
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](std::size_t pos, std::size_t len) -> int {
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  std::tm tm{};
  int year = num(0, 4), mon = num(5, 2), day = num(8, 2), hour = num(11, 2), min = num(14, 2),
      sec = num(17, 2);
  if (year < 1970 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      min < 0 || min > 59 || sec < 0 || sec > 60) {
    return std::nullopt;
  }
  std::size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  }
  std::string_view zone = s.substr(i);
  if (zone != "Z" && zone != "z" && zone != "+00:00" && zone != "+0000") return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  return Clock::from_time_t(timegm(&tm));
}

void PrintTo(const Credentials& credentials, std::ostream* os) {
  *os << credentials.describe();
}

}  // namespace mcpdb::aws
