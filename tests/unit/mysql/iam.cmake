# RDS IAM authentication for MySQL sources, without AWS: the token (fixed credentials, region and
# clock) against the published vector and the PostgreSQL path, the connect plan it yields, and the
# refusals; the pool's use of a source's iam_auth.
mcpdb_test(mysql_iam_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/iam_test.cpp
  DEPS mcpdb_mysql_iam mcpdb_engine_mysql mcpdb_aws LABELS unit)
# The same against the local MariaDB (which has no IAM): the fake token is refused as a wrong
# password over verified TLS, and appears in no message. Needs `scripts/servers.sh env`; without
# MYSQL_DSN and MCPDB_MARIADB_CA the test fails and says so.
mcpdb_test(mysql_iam_integration_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/iam_live_test.cpp
  DEPS mcpdb_mysql_client LABELS integration)
