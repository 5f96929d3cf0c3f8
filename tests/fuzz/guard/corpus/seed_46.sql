SELECT 'a' -- c
'b' /* x */ ; -- end