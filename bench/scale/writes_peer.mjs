// AWS SDK for JavaScript v3 side of the writes benchmark
// (bench/scale/writes.py): one workload, measured in-process.
//
//   node bench/scale/writes_peer.mjs WORKLOAD ENDPOINT TABLE TAG
//
// WORKLOAD is insert, update or delete, as in writes_peer.py: insert, the
// 10,000 items as BatchWriteItemCommand calls of 25, one at a time,
// UnprocessedItems sent again (the SDK's documented loop); update, a Query
// of U#TAG then UpdateItemCommand of each item, 8 at a time; delete, a
// Query of D#TAG's keys then BatchWriteItemCommand of 25 DeleteRequests,
// one at a time.  The client is made, and one DescribeTable sent, before
// the clock starts.  Prints one JSON line: workload, items, calls, wall
// (s), cpu (s, user+sys of the process: process.cpuUsage).
import { performance } from "node:perf_hooks";
import {
  BatchWriteItemCommand,
  DescribeTableCommand,
  DynamoDBClient,
  QueryCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";

const MAX_PAGES = 100000; // a bound on every loop
const N_INSERT = 10000;
const IN_FLIGHT = 8; // UpdateItem calls at once

const [workload, endpoint, table, tag] = process.argv.slice(2);
if (!workload || !endpoint || !table || !tag) {
  console.error("usage: node writes_peer.mjs WORKLOAD ENDPOINT TABLE TAG");
  process.exit(2);
}
const ddb = new DynamoDBClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
  maxAttempts: 10,
});
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const pad = "x".repeat(200);

// The writes of requests, 25 a call, one call at a time; the calls made.
async function batchWrite(requests) {
  let calls = 0;
  for (let i = 0; i < requests.length; i += 25) {
    let req = { [table]: requests.slice(i, i + 25) };
    for (let k = 0; req && k < MAX_PAGES; k++) {
      const r = await ddb.send(new BatchWriteItemCommand({ RequestItems: req }));
      calls++;
      req = r.UnprocessedItems && Object.keys(r.UnprocessedItems).length
        ? r.UnprocessedItems : null;
    }
    if (req) throw new Error("UnprocessedItems without end");
  }
  return calls;
}

async function query(pk, projection) {
  const items = [];
  let calls = 0, start;
  for (let i = 0; i < MAX_PAGES; i++) {
    const input = {
      TableName: table,
      KeyConditionExpression: "PK = :p",
      ExpressionAttributeValues: { ":p": { S: pk } },
    };
    if (projection) input.ProjectionExpression = projection;
    if (start) input.ExclusiveStartKey = start;
    const r = await ddb.send(new QueryCommand(input));
    calls++;
    items.push(...r.Items);
    start = r.LastEvaluatedKey;
    if (!start) return [items, calls];
  }
  throw new Error("too many pages");
}

const insert = async () => {
  const reqs = [];
  for (let i = 0; i < N_INSERT; i++)
    reqs.push({
      PutRequest: {
        Item: {
          PK: { S: `I#${tag}#${String(Math.floor(i / 100)).padStart(3, "0")}` },
          SK: { S: String(i).padStart(5, "0") },
          n: { N: String(i) },
          pad: { S: pad },
          brand: { S: "b" },
        },
      },
    });
  return [N_INSERT, await batchWrite(reqs)];
};

const update = async () => {
  const [items, qcalls] = await query(`U#${tag}`);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const it = items[next++];
      await ddb.send(new UpdateItemCommand({
        TableName: table,
        Key: { PK: it.PK, SK: it.SK },
        UpdateExpression: "SET #b = :b",
        ConditionExpression: "attribute_exists(PK)",
        ExpressionAttributeNames: { "#b": "brand" },
        ExpressionAttributeValues: { ":b": { S: "v2" } },
      }));
    }
  };
  await Promise.all([...Array(IN_FLIGHT)].map(worker));
  return [items.length, qcalls + items.length];
};

const del = async () => {
  const [keys, qcalls] = await query(`D#${tag}`, "PK, SK");
  const calls = await batchWrite(keys.map((k) => ({
    DeleteRequest: { Key: { PK: k.PK, SK: k.SK } },
  })));
  return [keys.length, qcalls + calls];
};

await ddb.send(new DescribeTableCommand({ TableName: table }));
const fn = { insert, update, delete: del }[workload];
if (!fn) {
  console.error(`writes_peer: bad workload ${workload}`);
  process.exit(2);
}
const w0 = performance.now();
const c0 = cpu();
const [items, calls] = await fn();
console.log(JSON.stringify({
  workload, items, calls, wall: (performance.now() - w0) / 1000, cpu: cpu() - c0,
}));
ddb.destroy();
