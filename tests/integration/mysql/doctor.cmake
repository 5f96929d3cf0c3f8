# doctor on the live MariaDB: the grants of the doctor's test accounts (one write path each,
# provisioned by scripts/lib/mariadb.sh) and the stored-function / view check.
# Needs MYSQL_DOCTOR_DSN_* and MYSQL_ADMIN_DSN from `scripts/servers.sh env`; without them every
# test fails and says so.
mcpdb_test(mysql_doctor_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fixture.cpp ${CMAKE_CURRENT_LIST_DIR}/doctor_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/routines_test.cpp
  DEPS mcpdb_mysql_doctor
  LABELS integration)
