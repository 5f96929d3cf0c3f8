-- Objects for the read-only proof's verdict file (cases.test), created by the admin role in a
-- schema of their own, dropped and made again on every run (serialised by an advisory lock).
-- Every function below that could write is exactly what a careless or hostile config would reach.
SET client_min_messages = warning;
BEGIN;
SELECT pg_advisory_xact_lock(74301);
DROP SCHEMA IF EXISTS prooftest CASCADE;
CREATE SCHEMA prooftest;
CREATE TABLE prooftest.items (id int PRIMARY KEY, owner text, body text);
INSERT INTO prooftest.items VALUES (1, 'a', 'x'), (2, 'b', 'y');
CREATE SEQUENCE prooftest.seq;

CREATE FUNCTION prooftest.pure(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x + 1';
CREATE FUNCTION prooftest.makes_lo() RETURNS oid LANGUAGE sql AS 'SELECT lo_creat(-1)';
CREATE FUNCTION prooftest.from_bytea() RETURNS oid LANGUAGE sql
  AS $$SELECT lo_from_bytea(0, '\x00'::bytea)$$;
CREATE FUNCTION prooftest.locks() RETURNS void LANGUAGE sql AS 'SELECT pg_advisory_lock(1)';
CREATE FUNCTION prooftest.sets() RETURNS text LANGUAGE sql
  AS $$SELECT set_config('search_path', 'evil', false)$$;
CREATE FUNCTION prooftest.notifies() RETURNS void LANGUAGE sql AS $$SELECT pg_notify('c', 'x')$$;
CREATE FUNCTION prooftest.next() RETURNS bigint LANGUAGE sql AS $$SELECT nextval('prooftest.seq')$$;
CREATE FUNCTION prooftest.plpg() RETURNS int LANGUAGE plpgsql AS 'BEGIN RETURN 1; END';
CREATE FUNCTION prooftest.definer() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT 1';
CREATE FUNCTION prooftest.writes() RETURNS int LANGUAGE sql
  AS 'DELETE FROM prooftest.items WHERE false; SELECT 1';
CREATE FUNCTION prooftest.calls_lo() RETURNS oid LANGUAGE sql AS 'SELECT prooftest.makes_lo()';
CREATE FUNCTION prooftest.atomic_pure(x int) RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT x * 2; END;
CREATE FUNCTION prooftest.atomic_lo() RETURNS oid LANGUAGE sql BEGIN ATOMIC SELECT lo_creat(-1); END;
CREATE FUNCTION prooftest."Evil"() RETURNS int LANGUAGE plpgsql AS 'BEGIN RETURN 1; END';
CREATE FUNCTION prooftest.upper(t text) RETURNS text LANGUAGE plpgsql AS 'BEGIN RETURN t; END';
CREATE FUNCTION prooftest.dblink_exec(t text) RETURNS text LANGUAGE sql AS 'SELECT t';
CREATE FUNCTION prooftest.via_dblink() RETURNS text LANGUAGE sql
  AS $$SELECT prooftest.dblink_exec('x')$$;
CREATE FUNCTION prooftest.attr(r prooftest.items) RETURNS oid LANGUAGE sql AS 'SELECT lo_creat(-1)';
CREATE FUNCTION prooftest.own_path() RETURNS int LANGUAGE sql SET search_path = prooftest
  AS 'SELECT plpg()';

CREATE VIEW prooftest.v_pure AS SELECT id, prooftest.pure(id) AS p FROM prooftest.items;
CREATE VIEW prooftest.v_lo AS SELECT id, prooftest.makes_lo() AS o FROM prooftest.items;
CREATE VIEW prooftest.v_nested AS SELECT * FROM prooftest.v_lo;
CREATE VIEW prooftest.v_next AS SELECT nextval('prooftest.seq') AS n;

CREATE FUNCTION prooftest.op_fn(a int, b int) RETURNS bool LANGUAGE sql
  AS 'SELECT pg_try_advisory_lock(a) AND b > 0';
CREATE OPERATOR prooftest.=== (LEFTARG = int, RIGHTARG = int, FUNCTION = prooftest.op_fn);
CREATE FUNCTION prooftest.op_pure(a int, b int) RETURNS bool LANGUAGE sql IMMUTABLE
  AS 'SELECT a = b';
CREATE OPERATOR prooftest.=~= (LEFTARG = int, RIGHTARG = int, FUNCTION = prooftest.op_pure);

CREATE TABLE prooftest.guarded (id int, owner text);
ALTER TABLE prooftest.guarded ENABLE ROW LEVEL SECURITY;
CREATE POLICY p_lo ON prooftest.guarded FOR SELECT USING (prooftest.makes_lo() IS NOT NULL);
CREATE TABLE prooftest.guarded_ok (id int, owner text);
ALTER TABLE prooftest.guarded_ok ENABLE ROW LEVEL SECURITY;
CREATE POLICY p_ok ON prooftest.guarded_ok FOR SELECT USING (owner = current_user);

CREATE FUNCTION prooftest.agg_step(s int, v int) RETURNS int LANGUAGE plpgsql
  AS 'BEGIN RETURN s + v; END';
CREATE AGGREGATE prooftest.total(int) (SFUNC = prooftest.agg_step, STYPE = int, INITCOND = '0');

CREATE FUNCTION prooftest.check_fn(x int) RETURNS bool LANGUAGE sql
  AS 'SELECT pg_try_advisory_lock(x) OR true';
CREATE DOMAIN prooftest.dom AS int CHECK (prooftest.check_fn(VALUE));

-- Issue 28: code PostgreSQL calls though no text names it. leaves_lock leaves a session-level
-- advisory lock (key 2802801) whenever it runs; the reader may execute it, so that a gap in the
-- proof would show in pg_locks (proof_test.cpp checks none is ever held).
CREATE FUNCTION prooftest.leaves_lock(x int) RETURNS bool LANGUAGE sql
  AS 'SELECT pg_try_advisory_lock(2802801) OR true';
CREATE DOMAIN prooftest.ldom AS int CHECK (prooftest.leaves_lock(VALUE));
CREATE TYPE prooftest.lcomp AS (a prooftest.ldom);
CREATE TYPE prooftest.lnest AS (c prooftest.lcomp);
CREATE TABLE prooftest.lrow (a prooftest.ldom);
CREATE TABLE prooftest.lcol (id int, d prooftest.ldom);
CREATE VIEW prooftest.v_lcol AS SELECT id, d FROM prooftest.lcol;
-- A user-defined `=` on a type no statement below reads, on the search_path: it must not make
-- every `=` refused.
CREATE TYPE prooftest.other AS ENUM ('z');
CREATE FUNCTION prooftest.other_eq(a prooftest.other, b prooftest.other) RETURNS bool
  LANGUAGE sql AS 'SELECT pg_try_advisory_lock(2802801) IS NOT NULL';
CREATE OPERATOR prooftest.= (LEFTARG = prooftest.other, RIGHTARG = prooftest.other,
  FUNCTION = prooftest.other_eq);

-- Nothing here is executable by PUBLIC (doctor's checks run against the same cluster meanwhile):
-- the proof needs no privilege, and the reader may run only what the call-time tests run.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA prooftest FROM PUBLIC;
GRANT EXECUTE ON FUNCTION prooftest.pure(int), prooftest.plpg(), prooftest.leaves_lock(int),
  prooftest.other_eq(prooftest.other, prooftest.other) TO mcp_reader;
GRANT USAGE ON SCHEMA prooftest TO mcp_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA prooftest TO mcp_reader;
COMMIT;
