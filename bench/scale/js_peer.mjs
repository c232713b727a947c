// AWS SDK for JavaScript v3 peer of the scale benchmark: one workload,
// measured in-process.
//
//   node bench/scale/js_peer.mjs WORKLOAD ENDPOINT TABLE [KEYS.json]
//
// WORKLOAD is one of count, count_items, scan_json, query_json, get, batch,
// as in py_peer.py: ScanCommand/QueryCommand with LastEvaluatedKey paging
// by hand (the full Scans as BENCH_PEER_SEGMENTS parallel segments, 1 by
// default, awaited together), BatchGetItemCommand of 100 keys with 4 calls
// in flight for batch,
// items to plain JSON with @aws-sdk/util-dynamodb's unmarshall and
// JSON.stringify (sets as arrays).  The client is made, and one
// DescribeTable sent, before the clock starts.  Prints one JSON line per
// measurement: workload, items, calls, wall (s), cpu (s, user+sys of the
// process, all threads: process.cpuUsage), check (sum of JSON lengths).
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import {
  BatchGetItemCommand,
  DynamoDBClient,
  DescribeTableCommand,
  GetItemCommand,
  QueryCommand,
  ScanCommand,
} from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";

const MAX_PAGES = 100000; // a bound on every paging loop
const HOT_PK = "HOT#0";
const BATCH = 100; // keys a BatchGetItem call
const IN_FLIGHT = 4; // BatchGetItem calls at once
const NSEG = Number(process.env.BENCH_PEER_SEGMENTS || "1");
if (!Number.isInteger(NSEG) || NSEG < 1 || NSEG > 64) {
  console.error("js_peer: BENCH_PEER_SEGMENTS must be 1..64");
  process.exit(2);
}

const [workload, endpoint, table, keysFile] = process.argv.slice(2);
if (!workload || !endpoint || !table) {
  console.error("usage: node js_peer.mjs WORKLOAD ENDPOINT TABLE [KEYS.json]");
  process.exit(2);
}

const ddb = new DynamoDBClient({
  endpoint,
  region: "us-east-1",
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
  maxAttempts: 10,
});

const replacer = (k, v) => (v instanceof Set ? [...v] : v);
const toJson = (item) => JSON.stringify(unmarshall(item), replacer);

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function* pages(Command, input) {
  let start;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await ddb.send(
      new Command(start ? { ...input, ExclusiveStartKey: start } : input));
    yield page;
    start = page.LastEvaluatedKey;
    if (!start) return;
  }
  throw new Error(`more than ${MAX_PAGES} pages`);
}

async function run(name, fn) {
  const w0 = performance.now();
  const c0 = cpu();
  const [items, calls, check] = await fn();
  const wall = (performance.now() - w0) / 1000;
  const used = cpu() - c0;
  console.log(JSON.stringify({ workload: name, items, calls, wall, cpu: used, check }));
}

const sum3 = (parts) =>
  [0, 1, 2].map((i) => parts.reduce((a, p) => a + p[i], 0));

const scanSegment = async (selectCount, render, seg) => {
  let n = 0, calls = 0, check = 0;
  const input = { TableName: table };
  if (selectCount) input.Select = "COUNT";
  if (NSEG > 1) {
    input.Segment = seg;
    input.TotalSegments = NSEG;
  }
  for await (const page of pages(ScanCommand, input)) {
    calls++;
    if (selectCount) {
      n += page.Count;
      continue;
    }
    for (const it of page.Items) {
      n++;
      if (render) check += toJson(it).length;
    }
  }
  return [n, calls, check];
};

const scan = (selectCount, render) => async () =>
  sum3(await Promise.all([...Array(NSEG).keys()].map(
    (seg) => scanSegment(selectCount, render, seg))));

const query = async () => {
  let n = 0, calls = 0, check = 0;
  const input = {
    TableName: table,
    KeyConditionExpression: "#p = :p",
    ExpressionAttributeNames: { "#p": "PK" },
    ExpressionAttributeValues: { ":p": { S: HOT_PK } },
  };
  for await (const page of pages(QueryCommand, input)) {
    calls++;
    for (const it of page.Items) {
      n++;
      check += toJson(it).length;
    }
  }
  return [n, calls, check];
};

const gets = (keys) => async () => {
  let n = 0, check = 0;
  for (const k of keys) {
    const r = await ddb.send(new GetItemCommand({
      TableName: table,
      Key: { PK: { S: k.PK }, SK: { S: k.SK } },
    }));
    if (r.Item) {
      n++;
      check += toJson(r.Item).length;
    }
  }
  return [n, keys.length, check];
};

const batch = (keys) => async () => {
  const chunks = [];
  for (let i = 0; i < keys.length; i += BATCH)
    chunks.push(keys.slice(i, i + BATCH));
  let next = 0;
  const worker = async () => {
    let n = 0, calls = 0, check = 0;
    while (next < chunks.length) {
      const chunk = chunks[next++];
      let req = {
        [table]: { Keys: chunk.map((k) => ({ PK: { S: k.PK }, SK: { S: k.SK } })) },
      };
      for (let i = 0; req && i < MAX_PAGES; i++) {
        const r = await ddb.send(new BatchGetItemCommand({ RequestItems: req }));
        calls++;
        for (const it of (r.Responses && r.Responses[table]) || []) {
          n++;
          check += toJson(it).length;
        }
        req = r.UnprocessedKeys && Object.keys(r.UnprocessedKeys).length
          ? r.UnprocessedKeys : null;
      }
      if (req) throw new Error("UnprocessedKeys without end");
    }
    return [n, calls, check];
  };
  return sum3(await Promise.all([...Array(IN_FLIGHT)].map(worker)));
};

await ddb.send(new DescribeTableCommand({ TableName: table }));
switch (workload) {
  case "count": await run("count", scan(true, false)); break;
  case "count_items": await run("count_items", scan(false, false)); break;
  case "scan_json": await run("scan_json", scan(false, true)); break;
  case "query_json": await run("query_json", query); break;
  case "get": {
    if (!keysFile) throw new Error("get needs KEYS.json");
    const keys = JSON.parse(readFileSync(keysFile, "utf8"));
    await run("get_cold", gets(keys));
    await run("get_warm", gets(keys));
    break;
  }
  case "batch": {
    if (!keysFile) throw new Error("batch needs KEYS.json");
    await run("get_batch", batch(JSON.parse(readFileSync(keysFile, "utf8"))));
    break;
  }
  default:
    console.error(`js_peer: bad workload ${workload}`);
    process.exit(2);
}
ddb.destroy();
