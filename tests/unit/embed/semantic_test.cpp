// Sanity of meaning: a related sentence is closer to the anchor than an unrelated one.
#include <gtest/gtest.h>

#include "test_model.hpp"

namespace mcpdb::embed {
namespace {

using testing::cosine;
using testing::embedder;
using testing::loadError;

struct Triplet {
  const char* anchor;
  const char* related;
  const char* unrelated;
};

const Triplet kTriplets[] = {
    {"How do I create an index in PostgreSQL?", "B-tree indexes speed up lookups on a table column",
     "The chef seasoned the soup with fresh basil"},
    {"The database connection timed out",
     "Could not connect to the Postgres server: timeout expired",
     "My cat likes to sleep in the sun"},
    {"How can I list all tables in the schema?",
     "Query information_schema.tables to see every table", "The football match ended in a draw"},
    {"Kubernetes pod keeps restarting", "The container is in CrashLoopBackOff after each deploy",
     "She painted a landscape of the mountains"},
    {"DynamoDB read capacity exceeded",
     "ProvisionedThroughputExceededException on the orders table",
     "Bake the bread for forty minutes"},
    {"Find documents in a MongoDB collection",
     "Use db.collection.find() with a filter to query MongoDB",
     "The orchestra played a symphony by Mahler"},
    {"Disk is almost full on the server", "Free up storage space: the volume is at 95% usage",
     "Birds migrate south in the winter"},
    {"How do I roll back a failed deployment?", "Revert the release to the previous version",
     "The novel is set in nineteenth-century Paris"},
    {"Nearest neighbour search over vectors",
     "pgvector finds the most similar embeddings by cosine distance",
     "He went fishing on the lake at dawn"},
    {"Slow query on the users table", "The SELECT takes ten seconds because of a sequential scan",
     "The children built a sandcastle at the beach"},
    {"Back up the database every night", "Schedule a nightly pg_dump of the production data",
     "The tennis player won the championship"},
};

TEST(EmbedSemantic, RelatedBeatsUnrelated) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  for (const auto& t : kTriplets) {
    std::vector<std::string> texts{t.anchor, t.related, t.unrelated};
    auto v = embedder()->embed(texts);
    ASSERT_TRUE(v.ok()) << v.error().message;
    const double related = cosine((*v)[0], (*v)[1]);
    const double unrelated = cosine((*v)[0], (*v)[2]);
    EXPECT_GT(related, unrelated + 0.1) << t.anchor;
  }
}

}  // namespace
}  // namespace mcpdb::embed
