// The operator's log: UTC timestamps ending in Z whatever the machine's zone, and JSON lines a
// collector can parse whatever the message holds.
#include "app/logging.hpp"

#include <gtest/gtest.h>
#include <spdlog/details/log_msg.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>

#include "common/json.hpp"

namespace mcpdb::app {
namespace {

std::string formatted(LogFormat format, spdlog::level::level_enum level, std::string_view text) {
  spdlog::details::log_msg msg(spdlog::source_loc{}, "mcp-dbserver", level,
                               spdlog::string_view_t(text.data(), text.size()));
  // 2026-12-05T23:59:18.123Z: a time whose date differs in most zones east of UTC.
  msg.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796515158123LL));
  spdlog::memory_buf_t buf;
  makeLogFormatter(format)->format(msg, buf);
  return std::string(buf.data(), buf.size());
}

class LogFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz != nullptr ? std::optional<std::string>(tz) : std::nullopt;
    ::setenv("TZ", "Asia/Seoul", 1);  // UTC+9: a local-time formatter would print 08:59 next day
    ::tzset();
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("TZ", saved_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }
  std::optional<std::string> saved_;
};

TEST_F(LogFormatTest, TextLinesCarryUtcTimeWithZ) {
  EXPECT_EQ(formatted(LogFormat::Text, spdlog::level::info, "serving MCP on stdio"),
            "2026-12-05T23:59:18.123Z info serving MCP on stdio\n");
  EXPECT_EQ(formatted(LogFormat::Text, spdlog::level::warn, "x"),
            "2026-12-05T23:59:18.123Z warning x\n");
}

TEST_F(LogFormatTest, JsonLinesAreOneObjectEachWithTheMessageEscaped) {
  const std::string hostile[] = {
      "plain",
      "a \"quoted\" word and a back\\slash",
      "two\nlines\rand\ttab",
      std::string("nul \0 and bell \x07", 16),
      "not utf-8: \xff\xfe end",
      "}{\"level\":\"critical\",\"message\":\"forged\"}",
  };
  for (const auto& text : hostile) {
    SCOPED_TRACE(text);
    const std::string line = formatted(LogFormat::Json, spdlog::level::err, text);
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per event";
    const Json o = Json::parse(line);  // throws when the line is not one JSON value
    ASSERT_TRUE(o.is_object());
    EXPECT_EQ(o.size(), 3U);
    EXPECT_EQ(o["time"], "2026-12-05T23:59:18.123Z");
    EXPECT_EQ(o["level"], "error");
    if (text.find('\xff') == std::string::npos) {
      EXPECT_EQ(o["message"], text);
    } else {
      EXPECT_NE(o["message"].get<std::string>().find("not utf-8:"), std::string::npos);
    }
  }
}

TEST(LogFormat, OnlyTextAndJsonAreFormats) {
  EXPECT_EQ(parseLogFormat("text"), LogFormat::Text);
  EXPECT_EQ(parseLogFormat("json"), LogFormat::Json);
  for (const char* bad : {"", "JSON", "xml", "json "}) EXPECT_FALSE(parseLogFormat(bad)) << bad;
}

}  // namespace
}  // namespace mcpdb::app
