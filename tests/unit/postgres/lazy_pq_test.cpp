// The server binary's libpq forwarders (src/engines/postgres/lazy_pq.cpp) when libpq cannot be
// loaded: this binary compiles them against a library name that does not exist. Every forwarder
// must then answer what libpq itself answers for a null handle (compared with the real libpq,
// opened here with dlopen), and the engine's connection paths must fail with an error, not crash.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <cstring>
#include <stop_token>

#include "engines/postgres/conninfo.hpp"
#include "engines/postgres/pool.hpp"

namespace mcpdb::postgres {
namespace {

// The real libpq, loaded beside the forwarders (RTLD_LOCAL: it does not replace them).
class RealLibpq {
 public:
  RealLibpq() : lib_(dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL)) {}
  ~RealLibpq() {
    if (lib_ != nullptr) dlclose(lib_);
  }
  RealLibpq(const RealLibpq&) = delete;
  RealLibpq& operator=(const RealLibpq&) = delete;
  bool loaded() const { return lib_ != nullptr; }
  template <typename F>
  F get(const char* name) const {
    return reinterpret_cast<F>(dlsym(lib_, name));
  }

 private:
  void* lib_;
};

#define REAL(name) real.get<decltype(&(name))>(#name)

TEST(PostgresLazyLibpq, NullHandleAnswersMatchLibpq) {
  RealLibpq real;
  ASSERT_TRUE(real.loaded()) << dlerror();

  EXPECT_EQ(PQconnectPoll(nullptr), REAL(PQconnectPoll)(nullptr));
  EXPECT_EQ(PQstatus(nullptr), REAL(PQstatus)(nullptr));
  EXPECT_EQ(PQtransactionStatus(nullptr), REAL(PQtransactionStatus)(nullptr));
  EXPECT_EQ(PQparameterStatus(nullptr, "client_encoding"),
            REAL(PQparameterStatus)(nullptr, "client_encoding"));
  EXPECT_EQ(PQsocket(nullptr), REAL(PQsocket)(nullptr));
  EXPECT_EQ(PQhost(nullptr), REAL(PQhost)(nullptr));
  EXPECT_EQ(PQport(nullptr), REAL(PQport)(nullptr));
  EXPECT_EQ(PQgetCancel(nullptr), REAL(PQgetCancel)(nullptr));
  char ours[256] = "";
  char theirs[256] = "";
  EXPECT_EQ(PQcancel(nullptr, ours, sizeof ours), REAL(PQcancel)(nullptr, theirs, sizeof theirs));
  EXPECT_NE(ours[0], '\0');
  ASSERT_NE(PQerrorMessage(nullptr), nullptr);
  EXPECT_NE(REAL(PQerrorMessage)(nullptr), nullptr);

  const char* sql = "SELECT 1";
  EXPECT_EQ(PQexecParams(nullptr, sql, 0, nullptr, nullptr, nullptr, nullptr, 0),
            REAL(PQexecParams)(nullptr, sql, 0, nullptr, nullptr, nullptr, nullptr, 0));
  EXPECT_EQ(PQsendQueryParams(nullptr, sql, 0, nullptr, nullptr, nullptr, nullptr, 0),
            REAL(PQsendQueryParams)(nullptr, sql, 0, nullptr, nullptr, nullptr, nullptr, 0));
  EXPECT_EQ(PQsendPrepare(nullptr, "s", sql, 0, nullptr),
            REAL(PQsendPrepare)(nullptr, "s", sql, 0, nullptr));
  EXPECT_EQ(PQsendQueryPrepared(nullptr, "s", 0, nullptr, nullptr, nullptr, 0),
            REAL(PQsendQueryPrepared)(nullptr, "s", 0, nullptr, nullptr, nullptr, 0));
  EXPECT_EQ(PQsendDescribePrepared(nullptr, ""), REAL(PQsendDescribePrepared)(nullptr, ""));
  EXPECT_EQ(PQsetSingleRowMode(nullptr), REAL(PQsetSingleRowMode)(nullptr));
  EXPECT_EQ(PQconsumeInput(nullptr), REAL(PQconsumeInput)(nullptr));
  EXPECT_EQ(PQisBusy(nullptr), REAL(PQisBusy)(nullptr));
  EXPECT_EQ(PQgetResult(nullptr), REAL(PQgetResult)(nullptr));
  EXPECT_EQ(PQenterPipelineMode(nullptr), REAL(PQenterPipelineMode)(nullptr));
  EXPECT_EQ(PQexitPipelineMode(nullptr), REAL(PQexitPipelineMode)(nullptr));
  EXPECT_EQ(PQpipelineSync(nullptr), REAL(PQpipelineSync)(nullptr));

  EXPECT_EQ(PQresultStatus(nullptr), REAL(PQresultStatus)(nullptr));
  EXPECT_EQ(PQresultErrorField(nullptr, PG_DIAG_SQLSTATE),
            REAL(PQresultErrorField)(nullptr, PG_DIAG_SQLSTATE));
  EXPECT_EQ(PQntuples(nullptr), REAL(PQntuples)(nullptr));
  EXPECT_EQ(PQnfields(nullptr), REAL(PQnfields)(nullptr));
  EXPECT_EQ(PQfname(nullptr, 0), REAL(PQfname)(nullptr, 0));
  EXPECT_EQ(PQftype(nullptr, 0), REAL(PQftype)(nullptr, 0));
  EXPECT_EQ(PQnparams(nullptr), REAL(PQnparams)(nullptr));
  EXPECT_EQ(PQparamtype(nullptr, 0), REAL(PQparamtype)(nullptr, 0));
  EXPECT_EQ(PQgetvalue(nullptr, 0, 0), REAL(PQgetvalue)(nullptr, 0, 0));
  EXPECT_EQ(PQgetlength(nullptr, 0, 0), REAL(PQgetlength)(nullptr, 0, 0));
  EXPECT_EQ(PQgetisnull(nullptr, 0, 0), REAL(PQgetisnull)(nullptr, 0, 0));

  // The release functions accept null like libpq's.
  PQfinish(nullptr);
  PQfreeCancel(nullptr);
  PQclear(nullptr);
  PQconninfoFree(nullptr);
  PQfreemem(nullptr);
}

TEST(PostgresLazyLibpq, ConstructorsReturnNull) {
  const char* keys[] = {"host", nullptr};
  const char* values[] = {"127.0.0.1", nullptr};
  EXPECT_EQ(PQconnectStartParams(keys, values, 0), nullptr);
  char* err = reinterpret_cast<char*>(&err);  // not null, so the forwarder must clear it
  EXPECT_EQ(PQconninfoParse("host=127.0.0.1", &err), nullptr);
  EXPECT_EQ(err, nullptr);
}

TEST(PostgresLazyLibpq, EngineReportsErrorsWithoutLibpq) {
  const Env env = Env::fromMap({{"POSTGRES_DSN", "postgresql://u@127.0.0.1:1/db"}});
  auto params = buildConnParams(PoolSettings{}, env, {});
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(params.error().code, Code::FailedPrecondition);

  ConnParams p;
  p.set("host", "127.0.0.1");
  const std::stop_source stop;
  auto c = openConnection(p, Clock::now() + std::chrono::seconds(1), stop.get_token());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::Unavailable);
  EXPECT_NE(c.error().message.find("libpq could not be loaded"), std::string::npos)
      << c.error().message;
}

}  // namespace
}  // namespace mcpdb::postgres
