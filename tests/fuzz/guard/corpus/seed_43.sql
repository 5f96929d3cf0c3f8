SELECT E'a'
'\'' , pg_sleep(1) --'