// libpq loaded on first use, for the server binary only (see CMakeLists.txt).
//
// Debian's libpq5 brings Kerberos (GSSAPI), OpenLDAP with GnuTLS, Cyrus SASL and more: about half
// of the symbol relocations left at every start, and GnuTLS's constructor, though no connection is
// opened before the first tool call or the background self-check. Each libpq function the engine
// calls is here a forwarder that loads the library with dlopen on the first call. Test binaries,
// the loader and the benchmarks link libpq directly and do not use this file. A libpq function
// newly called by the engine needs its forwarder here: the server binary does not link otherwise.
//
// When libpq cannot be loaded, PQconnectStartParams and PQconninfoParse return nullptr (as libpq
// does when out of memory) and every other forwarder answers what libpq answers for a null handle
// (PQstatus: CONNECTION_BAD, PQresultStatus: PGRES_FATAL_ERROR, ...), so the engine's own error
// paths report it; tests/unit/postgres/lazy_pq_test.cpp compares these answers with libpq's.
//
// These definitions are not exported from the executable (no -rdynamic), so the loaded library
// binds its internal calls to itself, never to these forwarders.
#include <libpq-fe.h>

#include <cstdio>

#include "common/lazy_library.hpp"

#ifndef MCPDB_LAZY_PQ_SONAME
#define MCPDB_LAZY_PQ_SONAME "libpq.so.5"
#endif

namespace {

struct Libpq {
  static constexpr const char* kSoname = MCPDB_LAZY_PQ_SONAME;
  static constexpr const char* kPackage = "libpq5";
};
}  // namespace

// The real function `name`, resolved once; nullptr when libpq could not be loaded (then no handle
// can exist, and the forwarder answers as libpq does for a null one).
#define MCPDB_REAL(name) MCPDB_LAZY_REAL(Libpq, name)

extern "C" {

// ---- connections -------------------------------------------------------------------------------

PGconn* PQconnectStartParams(const char* const* keywords, const char* const* values,
                             int expand_dbname) {
  MCPDB_REAL(PQconnectStartParams);
  return real != nullptr ? real(keywords, values, expand_dbname) : nullptr;
}

PostgresPollingStatusType PQconnectPoll(PGconn* conn) {
  MCPDB_REAL(PQconnectPoll);
  return real != nullptr ? real(conn) : PGRES_POLLING_FAILED;
}

void PQfinish(PGconn* conn) {
  MCPDB_REAL(PQfinish);
  if (real != nullptr) real(conn);
}

ConnStatusType PQstatus(const PGconn* conn) {
  MCPDB_REAL(PQstatus);
  return real != nullptr ? real(conn) : CONNECTION_BAD;
}

PGTransactionStatusType PQtransactionStatus(const PGconn* conn) {
  MCPDB_REAL(PQtransactionStatus);
  return real != nullptr ? real(conn) : PQTRANS_UNKNOWN;
}

const char* PQparameterStatus(const PGconn* conn, const char* paramName) {
  MCPDB_REAL(PQparameterStatus);
  return real != nullptr ? real(conn, paramName) : nullptr;
}

char* PQerrorMessage(const PGconn* conn) {
  MCPDB_REAL(PQerrorMessage);
  static char kNoLibrary[] = "libpq could not be loaded\n";
  return real != nullptr ? real(conn) : kNoLibrary;
}

char* PQhost(const PGconn* conn) {
  MCPDB_REAL(PQhost);
  return real != nullptr ? real(conn) : nullptr;
}

char* PQport(const PGconn* conn) {
  MCPDB_REAL(PQport);
  return real != nullptr ? real(conn) : nullptr;
}

int PQsocket(const PGconn* conn) {
  MCPDB_REAL(PQsocket);
  return real != nullptr ? real(conn) : -1;
}

PQconninfoOption* PQconninfoParse(const char* conninfo, char** errmsg) {
  MCPDB_REAL(PQconninfoParse);
  if (real != nullptr) return real(conninfo, errmsg);
  if (errmsg != nullptr) *errmsg = nullptr;  // libpq's answer when out of memory
  return nullptr;
}

void PQconninfoFree(PQconninfoOption* connOptions) {
  MCPDB_REAL(PQconninfoFree);
  if (real != nullptr) real(connOptions);
}

void PQfreemem(void* ptr) {
  MCPDB_REAL(PQfreemem);
  if (real != nullptr) real(ptr);
}

// ---- cancellation ------------------------------------------------------------------------------

PQnoticeReceiver PQsetNoticeReceiver(PGconn* conn, PQnoticeReceiver proc, void* arg) {
  MCPDB_REAL(PQsetNoticeReceiver);
  return real != nullptr ? real(conn, proc, arg) : nullptr;
}

PGcancel* PQgetCancel(PGconn* conn) {
  MCPDB_REAL(PQgetCancel);
  return real != nullptr ? real(conn) : nullptr;
}

void PQfreeCancel(PGcancel* cancel) {
  MCPDB_REAL(PQfreeCancel);
  if (real != nullptr) real(cancel);
}

int PQcancel(PGcancel* cancel, char* errbuf, int errbufsize) {
  MCPDB_REAL(PQcancel);
  if (real != nullptr) return real(cancel, errbuf, errbufsize);
  if (errbuf != nullptr && errbufsize > 0) {
    std::snprintf(errbuf, static_cast<std::size_t>(errbufsize), "libpq could not be loaded");
  }
  return 0;
}

// ---- queries (asynchronous, pipeline and single-row modes) -------------------------------------

PGresult* PQexecParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                       const char* const* paramValues, const int* paramLengths,
                       const int* paramFormats, int resultFormat) {
  MCPDB_REAL(PQexecParams);
  return real != nullptr ? real(conn, command, nParams, paramTypes, paramValues, paramLengths,
                                paramFormats, resultFormat)
                         : nullptr;
}

