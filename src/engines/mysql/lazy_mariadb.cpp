// libmariadb loaded on first use, for the server binary only (see client.cmake).
//
// Most deployments serve no MySQL target; they should not load libmariadb and its TLS stack at
// start. Each libmariadb function the client layer calls is here a forwarder that loads the library
// with dlopen on the first call (src/common/lazy_library.hpp). Tests and the loader link
// libmariadb directly and do not use this file. A function newly called by the client layer needs
// its forwarder here: the server binary does not link otherwise.
//
// When libmariadb cannot be loaded, mysql_init returns nullptr (libmariadb's own answer when out
// of memory), so no handle ever exists and the client layer reports "libmariadb could not be
// loaded" (raw_client.cpp). The other forwarders answer the way an empty handle would (errors,
// zero counts, null pointers) rather than crash; libmariadb itself would dereference a null
// handle, so these answers are ours (tests/unit/mysql/lazy_mariadb_test.cpp).
//
// These definitions are not exported from the executable (no -rdynamic), so the loaded library
// binds its internal calls to itself, never to these forwarders.
#include <mysql.h>

#include "common/lazy_library.hpp"

#ifndef MCPDB_LAZY_MARIADB_SONAME
#define MCPDB_LAZY_MARIADB_SONAME "libmariadb.so.3"
#endif

namespace {

struct Libmariadb {
  static constexpr const char* kSoname = MCPDB_LAZY_MARIADB_SONAME;
  static constexpr const char* kPackage = "libmariadb3";
};

constexpr unsigned kClientError = 2000;  // CR_UNKNOWN_ERROR
char kNoLibrary[] = "libmariadb could not be loaded";
char kGeneralState[] = "HY000";

}  // namespace

#define MCPDB_REAL(name) MCPDB_LAZY_REAL(Libmariadb, name)

extern "C" {

// ---- connections -------------------------------------------------------------------------------

MYSQL* STDCALL mysql_init(MYSQL* mysql) {
  MCPDB_REAL(mysql_init);
  return real != nullptr ? real(mysql) : nullptr;
}

void STDCALL mysql_close(MYSQL* sock) {
  MCPDB_REAL(mysql_close);
  if (real != nullptr) real(sock);
}

int STDCALL mysql_options(MYSQL* mysql, enum mysql_option option, const void* arg) {
  MCPDB_REAL(mysql_options);
  return real != nullptr ? real(mysql, option, arg) : 1;
}

MYSQL* STDCALL mysql_real_connect(MYSQL* mysql, const char* host, const char* user,
                                  const char* passwd, const char* db, unsigned int port,
                                  const char* unix_socket, unsigned long clientflag) {
  MCPDB_REAL(mysql_real_connect);
  return real != nullptr ? real(mysql, host, user, passwd, db, port, unix_socket, clientflag)
                         : nullptr;
}

unsigned int STDCALL mysql_errno(MYSQL* mysql) {
  MCPDB_REAL(mysql_errno);
  return real != nullptr ? real(mysql) : kClientError;
}

const char* STDCALL mysql_error(MYSQL* mysql) {
  MCPDB_REAL(mysql_error);
  return real != nullptr ? real(mysql) : kNoLibrary;
}

const char* STDCALL mysql_sqlstate(MYSQL* mysql) {
  MCPDB_REAL(mysql_sqlstate);
  return real != nullptr ? real(mysql) : kGeneralState;
}

const char* STDCALL mysql_get_ssl_cipher(MYSQL* mysql) {
  MCPDB_REAL(mysql_get_ssl_cipher);
  return real != nullptr ? real(mysql) : nullptr;
}

unsigned long STDCALL mysql_get_server_version(MYSQL* mysql) {
  MCPDB_REAL(mysql_get_server_version);
  return real != nullptr ? real(mysql) : 0;
}

unsigned long STDCALL mysql_thread_id(MYSQL* mysql) {
  MCPDB_REAL(mysql_thread_id);
  return real != nullptr ? real(mysql) : 0;
}

int STDCALL mysql_reset_connection(MYSQL* mysql) {
  MCPDB_REAL(mysql_reset_connection);
  return real != nullptr ? real(mysql) : 1;
}

// ---- text queries ------------------------------------------------------------------------------

int STDCALL mysql_real_query(MYSQL* mysql, const char* q, unsigned long length) {
  MCPDB_REAL(mysql_real_query);
  return real != nullptr ? real(mysql, q, length) : 1;
}

MYSQL_RES* STDCALL mysql_store_result(MYSQL* mysql) {
  MCPDB_REAL(mysql_store_result);
  return real != nullptr ? real(mysql) : nullptr;
}

unsigned int STDCALL mysql_field_count(MYSQL* mysql) {
  MCPDB_REAL(mysql_field_count);
  return real != nullptr ? real(mysql) : 0;
}

MYSQL_ROW STDCALL mysql_fetch_row(MYSQL_RES* result) {
  MCPDB_REAL(mysql_fetch_row);
  return real != nullptr ? real(result) : nullptr;
}

unsigned int STDCALL mysql_num_fields(MYSQL_RES* res) {
  MCPDB_REAL(mysql_num_fields);
  return real != nullptr ? real(res) : 0;
}

unsigned long* STDCALL mysql_fetch_lengths(MYSQL_RES* result) {
  MCPDB_REAL(mysql_fetch_lengths);
  return real != nullptr ? real(result) : nullptr;
}

MYSQL_FIELD* STDCALL mysql_fetch_fields(MYSQL_RES* res) {
  MCPDB_REAL(mysql_fetch_fields);
  return real != nullptr ? real(res) : nullptr;
}

void STDCALL mysql_free_result(MYSQL_RES* result) {
  MCPDB_REAL(mysql_free_result);
  if (real != nullptr) real(result);
}

// ---- prepared statements -----------------------------------------------------------------------

MYSQL_STMT* STDCALL mysql_stmt_init(MYSQL* mysql) {
  MCPDB_REAL(mysql_stmt_init);
  return real != nullptr ? real(mysql) : nullptr;
}

my_bool STDCALL mysql_stmt_close(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_close);
  return real != nullptr ? real(stmt) : my_bool{0};
}

