#!/usr/bin/env python3
"""A fault-injecting HTTP proxy between the extension and DynamoDB Local.

Test code only.  It forwards every POST / to the upstream DynamoDB and, on
the requests it is told to, injects one fault:

    throttle   400 with a throttling error (ProvisionedThroughputExceeded,
               ThrottlingException, RequestLimitExceeded in turn, or with
               `throttle_body` the exact answer given: today's DynamoDB's
               forms with throttlingReasons / ThrottlingReasons); the
               request is not forwarded
    500        forwarded (so it may have been executed), then answered with
               500 InternalServerError
    503        503 ServiceUnavailable, not forwarded
    reset      forwarded, then the connection is reset (RST) before any
               answer: the write happened, its answer is lost
    truncate   forwarded, then the answer is cut in the middle of its body
               (Content-Length promises more) and the connection closed
    badcrc     forwarded, answered with an x-amz-crc32 that does not match
    delay      forwarded, the answer held back `delay` seconds (beyond the
               client's timeout)
    garbage    200 with a body that is not JSON, not forwarded
    badshape   200 with JSON that is not what DynamoDB sends (an item whose
               AttributeValue is malformed), not forwarded
    huge       200 announcing a 100 MB body (over the client's cap), then
               the connection closed, not forwarded
    unprocessed  200 to a BatchGetItem / BatchWriteItem with every key or
               write back as UnprocessedKeys / UnprocessedItems, not
               forwarded (a server that never gets to them)
    repeatkey  forwarded; an answer with a LastEvaluatedKey to a request
               with an ExclusiveStartKey gets that ExclusiveStartKey as its
               LastEvaluatedKey (a server that repeats the previous page's
               key: a client that follows it loops forever)
    unknownop  400 UnknownOperationException, not forwarded (a server
               without the operation, as dynalite lacks UpdateTimeToLive)
    cyclekey   forwarded; the first LastEvaluatedKey of each operation and
               segment (K1) is remembered, and an answer to a request that
               starts after another key gets K1 as its LastEvaluatedKey:
               K1, K2, K1, K2, ... (a loop of two pages)

Which requests: those whose X-Amz-Target operation is in `ops`; with mode
"first" only the first time a given body is seen (so every request fails on
its first try and a retry of the same bytes goes through), with "always"
every time.  With `after` N, the first N such requests go through untouched
(the second TransactWriteItems of a COMMIT fails for ever with after 1).
With `match` S, only requests whose body contains the text S (say
'"S":"050"', a key the call writes) are candidates: one call of several in
flight at once fails, whatever order they arrive in.

With `split` on, a BatchGetItem / BatchWriteItem with at least SPLIT_MIN
keys or writes seen for the first time is sent upstream with only its first
half; the other half comes back as UnprocessedKeys / UnprocessedItems, as
real DynamoDB does under load (DynamoDB Local never does).

With `capacity` on, every answer forwarded is recorded with the time the
server gave it and the ConsumedCapacity it reports (the max_rcu test:
what was spent in each second, as the server counted it).

Control (the extension never calls these):
    POST /__control  {"fault": "none|throttle|500|503|reset|truncate|badcrc|
                      delay", "mode": "first|always", "ops": [...],
                      "delay": 1.5, "split": true, "after": 0,
                      "match": "text", "capacity": true,
                      "throttle_body": {"__type": ..., "message": ...,
                                        "throttlingReasons": [...]}}
                                                        resets the counters
    GET  /__stats    {"requests": {op: n}, "faults": {op: n},
                      "forwarded": {op: n}, "inflight_max": {op: n}}
                     (inflight_max: the most requests of op that were
                     in the proxy at once: calls a client had in flight)
    GET  /__capacity [[seconds, op, units or null, Limit or null], ...]:
                     with `capacity`, each answer forwarded (seconds on
                     the proxy's monotonic clock, when the server answered;
                     units: its ConsumedCapacity, summed; null when it
                     reports none; Limit: the request's)

    proxy.py --upstream URL [--port N] [--log FILE] [--cert PEM --key PEM]

prints the port it listens on, then serves until killed.  --log appends
one JSON line per request (method, path, headers in order, body in
base64) for the SigV4 test; --cert serves https.
"""

