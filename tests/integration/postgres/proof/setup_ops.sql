-- Issue 28's implicit operators and casts, made by the superuser (an operator class needs one)
-- once per version of this file (proof_test.cpp). A user type whose `=`, `<`, `<=`, `>=`, `>`
-- and default btree and hash operator classes are backed by functions that leave a session-level
-- advisory lock (key 2802802) whenever they run, so PostgreSQL supplies them where the text
-- writes no operator (USING, NATURAL, IN, CASE, NULLIF, IS DISTINCT FROM, DISTINCT, GROUP BY,
-- UNION, ORDER BY); and user-defined implicit and assignment casts backed the same way. The
-- reader may execute all of it: a call the proof let through would show in pg_locks.
SET client_min_messages = warning;
BEGIN;
SELECT pg_advisory_xact_lock(74302);
DROP SCHEMA IF EXISTS prooftest_ops CASCADE;
CREATE SCHEMA prooftest_ops;
CREATE TYPE prooftest_ops.k AS ENUM ('a', 'b');
CREATE FUNCTION prooftest_ops.cmp(x prooftest_ops.k, y prooftest_ops.k) RETURNS int
  LANGUAGE sql IMMUTABLE AS $$SELECT CASE WHEN pg_try_advisory_lock(2802802) THEN 0 ELSE 0 END
    + CASE WHEN x::text < y::text THEN -1 WHEN x::text > y::text THEN 1 ELSE 0 END$$;
CREATE FUNCTION prooftest_ops.eq(x prooftest_ops.k, y prooftest_ops.k) RETURNS bool
  LANGUAGE sql IMMUTABLE AS 'SELECT prooftest_ops.cmp(x, y) = 0';
CREATE FUNCTION prooftest_ops.lt(x prooftest_ops.k, y prooftest_ops.k) RETURNS bool
  LANGUAGE sql IMMUTABLE AS 'SELECT prooftest_ops.cmp(x, y) < 0';
CREATE FUNCTION prooftest_ops.le(x prooftest_ops.k, y prooftest_ops.k) RETURNS bool
  LANGUAGE sql IMMUTABLE AS 'SELECT prooftest_ops.cmp(x, y) <= 0';
CREATE FUNCTION prooftest_ops.ge(x prooftest_ops.k, y prooftest_ops.k) RETURNS bool
  LANGUAGE sql IMMUTABLE AS 'SELECT prooftest_ops.cmp(x, y) >= 0';
CREATE FUNCTION prooftest_ops.gt(x prooftest_ops.k, y prooftest_ops.k) RETURNS bool
  LANGUAGE sql IMMUTABLE AS 'SELECT prooftest_ops.cmp(x, y) > 0';
CREATE FUNCTION prooftest_ops.hash(x prooftest_ops.k) RETURNS int LANGUAGE sql IMMUTABLE
  AS $$SELECT hashtext(x::text) + CASE WHEN pg_try_advisory_lock(2802802) THEN 0 ELSE 0 END$$;
CREATE OPERATOR prooftest_ops.= (LEFTARG = prooftest_ops.k, RIGHTARG = prooftest_ops.k,
  FUNCTION = prooftest_ops.eq, COMMUTATOR = OPERATOR(prooftest_ops.=), RESTRICT = eqsel,
  JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR prooftest_ops.< (LEFTARG = prooftest_ops.k, RIGHTARG = prooftest_ops.k,
  FUNCTION = prooftest_ops.lt);
CREATE OPERATOR prooftest_ops.<= (LEFTARG = prooftest_ops.k, RIGHTARG = prooftest_ops.k,
  FUNCTION = prooftest_ops.le);
CREATE OPERATOR prooftest_ops.>= (LEFTARG = prooftest_ops.k, RIGHTARG = prooftest_ops.k,
  FUNCTION = prooftest_ops.ge);
CREATE OPERATOR prooftest_ops.> (LEFTARG = prooftest_ops.k, RIGHTARG = prooftest_ops.k,
  FUNCTION = prooftest_ops.gt);
CREATE OPERATOR CLASS prooftest_ops.k_btree DEFAULT FOR TYPE prooftest_ops.k USING btree AS
  OPERATOR 1 prooftest_ops.<, OPERATOR 2 prooftest_ops.<=, OPERATOR 3 prooftest_ops.=,
  OPERATOR 4 prooftest_ops.>=, OPERATOR 5 prooftest_ops.>,
  FUNCTION 1 prooftest_ops.cmp(prooftest_ops.k, prooftest_ops.k);
CREATE OPERATOR CLASS prooftest_ops.k_hash DEFAULT FOR TYPE prooftest_ops.k USING hash AS
  OPERATOR 1 prooftest_ops.=, FUNCTION 1 prooftest_ops.hash(prooftest_ops.k);
CREATE TABLE prooftest_ops.t1 (k prooftest_ops.k, n int);
CREATE TABLE prooftest_ops.t2 (k prooftest_ops.k, m int);
INSERT INTO prooftest_ops.t1 VALUES ('a', 1), ('b', 2);
INSERT INTO prooftest_ops.t2 VALUES ('a', 3);
-- An implicit cast (int -> c), applied to a function's argument the text passes as an int.
CREATE TYPE prooftest_ops.c AS ENUM ('x');
CREATE FUNCTION prooftest_ops.int_to_c(v int) RETURNS prooftest_ops.c LANGUAGE sql IMMUTABLE
  AS $$SELECT CASE WHEN pg_try_advisory_lock(2802802) THEN 'x'::prooftest_ops.c
    ELSE 'x'::prooftest_ops.c END$$;
CREATE CAST (int AS prooftest_ops.c) WITH FUNCTION prooftest_ops.int_to_c(int) AS IMPLICIT;
CREATE FUNCTION prooftest_ops.takes_c(v prooftest_ops.c) RETURNS int LANGUAGE sql IMMUTABLE
  AS 'SELECT 1';
-- An assignment cast (text -> d), applied to a SQL function's result.
CREATE TYPE prooftest_ops.d AS ENUM ('y');
CREATE FUNCTION prooftest_ops.text_to_d(v text) RETURNS prooftest_ops.d LANGUAGE sql IMMUTABLE
  AS $$SELECT CASE WHEN pg_try_advisory_lock(2802802) THEN 'y'::prooftest_ops.d
    ELSE 'y'::prooftest_ops.d END$$;
CREATE CAST (text AS prooftest_ops.d) WITH FUNCTION prooftest_ops.text_to_d(text) AS ASSIGNMENT;
CREATE FUNCTION prooftest_ops.returns_d() RETURNS prooftest_ops.d LANGUAGE sql
  AS $$SELECT 'y'::text$$;
GRANT USAGE ON SCHEMA prooftest_ops TO mcp_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA prooftest_ops TO mcp_reader;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA prooftest_ops TO mcp_reader;
-- The suite's canary (tests/support/canary.mjs) fingerprints every table as the admin role.
GRANT USAGE ON SCHEMA prooftest_ops TO mcp_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA prooftest_ops TO mcp_admin;
COMMIT;
