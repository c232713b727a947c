-- Import examples/import/products.csv into the e-commerce example's table
-- (the virtual table shop of `make shell`), the way that works: the file
-- into a TEMP table first (its header names the columns, every value is
-- text), then one INSERT ... SELECT that says which column is which.
-- In `make shell`: .read examples/import/import.sql   (docs/import.md)
.import --csv --schema temp examples/import/products.csv new_products
INSERT INTO shop(PK, SK, Type, item)
  SELECT PK, SK, 'PRODUCT',
         json_object('name', name, 'category', category,
                     'price', json(NULLIF(price, '')))
    FROM temp.new_products;
DROP TABLE temp.new_products;
