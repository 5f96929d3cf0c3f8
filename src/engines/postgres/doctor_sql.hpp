#pragma once
// The catalog queries of the privilege self-check (doctor.cpp). Fixed text, one plain SELECT
// each, run through the same guarded, read-only path as tools: privilege and statement keywords
// appear only inside string literals, and every function they call is STABLE or IMMUTABLE.
//
// Every write-path query starts with kHolders, so that a privilege is found wherever the role
// gets it: granted to PUBLIC, to the role itself, or to any role it is a member of (directly or
// through other roles, with or without INHERIT: a member can SET ROLE). Each row names the
// holder (`holder_sql`: PUBLIC or a quoted role name) and, when the holder is another role, the
// role's own direct memberships that lead to it (`via_sql`), which is what the fix revokes.

namespace mcpdb::postgres::self_check_sql {

// me: the current role. chain: every role it is a member of, itself included, each with the
// role's own direct membership it is reached through (`hop`; 0 for itself and for the implicit
// pg_database_owner of a database owner), followed in pg_auth_members rather than with
// pg_has_role, which answers true for everything when the role is a superuser.
// m: those roles with their attributes and `via_sql`, the direct memberships to revoke.
// h: the possible holders of a privilege: PUBLIC (grantee 0) and m.
inline constexpr const char* kHolders =
    "WITH RECURSIVE me AS (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = "
    "current_user), "
    "chain(oid, hop) AS (SELECT me.oid, 0::oid FROM me "
    "UNION ALL SELECT o.oid, 0::oid FROM pg_catalog.pg_roles o, pg_catalog.pg_database d, me "
    "WHERE o.rolname = 'pg_database_owner' AND d.datname = current_database() "
    "AND d.datdba = me.oid "
    "UNION SELECT a.roleid, CASE WHEN c.hop = 0 AND c.oid = (SELECT me.oid FROM me) "
    "THEN a.roleid ELSE c.hop END FROM pg_catalog.pg_auth_members a JOIN chain c "
    "ON a.member = c.oid), "
    "m AS (SELECT r.oid, r.rolname, r.oid = (SELECT me.oid FROM me) AS self, r.rolsuper, "
    "r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls, "
    "(SELECT string_agg(DISTINCT quote_ident(f.rolname), ', ') FROM chain c2 "
    "JOIN pg_catalog.pg_roles f ON f.oid = c2.hop WHERE c2.oid = r.oid) AS via_sql "
    "FROM pg_catalog.pg_roles r WHERE r.oid IN (SELECT chain.oid FROM chain)), "
    "h AS (SELECT 0::oid AS oid, 'PUBLIC' AS holder_sql, NULL::text AS via_sql, false AS self "
    "UNION ALL SELECT m.oid, quote_ident(m.rolname), CASE WHEN m.self THEN NULL ELSE m.via_sql "
    "END, m.self FROM m) ";

// The role's memberships (itself first) with their attributes.
inline constexpr const char* kMembers =
    "SELECT m.rolname::text AS name, quote_ident(m.rolname) AS name_sql, m.self, m.via_sql, "
    "m.rolsuper, m.rolcreaterole, m.rolcreatedb, m.rolreplication, m.rolbypassrls "
    "FROM m ORDER BY m.self DESC, m.rolname";

// Write privileges on tables, views and foreign tables: table-level and column-level grants,
// and pg_write_all_data (INSERT, UPDATE, DELETE on every table). TRIGGER is a write too: a
// trigger runs code whenever anyone else writes the table.
inline constexpr const char* kTables =
    ", rel AS (SELECT c.oid, c.relacl, c.relowner, n.nspname, c.relname "
    "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind IN ('r', 'p', 'v', 'f') AND n.nspname NOT IN ('pg_catalog', "
    "'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'), "
    "g AS (SELECT rel.oid, e.privilege_type AS priv, h.holder_sql, h.via_sql, h.self "
    "FROM rel CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(rel.relacl, "
    "pg_catalog.acldefault('r', rel.relowner))) e JOIN h ON h.oid = e.grantee "
    "WHERE e.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER') "
    "UNION ALL SELECT a.attrelid, 'column ' || e.privilege_type, h.holder_sql, h.via_sql, h.self "
    "FROM pg_catalog.pg_attribute a JOIN rel ON rel.oid = a.attrelid "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(a.attacl) e JOIN h ON h.oid = e.grantee "
    "WHERE a.attacl IS NOT NULL AND NOT a.attisdropped AND e.privilege_type IN ('INSERT', "
    "'UPDATE') "
    "UNION ALL SELECT rel.oid, p.priv, quote_ident(m.rolname), m.via_sql, false "
    "FROM rel, m, unnest(ARRAY['INSERT', 'UPDATE', 'DELETE']) AS p(priv) "
    "WHERE m.rolname = 'pg_write_all_data') "
    "SELECT rel.nspname::text AS schema, rel.relname::text AS name, "
    "quote_ident(rel.nspname) || '.' || quote_ident(rel.relname) AS name_sql, 'TABLE' AS kind, "
    "quote_ident(rel.nspname) AS schema_sql, "
    "'INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER' AS fix_privs, "
    "string_agg(DISTINCT g.priv, ',') AS privs, g.holder_sql, g.via_sql, g.self, false AS "
    "owner_super "
    "FROM g JOIN rel ON rel.oid = g.oid GROUP BY rel.nspname, rel.relname, g.holder_sql, "
    "g.via_sql, g.self ORDER BY 1, 2, 8";

// USAGE (nextval) or UPDATE (setval, nextval) on sequences, pg_write_all_data included.
inline constexpr const char* kSequences =
    ", rel AS (SELECT c.oid, c.relacl, c.relowner, n.nspname, c.relname "
    "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relkind = 'S' AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND n.nspname NOT LIKE 'pg_temp%'), "
    "g AS (SELECT rel.oid, e.privilege_type AS priv, h.holder_sql, h.via_sql, h.self "
    "FROM rel CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(rel.relacl, "
    "pg_catalog.acldefault('s', rel.relowner))) e JOIN h ON h.oid = e.grantee "
    "WHERE e.privilege_type IN ('USAGE', 'UPDATE') "
    "UNION ALL SELECT rel.oid, 'UPDATE', quote_ident(m.rolname), m.via_sql, false FROM rel, m "
    "WHERE m.rolname = 'pg_write_all_data') "
    "SELECT rel.nspname::text AS schema, rel.relname::text AS name, "
    "quote_ident(rel.nspname) || '.' || quote_ident(rel.relname) AS name_sql, 'SEQUENCE' AS kind, "
    "quote_ident(rel.nspname) AS schema_sql, "
    "'USAGE, UPDATE' AS fix_privs, string_agg(DISTINCT g.priv, ',') AS privs, g.holder_sql, "
    "g.via_sql, g.self, false AS owner_super "
    "FROM g JOIN rel ON rel.oid = g.oid GROUP BY rel.nspname, rel.relname, g.holder_sql, "
    "g.via_sql, g.self ORDER BY 1, 2, 8";

// CREATE on any schema (system schemas included: nobody but a superuser should hold it there).
inline constexpr const char* kSchemas =
    "SELECT n.nspname::text AS schema, quote_ident(n.nspname) AS name_sql, 'SCHEMA' AS kind, "
    "'CREATE' AS fix_privs, 'CREATE' AS privs, h.holder_sql, h.via_sql, h.self, "
    "o.rolsuper AS owner_super "
    "FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles o ON o.oid = n.nspowner "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(n.nspacl, pg_catalog.acldefault('n', "
    "n.nspowner))) e JOIN h ON h.oid = e.grantee "
    "WHERE e.privilege_type = 'CREATE' AND n.nspname NOT LIKE 'pg_toast%' "
    "AND n.nspname NOT LIKE 'pg_temp%' ORDER BY 1, 6";

// CREATE and TEMPORARY on this database; CONNECT on the others (where nothing is inspected).
inline constexpr const char* kDatabases =
    "SELECT d.datname::text AS schema, quote_ident(d.datname) AS name_sql, 'DATABASE' AS kind, "
    "e.privilege_type AS fix_privs, e.privilege_type AS privs, h.holder_sql, h.via_sql, h.self, "
    "o.rolsuper AS owner_super, d.datname = current_database() AS is_current "
    "FROM pg_catalog.pg_database d JOIN pg_catalog.pg_roles o ON o.oid = d.datdba "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(d.datacl, pg_catalog.acldefault('d', "
    "d.datdba))) e JOIN h ON h.oid = e.grantee "
    "WHERE (d.datname = current_database() AND e.privilege_type IN ('CREATE', 'TEMPORARY')) "
    "OR (d.datname <> current_database() AND d.datallowconn AND e.privilege_type = 'CONNECT') "
    "ORDER BY 10 DESC, 1, 6";

// EXECUTE on the large-object functions that create, change, delete, import or export one
// (a READ ONLY transaction does not stop lo_creat or lo_from_bytea), and UPDATE on existing
// large objects.
inline constexpr const char* kLargeObjects =
    "SELECT n.nspname::text AS schema, p.proname || '(' || "
    "pg_catalog.pg_get_function_identity_arguments(p.oid) || ')' AS name, "
    "quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '(' || "
    "pg_catalog.pg_get_function_identity_arguments(p.oid) || ')' AS name_sql, "
    "'FUNCTION' AS kind, 'EXECUTE' AS fix_privs, 'EXECUTE' AS privs, h.holder_sql, h.via_sql, "
    "h.self, o.rolsuper AS owner_super "
    "FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
    "JOIN pg_catalog.pg_roles o ON o.oid = p.proowner "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', "
    "p.proowner))) e JOIN h ON h.oid = e.grantee "
    "WHERE n.nspname = 'pg_catalog' AND p.proname IN ('lo_creat', 'lo_create', 'lo_from_bytea', "
    "'lo_import', 'lo_export', 'lo_open', 'lowrite', 'lo_put', 'lo_truncate', 'lo_truncate64', "
    "'lo_unlink') AND e.privilege_type = 'EXECUTE' "
    "UNION ALL SELECT '', 'large object ' || l.oid::text, l.oid::text, 'LARGE OBJECT', 'UPDATE', "
    "'UPDATE', h.holder_sql, h.via_sql, h.self, o.rolsuper "
    "FROM pg_catalog.pg_largeobject_metadata l JOIN pg_catalog.pg_roles o ON o.oid = l.lomowner "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(l.lomacl, pg_catalog.acldefault('L', "
    "l.lomowner))) e JOIN h ON h.oid = e.grantee WHERE e.privilege_type = 'UPDATE' "
    "ORDER BY 4, 2, 7";

// Outbound connections: EXECUTE on dblink* functions and on the functions of the extensions
// that reach other servers (dblink, postgres_fdw; RDS's aws_s3 and aws_lambda; http, pg_net), in
// any schema, and USAGE on foreign servers and foreign-data wrappers.
inline constexpr const char* kRemote =
    "SELECT n.nspname::text AS schema, p.proname || '(' || "
    "pg_catalog.pg_get_function_identity_arguments(p.oid) || ')' AS name, "
    "quote_ident(n.nspname) || '.' || quote_ident(p.proname) || '(' || "
    "pg_catalog.pg_get_function_identity_arguments(p.oid) || ')' AS name_sql, "
    "CASE WHEN p.prokind = 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END AS kind, "
    "'EXECUTE' AS fix_privs, 'EXECUTE' AS privs, h.holder_sql, h.via_sql, h.self, "
    "o.rolsuper AS owner_super "
    "FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
    "JOIN pg_catalog.pg_roles o ON o.oid = p.proowner "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', "
    "p.proowner))) e JOIN h ON h.oid = e.grantee "
    "WHERE e.privilege_type = 'EXECUTE' AND (p.proname LIKE 'dblink%' OR EXISTS (SELECT 1 "
    "FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension x ON x.oid = d.refobjid "
    "WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid "
    "AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e' "
    "AND x.extname IN ('dblink', 'postgres_fdw', 'aws_s3', 'aws_lambda', 'http', 'pg_net'))) "
    "UNION ALL SELECT '', 'foreign server ' || s.srvname, quote_ident(s.srvname), "
    "'FOREIGN SERVER', 'USAGE', 'USAGE', h.holder_sql, h.via_sql, h.self, o.rolsuper "
    "FROM pg_catalog.pg_foreign_server s JOIN pg_catalog.pg_roles o ON o.oid = s.srvowner "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(s.srvacl, pg_catalog.acldefault('S', "
    "s.srvowner))) e JOIN h ON h.oid = e.grantee WHERE e.privilege_type = 'USAGE' "
    "UNION ALL SELECT '', 'foreign-data wrapper ' || w.fdwname, quote_ident(w.fdwname), "
    "'FOREIGN DATA WRAPPER', 'USAGE', 'USAGE', h.holder_sql, h.via_sql, h.self, o.rolsuper "
    "FROM pg_catalog.pg_foreign_data_wrapper w JOIN pg_catalog.pg_roles o ON o.oid = w.fdwowner "
    "CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce(w.fdwacl, pg_catalog.acldefault('F', "
    "w.fdwowner))) e JOIN h ON h.oid = e.grantee WHERE e.privilege_type = 'USAGE' "
    "ORDER BY 4, 1, 2, 7";

// SECURITY DEFINER functions outside pg_catalog that the role can execute and whose owner can
// write: a superuser, a member of pg_write_all_data, a role with a write privilege on a table
// or one that owns a table (it can grant itself the privilege).
inline constexpr const char* kSecurityDefiner =
    ", f AS (SELECT p.oid, p.proacl, p.proowner, p.proname, p.prokind, n.nspname "
    "FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
    "WHERE p.prosecdef AND n.nspname NOT IN ('pg_catalog', 'information_schema')), "
    "w AS (SELECT o.oid, o.rolname FROM pg_catalog.pg_roles o WHERE o.oid IN (SELECT f.proowner "
    "FROM f) AND (o.rolsuper OR pg_catalog.pg_has_role(o.oid, 'pg_write_all_data', 'USAGE') "
    "OR EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace cn "
    "ON cn.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'v', 'f') "
    "AND cn.nspname NOT IN ('pg_catalog', 'information_schema') "
    "AND (c.relowner = o.oid OR pg_catalog.has_table_privilege(o.oid, c.oid, "
    "'INSERT, UPDATE, DELETE, TRUNCATE'))))) "
    "SELECT f.nspname::text AS schema, f.proname || '(' || "
    "pg_catalog.pg_get_function_identity_arguments(f.oid) || ')' AS name, "
    "quote_ident(f.nspname) || '.' || quote_ident(f.proname) || '(' || "
    "pg_catalog.pg_get_function_identity_arguments(f.oid) || ')' AS name_sql, "
    "CASE WHEN f.prokind = 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END AS kind, "
    "'EXECUTE' AS fix_privs, 'EXECUTE' AS privs, h.holder_sql, h.via_sql, h.self, false AS "
    "owner_super, w.rolname::text AS owner "
    "FROM f JOIN w ON w.oid = f.proowner CROSS JOIN LATERAL pg_catalog.aclexplode(coalesce("
    "f.proacl, pg_catalog.acldefault('f', f.proowner))) e JOIN h ON h.oid = e.grantee "
    "WHERE e.privilege_type = 'EXECUTE' ORDER BY 1, 2, 7";

// Objects owned by the role or a role it belongs to, in this database and cluster-wide
// (databases, tablespaces), as pg_shdepend records them (what REASSIGN OWNED uses). Default
// privileges and user mappings are recorded there too but are not objects anyone owns.
inline constexpr const char* kOwnership =
    ", o AS (SELECT d.classid, d.objid, d.objsubid, d.refobjid FROM pg_catalog.pg_shdepend d "
    "WHERE d.deptype = 'o' AND d.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass "
    "AND d.dbid IN (0, (SELECT db.oid FROM pg_catalog.pg_database db WHERE db.datname = "
    "current_database())) "
    "AND d.classid NOT IN ('pg_catalog.pg_default_acl'::pg_catalog.regclass, "
    "'pg_catalog.pg_user_mapping'::pg_catalog.regclass)) "
    "SELECT coalesce(i.schema, '')::text AS schema, i.type::text AS objtype, "
    "i.identity::text AS name_sql, quote_ident(m.rolname) AS holder_sql, "
    "CASE WHEN m.self THEN NULL ELSE m.via_sql END AS via_sql, m.self, "
    "(SELECT CASE WHEN db.datdba IN (SELECT m.oid FROM m) THEN NULL "
    "ELSE quote_ident(pg_catalog.pg_get_userbyid(db.datdba)) END FROM pg_catalog.pg_database db "
    "WHERE db.datname = current_database()) AS new_owner_sql "
    "FROM o JOIN m ON m.oid = o.refobjid "
    "CROSS JOIN LATERAL pg_catalog.pg_identify_object(o.classid, o.objid, o.objsubid) i "
    "WHERE coalesce(i.schema, '') NOT LIKE 'pg_temp%' AND coalesce(i.schema, '') NOT LIKE "
    "'pg_toast_temp%' ORDER BY m.self DESC, 2, 3";

}  // namespace mcpdb::postgres::self_check_sql
