// What an agent reads of a tool's error: the message, then the code's hint as a sentence of its
// own (never run into the message, never doubling what the message said).
#include "protocol/answers.hpp"

#include <gtest/gtest.h>

namespace mcpdb::protocol {
namespace {

TEST(ErrorText, TheHintIsASentenceOfItsOwn) {
  EXPECT_EQ(errorText(makeError(Code::Unavailable,
                                "cannot connect to PostgreSQL: the server is unreachable")),
            "Error (unavailable): cannot connect to PostgreSQL: the server is unreachable. "
            "Retrying later may help.");
  // A message that already ends a sentence gets no second full stop.
  EXPECT_EQ(errorText(makeError(Code::TimedOut, "the statement ran out of time.")),
            "Error (timed_out): the statement ran out of time. The call ran out of time; narrow "
            "the request or try again later.");
  EXPECT_EQ(errorText(makeError(Code::ResourceExhausted, "too big?")),
            "Error (resource_exhausted): too big? A limit was reached; wait and retry, or narrow "
            "the request.");
  // No hint: the message as it is.
  EXPECT_EQ(errorText(makeError(Code::NotFound, "no such row")), "Error (not_found): no such row");
}

}  // namespace
}  // namespace mcpdb::protocol
