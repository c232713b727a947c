-- The 15 access patterns of the e-commerce example (README.md here) as
-- SQL, each followed by the DynamoDB call it cost.  `make demo` runs it;
-- in `make shell`, `.read examples/ecommerce/patterns.sql` does the same.
-- It expects what examples/ecommerce/shell.sql sets up: the virtual table
-- `shop` over the example's table, output as columns with headers.
.print
.print -- columns of the virtual table (CREATE VIRTUAL TABLE read them with DescribeTable)
SELECT name, type FROM pragma_table_xinfo('shop');
.print
.print -- 1. Get a user by username
SELECT PK, SK, json_extract(item, '$.email') AS email FROM shop
 WHERE PK = 'USER#alice' AND SK = 'USER#alice';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 2. Get all users
SELECT PK, json_extract(item, '$.name') AS name FROM shop WHERE Type = 'USER';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 3. Get all products
SELECT PK, SK, json_extract(item, '$.price') AS price FROM shop WHERE Type = 'PRODUCT';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 4. Get products in a category
SELECT SK, json_extract(item, '$.price') AS price FROM shop
 WHERE PK = 'CATEGORY#books' AND begins_with(SK, 'PRODUCT#');
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 5. Get products by product name
SELECT PK, SK FROM shop WHERE Type = 'PRODUCT' AND SK = 'PRODUCT#laptop';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 6. Get orders for a user
SELECT SK, json_extract(item, '$.status') AS status, json_extract(item, '$.total') AS total
  FROM shop WHERE PK = 'USER#alice' AND begins_with(SK, 'ORDER#');
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 7. Get all orders
SELECT PK, SK, json_extract(item, '$.status') AS status FROM shop WHERE Type = 'ORDER';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 8. Get orders in an order-ID range
SELECT PK, SK FROM shop WHERE Type = 'ORDER' AND SK BETWEEN 'ORDER#o-0002' AND 'ORDER#o-0004';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 9. Get orders for a status and date range (February, PENDING)
SELECT SK, GSI1SK FROM shop
 WHERE GSI1PK = 'ORDER'
   AND GSI1SK BETWEEN 'STATUS#PENDING#2026-02-01' AND 'STATUS#PENDING#2026-02-28~';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 10. Get order information by order ID
SELECT PK, json_extract(item, '$.status') AS status, json_extract(item, '$.total') AS total
  FROM shop WHERE Type = 'ORDER' AND SK = 'ORDER#o-0005';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 11. Get reviews for a user
SELECT SK, json_extract(item, '$.rating') AS rating FROM shop
 WHERE PK = 'USER#alice' AND SK GLOB 'REVIEW#*';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 12. Get all reviews
SELECT PK, SK, json_extract(item, '$.rating') AS rating FROM shop WHERE Type = 'REVIEW';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 13. Get a review by review ID
SELECT PK, json_extract(item, '$.text') AS text FROM shop
 WHERE Type = 'REVIEW' AND SK = 'REVIEW#r-0002';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 14. Get reviews for a product
SELECT SK, PK, json_extract(item, '$.rating') AS rating FROM shop
 WHERE GSI1PK = 'PRODUCT#laptop' AND begins_with(GSI1SK, 'REVIEW#');
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- 15. Get all categories
SELECT PK, json_extract(item, '$.description') AS description FROM shop WHERE Type = 'CATEGORY';
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
.headers on
.mode column
.print
.print -- and a report no key serves: a paginated Scan
SELECT json_extract(item, '$.Type') AS type, count(*) AS items FROM shop GROUP BY 1;
.headers off
.mode list
SELECT '   cost: ' || dynamodb_calls();
