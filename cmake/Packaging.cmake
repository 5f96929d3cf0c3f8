# Install rules beyond the binary and the model (src/CMakeLists.txt), and the Debian package.
#
# `cmake --install BUILD --prefix PREFIX` adds the man page and, under
# PREFIX/share/doc/mcp-dbserver/examples, the example config, environment file, systemd unit and
# memory drop-in. With -DMCPDB_PACKAGE=ON (scripts/package.sh, prefix /usr) the system files go
# where Debian keeps them: /etc/mcp-dbserver/config.yaml (a conffile) and
# /lib/systemd/system/mcp-dbserver.service; `cpack -G DEB` then builds
# mcp-dbserver_<version>_amd64.deb (packaging/debian/ holds its maintainer scripts).
option(MCPDB_PACKAGE "Install the system files (/etc, the systemd unit) for the Debian package" OFF)
include(GNUInstallDirs)

set(MCPDB_PKG_DIR ${PROJECT_SOURCE_DIR}/packaging)
set(MCPDB_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/mcp-dbserver)

# The man page, with the version filled in and compressed as Debian ships man pages.
configure_file(${MCPDB_PKG_DIR}/mcp-dbserver.1 ${CMAKE_BINARY_DIR}/packaging/mcp-dbserver.1 @ONLY)
execute_process(COMMAND gzip -9n -c ${CMAKE_BINARY_DIR}/packaging/mcp-dbserver.1
                OUTPUT_FILE ${CMAKE_BINARY_DIR}/packaging/mcp-dbserver.1.gz COMMAND_ERROR_IS_FATAL ANY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/mcp-dbserver.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES ${MCPDB_PKG_DIR}/env DESTINATION ${CMAKE_INSTALL_DATADIR}/mcp-dbserver RENAME env.template)
install(FILES ${MCPDB_PKG_DIR}/mcp-dbserver.service ${MCPDB_PKG_DIR}/memory.conf
        DESTINATION ${MCPDB_DOC_DIR}/examples)
install(FILES ${PROJECT_SOURCE_DIR}/.env.example DESTINATION ${MCPDB_DOC_DIR}/examples RENAME env.example)
# Who holds the rights to what the package ships, the embedding model's Apache-2.0 terms included
# (Debian's machine-readable copyright format, where Debian looks for it).
install(FILES ${MCPDB_PKG_DIR}/copyright DESTINATION ${MCPDB_DOC_DIR})

# The example config is the built-in allowlist, printed by the binary being installed, so it
# cannot drift from what `serve` runs without a file.
set(MCPDB_EXAMPLE_CONFIGS "\${MCPDB_DEST}/${MCPDB_DOC_DIR}/examples/config.yaml")
if(MCPDB_PACKAGE)
  list(APPEND MCPDB_EXAMPLE_CONFIGS "\$ENV{DESTDIR}/etc/mcp-dbserver/config.yaml")
  install(FILES ${MCPDB_PKG_DIR}/mcp-dbserver.service DESTINATION /lib/systemd/system)
endif()
install(CODE "
  set(MCPDB_DEST \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
  foreach(out ${MCPDB_EXAMPLE_CONFIGS})
    get_filename_component(dir \"\${out}\" DIRECTORY)
    file(MAKE_DIRECTORY \"\${dir}\")
    message(STATUS \"Installing: \${out}\")
    execute_process(COMMAND \"$<TARGET_FILE:mcp-dbserver>\" check-config --print-default
                    OUTPUT_FILE \"\${out}\" COMMAND_ERROR_IS_FATAL ANY)
  endforeach()")

if(NOT MCPDB_PACKAGE)
  return()
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME mcp-dbserver)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "mcp-dbserver maintainers <mcp-dbserver@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "read-only, allowlisted MCP server for databases")
# The extended description (the summary above is its first line); CPack indents each line.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Gives AI agents (any Model Context Protocol client) read-only access to PostgreSQL,
MySQL/MariaDB, DynamoDB and MongoDB through named, typed tools from an allowlist, over stdio or
HTTP. Includes a hardened systemd unit (installed disabled) and the embedding model of its
semantic search tools.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # mcp-dbserver_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_STRIP_FILES ON)
# Libraries the binary links are found by dpkg-shlibdeps; those it opens with dlopen on first use
# (lazy_pq, lazy_mariadb, lazy_mongoc, lazy_curl, embed/blas) are named here, since no tool can
# see them. adduser makes the service user in postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "adduser, libpq5, libmariadb3, libmongoc-1.0-0, libcurl4, libopenblas0 | libopenblas0-pthread")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${MCPDB_PKG_DIR}/debian/postinst ${MCPDB_PKG_DIR}/debian/prerm ${MCPDB_PKG_DIR}/debian/postrm
    ${MCPDB_PKG_DIR}/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Only the server: the demo loader (write code) and its libraries are never packaged.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};ALL;/")
include(CPack)
