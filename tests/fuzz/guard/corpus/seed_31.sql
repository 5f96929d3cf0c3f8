SELECT 'abc'
'def' AS s