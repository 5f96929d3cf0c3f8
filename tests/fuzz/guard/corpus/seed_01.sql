SELECT o.id, o.total, c.name
FROM orders o
JOIN customers c ON c.id = o.customer_id
WHERE o.created_at >= $1::timestamptz AND o.status = $2
ORDER BY o.created_at DESC
LIMIT 100