int PQsendQueryParams(PGconn* conn, const char* command, int nParams, const Oid* paramTypes,
                      const char* const* paramValues, const int* paramLengths,
                      const int* paramFormats, int resultFormat) {
  MCPDB_REAL(PQsendQueryParams);
  return real != nullptr ? real(conn, command, nParams, paramTypes, paramValues, paramLengths,
                                paramFormats, resultFormat)
                         : 0;
}

int PQsendPrepare(PGconn* conn, const char* stmtName, const char* query, int nParams,
                  const Oid* paramTypes) {
  MCPDB_REAL(PQsendPrepare);
  return real != nullptr ? real(conn, stmtName, query, nParams, paramTypes) : 0;
}

int PQsendDescribePrepared(PGconn* conn, const char* stmt) {
  MCPDB_REAL(PQsendDescribePrepared);
  return real != nullptr ? real(conn, stmt) : 0;
}

int PQsendQueryPrepared(PGconn* conn, const char* stmtName, int nParams,
                        const char* const* paramValues, const int* paramLengths,
                        const int* paramFormats, int resultFormat) {
  MCPDB_REAL(PQsendQueryPrepared);
  return real != nullptr
             ? real(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat)
             : 0;
}

int PQsetSingleRowMode(PGconn* conn) {
  MCPDB_REAL(PQsetSingleRowMode);
  return real != nullptr ? real(conn) : 0;
}

int PQconsumeInput(PGconn* conn) {
  MCPDB_REAL(PQconsumeInput);
  return real != nullptr ? real(conn) : 0;
}

int PQisBusy(PGconn* conn) {
  MCPDB_REAL(PQisBusy);
  return real != nullptr ? real(conn) : 0;
}

PGresult* PQgetResult(PGconn* conn) {
  MCPDB_REAL(PQgetResult);
  return real != nullptr ? real(conn) : nullptr;
}

int PQenterPipelineMode(PGconn* conn) {
  MCPDB_REAL(PQenterPipelineMode);
  return real != nullptr ? real(conn) : 0;
}

int PQexitPipelineMode(PGconn* conn) {
  MCPDB_REAL(PQexitPipelineMode);
  return real != nullptr ? real(conn) : 0;
}

int PQpipelineSync(PGconn* conn) {
  MCPDB_REAL(PQpipelineSync);
  return real != nullptr ? real(conn) : 0;
}

// ---- results -----------------------------------------------------------------------------------

void PQclear(PGresult* res) {
  MCPDB_REAL(PQclear);
  if (real != nullptr) real(res);
}

ExecStatusType PQresultStatus(const PGresult* res) {
  MCPDB_REAL(PQresultStatus);
  return real != nullptr ? real(res) : PGRES_FATAL_ERROR;
}

char* PQresultErrorField(const PGresult* res, int fieldcode) {
  MCPDB_REAL(PQresultErrorField);
  return real != nullptr ? real(res, fieldcode) : nullptr;
}

int PQntuples(const PGresult* res) {
  MCPDB_REAL(PQntuples);
  return real != nullptr ? real(res) : 0;
}

int PQnfields(const PGresult* res) {
  MCPDB_REAL(PQnfields);
  return real != nullptr ? real(res) : 0;
}

char* PQfname(const PGresult* res, int field_num) {
  MCPDB_REAL(PQfname);
  return real != nullptr ? real(res, field_num) : nullptr;
}

Oid PQftype(const PGresult* res, int field_num) {
  MCPDB_REAL(PQftype);
  return real != nullptr ? real(res, field_num) : InvalidOid;
}

int PQfmod(const PGresult* res, int field_num) {
  MCPDB_REAL(PQfmod);
  return real != nullptr ? real(res, field_num) : -1;
}

int PQnparams(const PGresult* res) {
  MCPDB_REAL(PQnparams);
  return real != nullptr ? real(res) : 0;
}

Oid PQparamtype(const PGresult* res, int param_num) {
  MCPDB_REAL(PQparamtype);
  return real != nullptr ? real(res, param_num) : InvalidOid;
}

char* PQgetvalue(const PGresult* res, int tup_num, int field_num) {
  MCPDB_REAL(PQgetvalue);
  return real != nullptr ? real(res, tup_num, field_num) : nullptr;
}

int PQgetlength(const PGresult* res, int tup_num, int field_num) {
  MCPDB_REAL(PQgetlength);
  return real != nullptr ? real(res, tup_num, field_num) : 0;
}

int PQgetisnull(const PGresult* res, int tup_num, int field_num) {
  MCPDB_REAL(PQgetisnull);
  return real != nullptr ? real(res, tup_num, field_num) : 1;
}

}  // extern "C"
