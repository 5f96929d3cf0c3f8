-- A foreign table for the proof's verdict file, made by the superuser (a foreign-data wrapper
-- needs one), kept between runs. The wrapper has no handler: the table is never read, only proved
-- (and no extension is installed, which doctor's own tests install and drop). Nothing here is
-- usable by the reader.
CREATE SCHEMA IF NOT EXISTS prooftest_fdw;
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_foreign_data_wrapper WHERE fdwname = 'prooftest_fdw') THEN
    CREATE FOREIGN DATA WRAPPER prooftest_fdw;
  END IF;
END $$;
CREATE SERVER IF NOT EXISTS prooftest_remote FOREIGN DATA WRAPPER prooftest_fdw;
CREATE FOREIGN TABLE IF NOT EXISTS prooftest_fdw.remote (id int) SERVER prooftest_remote;