import argparse
import base64
import hashlib
import http.client
import json
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SPLIT_MIN = 10
THROTTLES = ["ProvisionedThroughputExceededException", "ThrottlingException",
             "RequestLimitExceeded"]
PREFIX = "com.amazonaws.dynamodb.v20120810#"


class State:
    """What to inject, and what happened (under lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset({})

    def reset(self, cfg):
        with self.lock:
            self.fault = cfg.get("fault", "none")
            self.mode = cfg.get("mode", "first")
            self.ops = set(cfg.get("ops", []))
            self.delay = float(cfg.get("delay", 2.0))
            self.split = bool(cfg.get("split", False))
            self.after = int(cfg.get("after", 0))
            self.match = cfg.get("match", "").encode()
            self.matched = 0
            self.seen = set()
            self.split_seen = set()
            self.first_key = {}
            self.requests = {}
            self.faults = {}
            self.forwarded = {}
            self.inflight = {}
            self.inflight_max = {}
            self.n_throttle = 0
            self.capacity = bool(cfg.get("capacity", False))
            self.throttle_body = cfg.get("throttle_body")
            self.answers = []

    def decide(self, op, body):
        """The fault for this request ('none' if none) and whether to split."""
        h = hashlib.sha256(op.encode() + b"\0" + body).hexdigest()
        with self.lock:
            self.requests[op] = self.requests.get(op, 0) + 1
            fault = "none"
            if (self.fault != "none" and op in self.ops
                    and (not self.match or self.match in body)):
                self.matched += 1
                if self.matched > self.after and (
                        self.mode == "always" or h not in self.seen):
                    fault = self.fault
                    self.faults[op] = self.faults.get(op, 0) + 1
                self.seen.add(h)
            split = False
            if (self.split and op in ("BatchGetItem", "BatchWriteItem")
                    and fault not in ("throttle", "503")
                    and h not in self.split_seen):
                self.split_seen.add(h)
                split = True
            throttle = THROTTLES[self.n_throttle % len(THROTTLES)]
            if fault == "throttle":
                self.n_throttle += 1
            return fault, split, throttle

    def enter(self, op, d):
        """A request of op arrives (d 1) or is answered (d -1)."""
        with self.lock:
            n = self.inflight.get(op, 0) + d
            self.inflight[op] = n
            if n > self.inflight_max.get(op, 0):
                self.inflight_max[op] = n

    def count_forward(self, op):
        with self.lock:
            self.forwarded[op] = self.forwarded.get(op, 0) + 1

    def record(self, op, body, data):
        """With `capacity`: an answer to op (request body, answer data)."""
        if not self.capacity:
            return
        t = time.monotonic()
        units = limit = None
        try:
            cc = json.loads(data).get("ConsumedCapacity")
            if isinstance(cc, dict):
                cc = [cc]
            if isinstance(cc, list) and cc:
                units = sum(float(x.get("CapacityUnits", 0)) for x in cc)
            limit = json.loads(body).get("Limit")
        except (ValueError, AttributeError, TypeError):
            pass
        with self.lock:
            self.answers.append([t, op, units, limit])

    def stats(self):
        with self.lock:
            return {"requests": dict(self.requests),
                    "faults": dict(self.faults),
                    "forwarded": dict(self.forwarded),
                    "inflight_max": dict(self.inflight_max)}


STATE = State()
UPSTREAM = None
LOG = None
LOG_LOCK = threading.Lock()
LOCAL = threading.local()


def split_body(op, body):
    """(body sent upstream, the half kept back) or (body, None)."""
    try:
        req = json.loads(body)
    except ValueError:
        return body, None
    ri = req.get("RequestItems") or {}
    if len(ri) != 1:
        return body, None
    table, spec = next(iter(ri.items()))
    items = spec.get("Keys") if op == "BatchGetItem" else spec
    if not isinstance(items, list) or len(items) < SPLIT_MIN:
        return body, None
    keep, back = items[:(len(items) + 1) // 2], items[(len(items) + 1) // 2:]
    if op == "BatchGetItem":
        spec = dict(spec)
        spec["Keys"] = keep
        kept = dict(spec)
        kept["Keys"] = back
        req["RequestItems"] = {table: spec}
        return json.dumps(req).encode(), {table: kept}
    req["RequestItems"] = {table: keep}
    return json.dumps(req).encode(), {table: back}


def upstream_post(path, headers, body):
    """POST to the upstream; (status, reason, [(name, value)], body)."""
    for attempt in range(2):
        conn = getattr(LOCAL, "conn", None)
        if conn is None:
            u = urllib.parse.urlsplit(UPSTREAM)
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
            LOCAL.conn = conn
        try:
            conn.request("POST", path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            return r.status, r.reason, r.getheaders(), data
        except (OSError, http.client.HTTPException):
            conn.close()
            LOCAL.conn = None
            if attempt:
                raise
    raise RuntimeError("unreachable")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass

    def send_raw(self, status, reason, headers, body, cut=None):
        """Write a response; cut: write only this many body bytes, then
        close the connection."""
        lines = ["HTTP/1.1 %d %s" % (status, reason)]
        for k, v in headers:
            lines.append("%s: %s" % (k, v))
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.wfile.write(head + (body if cut is None else body[:cut]))
        self.wfile.flush()
        if cut is not None:
            self.close_connection = True

    def reply(self, status, reason, body, extra=()):
        """An answer of ours (JSON body, with a correct x-amz-crc32)."""
        hdrs = [("Content-Type", "application/x-amz-json-1.0"),
                ("Content-Length", str(len(body))),
                ("x-amz-crc32", str(zlib.crc32(body) & 0xffffffff))]
        hdrs.extend(extra)
        self.send_raw(status, reason, hdrs, body)

    def do_GET(self):
        if self.path == "/__stats":
            self.reply(200, "OK", json.dumps(STATE.stats()).encode())
        elif self.path == "/__capacity":
            with STATE.lock:
                ans = list(STATE.answers)
            self.reply(200, "OK", json.dumps(ans).encode())
        else:
            self.reply(404, "Not Found", b"{}")

    def reset_connection(self):
        """Close with SO_LINGER 0: the peer sees a connection reset."""
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close_connection = True
        try:
            self.connection.close()
        except OSError:
            pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.path == "/__control":
            STATE.reset(json.loads(body or b"{}"))
            self.reply(200, "OK", b"{}")
            return
        if LOG:
            rec = {"method": "POST", "path": self.path,
                   "headers": [[k, v] for k, v in self.headers.items()],
                   "body": base64.b64encode(body).decode()}
            with LOG_LOCK, open(LOG, "a") as f:
                f.write(json.dumps(rec) + "\n")
        target = self.headers.get("X-Amz-Target") or ""
        op = target.rsplit(".", 1)[-1]
        STATE.enter(op, 1)
        try:
            self.serve(op, body)
        finally:
            STATE.enter(op, -1)

    def serve(self, op, body):
        """Answer one DynamoDB request, with its fault if any."""
        fault, split, throttle = STATE.decide(op, body)

        if fault == "throttle":
            msg = STATE.throttle_body or {
                "__type": PREFIX + throttle,
                "message": "Rate exceeded (injected)"}
            self.reply(400, "Bad Request", json.dumps(msg).encode())
            return
        if fault == "503":
            msg = {"__type": "com.amazon.coral.availability#"
                             "ServiceUnavailableException",
                   "message": "Service unavailable (injected)"}
            self.reply(503, "Service Unavailable", json.dumps(msg).encode())
            return

        if fault == "unknownop":
            msg = {"__type": "com.amazon.coral.service#"
                             "UnknownOperationException"}
            self.reply(400, "Bad Request", json.dumps(msg).encode())
            return
        if fault == "garbage":
            self.reply(200, "OK", b"<html>502 Bad Gateway</html>")
            return
        if fault == "badshape":
            self.reply(200, "OK", b'{"Item":{"PK":{"S":7}},"Items":[{"x":'
                                  b'{"Q":"1"}}],"Count":1}')
            return
        if fault == "unprocessed" and op in ("BatchGetItem",
                                             "BatchWriteItem"):
            req = json.loads(body)
            if op == "BatchGetItem":
                ans = {"Responses": {t: [] for t in req["RequestItems"]},
                       "UnprocessedKeys": req["RequestItems"]}
            else:
                ans = {"UnprocessedItems": req["RequestItems"]}
            self.reply(200, "OK", json.dumps(ans).encode())
            return
        if fault == "huge":
            self.send_raw(200, "OK",
                          [("Content-Type", "application/x-amz-json-1.0"),
                           ("Content-Length", str(100 * 1024 * 1024))],
                          b"{", cut=1)
            return

        fwd_body, back = split_body(op, body) if split else (body, None)
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() not in ("host", "content-length", "connection",
                                     "expect", "accept-encoding")}
        try:
            status, reason, rhdrs, data = upstream_post(self.path, hdrs,
                                                        fwd_body)
        except Exception as e:  # upstream gone: a 502 of ours
            self.reply(502, "Bad Gateway",
                       json.dumps({"message": str(e)}).encode())
            return
        STATE.count_forward(op)
        if status == 200:
            STATE.record(op, body, data)
        if fault == "repeatkey" and status == 200:
            ans = json.loads(data)
            start = json.loads(body).get("ExclusiveStartKey")
            if start and ans.get("LastEvaluatedKey"):
                ans["LastEvaluatedKey"] = start
                data = json.dumps(ans).encode()
        if fault == "cyclekey" and status == 200:
            ans = json.loads(data)
            req = json.loads(body)
            start = req.get("ExclusiveStartKey")
            where = (op, req.get("Segment"))
            if ans.get("LastEvaluatedKey"):
                with STATE.lock:
                    first = STATE.first_key.setdefault(
                        where, ans["LastEvaluatedKey"])
                if start and start != first:
                    ans["LastEvaluatedKey"] = first
                    data = json.dumps(ans).encode()
        if back is not None and status == 200:
            ans = json.loads(data)
            key = "UnprocessedKeys" if op == "BatchGetItem" \
                else "UnprocessedItems"
            ans[key] = back
            data = json.dumps(ans).encode()
        out = [(k, v) for k, v in rhdrs
               if k.lower() not in ("content-length", "x-amz-crc32",
                                    "connection", "transfer-encoding")]
        out.append(("Content-Length", str(len(data))))
        crc = zlib.crc32(data) & 0xffffffff

        if fault == "500":
            msg = {"__type": PREFIX + "InternalServerError",
                   "message": "Internal server error (injected)"}
            self.reply(500, "Internal Server Error", json.dumps(msg).encode())
        elif fault == "reset":
            self.reset_connection()
        elif fault == "truncate":
            out.append(("x-amz-crc32", str(crc)))
            self.send_raw(status, reason, out, data, cut=max(1, len(data) // 2))
        elif fault == "badcrc":
            out.append(("x-amz-crc32", str((crc + 1) & 0xffffffff)))
            self.send_raw(status, reason, out, data)
        elif fault == "delay":
            time.sleep(STATE.delay)
            out.append(("x-amz-crc32", str(crc)))
            try:
                self.send_raw(status, reason, out, data)
            except OSError:
                self.close_connection = True
        else:
            out.append(("x-amz-crc32", str(crc)))
            self.send_raw(status, reason, out, data)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):  # quiet
        pass


def main():
    global UPSTREAM, LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    a = ap.parse_args()
    UPSTREAM = a.upstream
    LOG = a.log
    srv = Server(("127.0.0.1", a.port), Handler)
    if a.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
