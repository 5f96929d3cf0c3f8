SELECT pg_read_file
(
'x')