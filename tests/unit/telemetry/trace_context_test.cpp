#include <gtest/gtest.h>

#include <string>

#include "telemetry/trace_context.hpp"

namespace mcpdb::telemetry {
namespace {

constexpr const char* kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(Traceparent, ReadsAValidVersion00) {
  auto ctx = parseTraceparent(kValid);
  ASSERT_TRUE(ctx);
  EXPECT_EQ(hex(ctx->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(hex(ctx->span_id), "00f067aa0ba902b7");
  EXPECT_TRUE(ctx->sampled());
  EXPECT_EQ(formatTraceparent(ctx->trace_id, ctx->span_id, ctx->flags), kValid);
  auto unsampled = parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled);
  EXPECT_FALSE(unsampled->sampled());
}

TEST(Traceparent, RefusesEverythingElse) {
  const std::string v = kValid;
  const char* bad[] = {
      "",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // uppercase
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
      "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // another version
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero parent id
      "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",   // short trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",  // trailing data
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ",
      " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",  // separators
      "00-4bf92f3577b34da6a3ce929d0e0e4736x00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",  // not hex
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-+1",
  };
  for (const char* b : bad) EXPECT_FALSE(parseTraceparent(b)) << b;
  EXPECT_FALSE(parseTraceparent(v + std::string(1000, 'a')));
  std::string with_nul = v;
  with_nul[10] = '\0';
  EXPECT_FALSE(parseTraceparent(with_nul));
}

TEST(Tracestate, NormalisesValidLists) {
  EXPECT_EQ(parseTracestate("congo=t61rcWkgMzE"), "congo=t61rcWkgMzE");
  EXPECT_EQ(parseTracestate(" rojo=00f067aa0ba902b7 ,\t,congo=t61rcWkgMzE\t"),
            "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  EXPECT_EQ(parseTracestate("tenant1@vendor=a b"), "tenant1@vendor=a b");  // inner space is fine
  EXPECT_EQ(parseTracestate("k/x*y_z-1=!~"), "k/x*y_z-1=!~");
  EXPECT_EQ(parseTracestate(""), "");
  EXPECT_EQ(parseTracestate(" , ,"), "");
}

TEST(Tracestate, RefusesBrokenListsWhole) {
  const char* bad[] = {
      "Congo=1",              // a key starts with a lowercase letter
      "1congo=1",             // a simple key does not start with a digit
      "congo",                // no value
      "congo=",               // an empty value
      "congo=a=b",            // '=' in a value
      "congo=a,congo=b",      // duplicate key
      "t@VENDOR=1",           // system id is lowercase
      "t@=1",                 // empty system id
      "@v=1",                 // empty tenant
      "t@abcdefghijklmno=1",  // system id longer than 14
      "con go=1",
      "congo=\x7f",
      "congo=\xc3\xa9",
  };
  for (const char* b : bad) EXPECT_FALSE(parseTracestate(b)) << b;
  // A value ends with a non-blank character: the blank before a comma is optional whitespace
  // around the member, and is dropped.
  EXPECT_EQ(parseTracestate("congo=a ,rojo=b"), "congo=a,rojo=b");
  EXPECT_FALSE(parseTracestate("k=" + std::string(257, 'v')));
  EXPECT_TRUE(parseTracestate("k=" + std::string(256, 'v')));
  EXPECT_FALSE(parseTracestate(std::string(257, 'k') + "=v"));
}

TEST(Tracestate, KeepsTheMemberAndLengthLimits) {
  std::string members;
  for (int i = 0; i < 32; ++i)
    members += (i ? "," : "") + std::string("k") + std::to_string(i) + "=v";
  EXPECT_TRUE(parseTracestate(members));
  EXPECT_FALSE(parseTracestate(members + ",k32=v"));  // 33 members
  // 512 bytes pass, 513 do not.
  const std::string at_limit = "k=" + std::string(254, 'v') + ",l=" + std::string(253, 'v');
  ASSERT_EQ(at_limit.size(), kMaxTracestateBytes);
  EXPECT_TRUE(parseTracestate(at_limit));
  EXPECT_FALSE(parseTracestate(at_limit + " "));
}

TEST(ExtractContext, NeedsAValidTraceparentAndDropsABadTracestate) {
  EXPECT_FALSE(extractContext("garbage", "congo=1"));
  auto ctx = extractContext(kValid, "congo=1,rojo=2");
  ASSERT_TRUE(ctx);
  EXPECT_EQ(ctx->trace_state, "congo=1,rojo=2");
  auto kept = extractContext(kValid, "Bad=1");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->trace_state, "");
}

}  // namespace
}  // namespace mcpdb::telemetry