int STDCALL mysql_stmt_prepare(MYSQL_STMT* stmt, const char* query, unsigned long length) {
  MCPDB_REAL(mysql_stmt_prepare);
  return real != nullptr ? real(stmt, query, length) : 1;
}

unsigned long STDCALL mysql_stmt_param_count(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_param_count);
  return real != nullptr ? real(stmt) : 0;
}

my_bool STDCALL mysql_stmt_bind_param(MYSQL_STMT* stmt, MYSQL_BIND* bnd) {
  MCPDB_REAL(mysql_stmt_bind_param);
  return real != nullptr ? real(stmt, bnd) : my_bool{1};
}

my_bool STDCALL mysql_stmt_attr_set(MYSQL_STMT* stmt, enum enum_stmt_attr_type attr_type,
                                    const void* attr) {
  MCPDB_REAL(mysql_stmt_attr_set);
  return real != nullptr ? real(stmt, attr_type, attr) : my_bool{1};
}

int STDCALL mysql_stmt_execute(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_execute);
  return real != nullptr ? real(stmt) : 1;
}

unsigned int STDCALL mysql_stmt_field_count(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_field_count);
  return real != nullptr ? real(stmt) : 0;
}

MYSQL_RES* STDCALL mysql_stmt_result_metadata(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_result_metadata);
  return real != nullptr ? real(stmt) : nullptr;
}

my_bool STDCALL mysql_stmt_bind_result(MYSQL_STMT* stmt, MYSQL_BIND* bnd) {
  MCPDB_REAL(mysql_stmt_bind_result);
  return real != nullptr ? real(stmt, bnd) : my_bool{1};
}

int STDCALL mysql_stmt_fetch(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_fetch);
  return real != nullptr ? real(stmt) : 1;
}

int STDCALL mysql_stmt_fetch_column(MYSQL_STMT* stmt, MYSQL_BIND* bind_arg, unsigned int column,
                                    unsigned long offset) {
  MCPDB_REAL(mysql_stmt_fetch_column);
  return real != nullptr ? real(stmt, bind_arg, column, offset) : 1;
}

unsigned int STDCALL mysql_stmt_errno(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_errno);
  return real != nullptr ? real(stmt) : kClientError;
}

const char* STDCALL mysql_stmt_error(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_error);
  return real != nullptr ? real(stmt) : kNoLibrary;
}

const char* STDCALL mysql_stmt_sqlstate(MYSQL_STMT* stmt) {
  MCPDB_REAL(mysql_stmt_sqlstate);
  return real != nullptr ? real(stmt) : kGeneralState;
}

}  // extern "C"
