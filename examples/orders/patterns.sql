-- The order-status pattern, both ways, on the table of store.json
-- (examples/orders/README.md).  Each SELECT is one Query.
--   python3 examples/load.py examples/orders/store.json Orders
--   sqlite3 -cmd '.load build/dynamodb' < examples/orders/patterns.sql
CREATE VIRTUAL TABLE IF NOT EXISTS orders USING dynamodb(table=Orders);

-- 1. a shop's pending orders placed in February, the multi-attribute index
SELECT order_id, created_at FROM orders
 WHERE shop = 'north' AND status = 'PENDING'
   AND created_at BETWEEN 20260201 AND 20260228;

-- 1b. the same through the synthetic key: the bounds are built as text
SELECT json_extract(item, '$.order_id'), json_extract(item, '$.created_at')
  FROM orders
 WHERE GSI1PK = 'SHOP#north'
   AND GSI1SK BETWEEN 'STATUS#PENDING#20260201' AND 'STATUS#PENDING#20260228~';

-- 2. a shop's three newest pending orders
SELECT order_id, created_at FROM orders
 WHERE shop = 'north' AND status = 'PENDING'
 ORDER BY created_at DESC, order_id DESC LIMIT 3;

-- 2b. the same through the synthetic key
SELECT json_extract(item, '$.order_id'), json_extract(item, '$.created_at')
  FROM orders
 WHERE GSI1PK = 'SHOP#north' AND begins_with(GSI1SK, 'STATUS#PENDING#')
 ORDER BY GSI1SK DESC LIMIT 3;
