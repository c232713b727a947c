-- The start of `make shell` (tools/shell.sh runs sqlite3 -init with this
-- file, from the repository's root): the extension, the virtual table
-- `shop` over the example's DynamoDB table Store, and the output as
-- columns with headers.  The DescribeTable that CREATE VIRTUAL TABLE
-- made is taken off the list of calls, so that the first
-- dynamodb_calls() of the session shows only the session's own.
.load build/dynamodb
CREATE VIRTUAL TABLE shop USING dynamodb(table=Store);
.output /dev/null
SELECT dynamodb_calls();
.output stdout
.headers on
.mode column
