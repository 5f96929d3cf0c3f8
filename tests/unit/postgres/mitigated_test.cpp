// doctor's "mitigated, not removed" outcome: only for a grant the operator cannot revoke (PUBLIC's,
// on a provider-owned pg_catalog function of a managed service) through functions the read-only
// proof refuses wherever they are reached. Anything else stays a violation.
#include <gtest/gtest.h>

#include "engines/postgres/runtime.hpp"

namespace mcpdb::postgres {
namespace {

Json row(const std::string& name, const std::string& holder = "PUBLIC", bool owner_super = true,
         const std::string& schema = "pg_catalog", const std::string& kind = "FUNCTION") {
  return Json{{"name", name},
              {"holder_sql", holder},
              {"owner_super", owner_super},
              {"schema", schema},
              {"kind", kind}};
}

TEST(DoctorMitigated, ProviderOwnedLargeObjectFunctionsOnAManagedService) {
  const Json rows = Json::array({row("lo_creat(integer)"), row("lo_from_bytea(oid, bytea)")});
  EXPECT_TRUE(mitigatedByProof(rows, "rds_superuser"));
}

TEST(DoctorMitigated, EveryOtherCaseStaysAViolation) {
  const Json lo = Json::array({row("lo_creat(integer)")});
  EXPECT_FALSE(mitigatedByProof(lo, ""));  // self-hosted: the operator can revoke it
  EXPECT_FALSE(mitigatedByProof(Json::array(), "rds_superuser"));
  // Granted to the role itself (or a role it belongs to): the operator can revoke it.
  EXPECT_FALSE(mitigatedByProof(Json::array({row("lo_creat(integer)", "mcp_reader")}), "rds"));
  // Owned by someone the operator controls.
  EXPECT_FALSE(mitigatedByProof(Json::array({row("lo_creat(integer)", "PUBLIC", false)}), "rds"));
  // Not a built-in, or not a function (an existing large object the role may update).
  EXPECT_FALSE(
      mitigatedByProof(Json::array({row("lo_creat(integer)", "PUBLIC", true, "public")}), "rds"));
  EXPECT_FALSE(mitigatedByProof(
      Json::array({row("large object 16401", "PUBLIC", true, "", "LARGE OBJECT")}), "rds"));
  // A function the proof does not always refuse.
  EXPECT_FALSE(mitigatedByProof(Json::array({row("lo_creat(integer)"), row("lower(text)")}),
                                "rds_superuser"));
}

}  // namespace
}  // namespace mcpdb::postgres

namespace mcpdb::postgres {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// How old a proof may get before a call uses it, has the next one made in the background, or
// refuses to run on it (then it waits for the new one): never older than the interval.
TEST(ProofAge, FreshThenRefreshedAheadThenNeverUsedPastTheInterval) {
  const seconds interval{300};
  EXPECT_EQ(judgeProofAge(seconds(0), interval, false), ProofAge::Fresh);
  EXPECT_EQ(judgeProofAge(seconds(225), interval, false), ProofAge::Fresh);
  EXPECT_EQ(judgeProofAge(milliseconds(225'001), interval, false), ProofAge::Refresh);
  EXPECT_EQ(judgeProofAge(seconds(300), interval, false), ProofAge::Refresh);
  EXPECT_EQ(judgeProofAge(milliseconds(300'001), interval, false), ProofAge::Expired);
  EXPECT_EQ(judgeProofAge(milliseconds(300'001), interval, true), ProofAge::Expired);
  EXPECT_EQ(judgeProofAge(seconds(601), interval, false), ProofAge::Expired);
  // A short interval: a proof of one second is never used past its second.
  EXPECT_EQ(judgeProofAge(milliseconds(700), seconds(1), false), ProofAge::Fresh);
  EXPECT_EQ(judgeProofAge(milliseconds(800), seconds(1), false), ProofAge::Refresh);
  EXPECT_EQ(judgeProofAge(milliseconds(1001), seconds(1), true), ProofAge::Expired);
}

TEST(ProofAge, ANewConnectionRefreshesAfterASecond) {
  const seconds interval{300};
  // A burst of new connections right after a proof costs no second proof.
  EXPECT_EQ(judgeProofAge(milliseconds(500), interval, true), ProofAge::Fresh);
  EXPECT_EQ(judgeProofAge(milliseconds(1001), interval, true), ProofAge::Refresh);
  EXPECT_EQ(judgeProofAge(milliseconds(1001), interval, false), ProofAge::Fresh);
}

}  // namespace
}  // namespace mcpdb::postgres
