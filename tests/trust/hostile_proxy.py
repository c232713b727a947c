#!/usr/bin/env python3
"""A hostile endpoint: tests/faults/proxy.py in front of DynamoDB Local, plus
the answers of a broken or lying server (suite 28, tests/trust/hostile_check.py).

Test code only.  Every request goes through proxy.py's handler (its faults
and its /__control, /__stats stay as they are) unless the hostile mode set
with POST /__hostile takes it.  The modes, for the requests whose operation
is in `ops`:

    bigpage    a 200 answer of `n` copies of `item` (a JSON text, default
               {"PK":{"S":"a"}}) as Items with Count = ScannedCount = n, not
               forwarded; `chunked`: no Content-Length (the body comes in
               chunks, so its size is known only as it arrives)
    freshkey   forwarded; the answer's LastEvaluatedKey replaced by a key
               never sent before, shaped by `key`:
                 scan     {PK: fresh-N, SK: x}, the table's key shape
                 forward  a Query's own partition and a sort key just past
                          the request's start (its SK + "~"): a key every
                          order rule allows
                 back     the Query's partition, a sort key before its start
                 otherpk  another partition than the Query's
                 noSK     {PK: fresh-N}: the sort key missing
                 extra    the table's key and one more attribute
                 typeN    {PK: fresh-N, SK: N 7}: the sort key of type N
                 outside  the Query's partition, a sort key past its start
                          but outside its key condition (zzz...)
               with `empty` the answer's Items are dropped (Count and
               ScannedCount 0): an endless run of empty pages (those after
               the first not forwarded)
    batchextra forwarded; a BatchGetItem answer gets one more item, of a
               key that was not asked for (`how` "replace": in the place
               of one that was; "twice": its first item again in the place
               of its last)
    batchbig   a BatchGetItem of more than `most` keys is answered with a
               200 announcing 65 MB (more than the client takes), not
               forwarded; the others are forwarded
    errtext    400 ValidationException whose message holds escape sequences
               (ESC [ 2J, OSC 0 title), CR, BEL, a C1 control, bidi
               overrides, bytes that are no UTF-8 and `pad` bytes of text,
               not forwarded
    badutf8    forwarded; in a 200 answer the byte FF (never in UTF-8) put
               in the first string value ({"S":"...), the CRC made right
    badcount   forwarded; the answer's Count (`field` Count or ScannedCount)
               set to `value`
    skew       the proxy's clock is `skew` seconds ahead: a request whose
               X-Amz-Date is more than 300 s from it is refused with 400
               and `error` (RequestTimeTooSkewed, with a Date header of the
               proxy's clock; or InvalidSignatureException, "Signature
               expired: ... is now earlier than ...", DynamoDB's words, with
               no Date header); the others are forwarded
    tablename  ListTables: forwarded; the answer's LastEvaluatedTableName
               set to a name never sent before (with `empty`: its
               TableNames dropped; with `fresh`: TableNames a fresh name of
               its own each, LastEvaluatedTableName its last, so that only
               the count of names can end the listing)
    rename     forwarded, as a server whose names are others: each string
               of the answer (a key or a value) equal to a key of `names`
               becomes its value, and each string of the request equal to
               a value of `names` becomes its key (so the names the client
               learnt reach the real server as the real ones); with `ttl`,
               DescribeTimeToLive answered ENABLED on attribute `ttl`, not
               forwarded; with `gsi`, DescribeTable's answer gets one GSI
               more of that name, keyed on the table's sort key
    none       off

    POST /__hostile {"mode": ..., "ops": [...], ...}   resets the counters
    GET  /__hostile                                     {"requests": n,
                                                         "hostile": n,
                                                         "refused": n}

    hostile_proxy.py --upstream URL      prints its port, serves until killed
"""

import argparse
import calendar
import email.utils
import importlib.util
import io
import json
import os
import sys
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "proxy", os.path.join(HERE, "..", "faults", "proxy.py"))
proxy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(proxy)

SKEW_LIMIT = 300  # seconds: what the hostile clock tolerates


class Hostile:
    """The hostile mode and its counters (under lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.set({})

    def set(self, cfg):
        with self.lock:
            self.cfg = dict(cfg)
            self.mode = cfg.get("mode", "none")
            self.ops = set(cfg.get("ops", ["Scan", "Query"]))
            self.requests = 0
            self.hostile = 0
            self.refused = 0
            self.fresh = 0
            self.page = None

    def take(self, op):
        """The mode for a request of op ('none' if it is not ours)."""
        with self.lock:
            self.requests += 1
            if self.mode != "none" and op in self.ops:
                self.hostile += 1
                return self.mode
            return "none"

    def next_fresh(self):
        with self.lock:
            self.fresh += 1
            return self.fresh

    def stats(self):
        with self.lock:
            return {"requests": self.requests, "hostile": self.hostile,
                    "refused": self.refused}


H = Hostile()


def amz_time(t):
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t))


def rename(v, names):
    """v (parsed JSON) with every string, key or value, equal to a key of
    names replaced by its value."""
    if isinstance(v, dict):
        return {names.get(k, k): rename(x, names) for k, x in v.items()}
    if isinstance(v, list):
        return [rename(x, names) for x in v]
    if isinstance(v, str):
        return names.get(v, v)
    return v


class Handler(proxy.Handler):
    def hostile_reply(self, status, body, extra=(), chunked=False):
        if not chunked:
            self.reply(status, "OK" if status == 200 else "Bad Request", body,
                       extra)
            return
        head = ("HTTP/1.1 %d OK\r\nContent-Type: application/x-amz-json-1.0"
                "\r\nTransfer-Encoding: chunked\r\n\r\n" % status).encode()
        self.wfile.write(head)
        step = 1 << 20
        try:
            for i in range(0, len(body), step):
                part = body[i:i + step]
                self.wfile.write(b"%x\r\n" % len(part) + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def do_GET(self):
        if self.path == "/__hostile":
            self.reply(200, "OK", json.dumps(H.stats()).encode())
        else:
            super().do_GET()

    def forward(self, body):
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() not in ("host", "content-length", "connection",
                                     "expect", "accept-encoding")}
        return proxy.upstream_post(self.path, hdrs, body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.path == "/__hostile":
            H.set(json.loads(body or b"{}"))
            self.reply(200, "OK", b"{}")
            return
        op = (self.headers.get("X-Amz-Target") or "").rsplit(".", 1)[-1]
        mode = H.take(op) if self.path != "/__control" else "none"
        if mode == "none":
            # proxy.py's own handling, on the body already read
            orig = self.rfile
            self.rfile = io.BufferedReader(io.BytesIO(body))
            try:
                super().do_POST()
            finally:
                self.rfile = orig
            return
        getattr(self, "mode_" + mode)(op, body, H.cfg)

    # --- the modes ------------------------------------------------------
    def mode_bigpage(self, op, body, cfg):
        with H.lock:
            page = H.page
        if page is None:
            n = int(cfg.get("n", 1000))
            item = cfg.get("item", '{"PK":{"S":"a"}}').encode()
            page = (b'{"Count":%d,"Items":[' % n + b",".join([item] * n) +
                    b'],"ScannedCount":%d}' % n)
            with H.lock:
                H.page = page
        self.hostile_reply(200, page, chunked=bool(cfg.get("chunked")))

    def mode_freshkey(self, op, body, cfg):
        req = json.loads(body)
        if cfg.get("empty") and req.get("ExclusiveStartKey"):
            # no item would come back: not forwarded (DynamoDB Local
            # refuses a start key outside the request's segment)
            status, data = 200, b'{"Items":[],"Count":0,"ScannedCount":0}'
        else:
            status, reason, rhdrs, data = self.forward(body)
        if status != 200:
            self.reply(status, reason, data)
            return
        ans = json.loads(data)
        start = req.get("ExclusiveStartKey") or {}
        k = H.next_fresh()
        kind = cfg.get("key", "scan")
        pk = None
        for v in (req.get("ExpressionAttributeValues") or {}).values():
            pk = v  # :v0 is the partition key's value
            break
        ssk = (start.get("SK") or {}).get("S", "k")
        keys = {
            "scan": {"PK": {"S": "fresh-%d" % k}, "SK": {"S": "x"}},
            "forward": {"PK": pk, "SK": {"S": ssk + "~"}},
            "back": {"PK": pk, "SK": {"S": "a%06d" % (1000000 - k)}},
            "otherpk": {"PK": {"S": "fresh-%d" % k}, "SK": {"S": ssk + "~"}},
            "noSK": {"PK": {"S": "fresh-%d" % k}},
            "extra": {"PK": {"S": "fresh-%d" % k}, "SK": {"S": "x"},
                      "v": {"S": "y"}},
            "typeN": {"PK": {"S": "fresh-%d" % k}, "SK": {"N": "7"}},
            "outside": {"PK": pk, "SK": {"S": "zzz%06d" % k}},
        }
        ans["LastEvaluatedKey"] = keys[kind]
        if cfg.get("empty"):
            ans["Items"] = []
            ans["Count"] = 0
            ans["ScannedCount"] = 0
        self.reply(200, "OK", json.dumps(ans).encode())

    def mode_badutf8(self, op, body, cfg):
        status, reason, rhdrs, data = self.forward(body)
        at = data.find(b'{"S":"') if status == 200 else -1
        if at >= 0:
            at += len(b'{"S":"')
            data = data[:at] + b"\xff" + data[at:]
        self.reply(status, reason, data)

    def mode_tablename(self, op, body, cfg):
        status, reason, rhdrs, data = self.forward(body)
        if status != 200:
            self.reply(status, reason, data)
            return
        ans = json.loads(data)
        k = H.next_fresh()
        if cfg.get("fresh"):
            # 100 names a page, each new and in order: a lister for ever
            ans["TableNames"] = ["zfresh%09d" % (k * 100 + i) for i in range(100)]
            ans["LastEvaluatedTableName"] = ans["TableNames"][-1]
        else:
            if cfg.get("empty"):
                ans["TableNames"] = []
            ans["LastEvaluatedTableName"] = "zfresh%09d" % k
        self.reply(200, "OK", json.dumps(ans).encode())

    def mode_rename(self, op, body, cfg):
        names = cfg.get("names", {})
        back = {v: k for k, v in names.items()}
        if op == "DescribeTimeToLive" and cfg.get("ttl"):
            ans = {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED",
                                             "AttributeName": cfg["ttl"]}}
            self.reply(200, "OK", json.dumps(ans).encode())
            return
        status, reason, rhdrs, data = self.forward(
            json.dumps(rename(json.loads(body or b"{}"), back)).encode())
        if status == 200:
            ans = rename(json.loads(data), names)
            t = ans.get("Table")
            if op == "DescribeTable" and cfg.get("gsi") and t:
                sk = t["KeySchema"][-1]["AttributeName"]
                t.setdefault("GlobalSecondaryIndexes", []).append({
                    "IndexName": cfg["gsi"], "IndexStatus": "ACTIVE",
                    "KeySchema": [{"AttributeName": sk, "KeyType": "HASH"}],
                    "Projection": {"ProjectionType": "ALL"}})
            data = json.dumps(ans).encode()
        self.reply(status, reason, data)

    def mode_batchextra(self, op, body, cfg):
        status, reason, rhdrs, data = self.forward(body)
        if status != 200:
            self.reply(status, reason, data)
            return
        ans = json.loads(data)
        for items in ans.get("Responses", {}).values():
            if cfg.get("how") == "twice" and items:
                items[-1:] = [items[0]]   # one key twice, one left out
            else:
                items.append({"PK": {"S": "never"}, "SK": {"S": "asked"}})
                if cfg.get("how") == "replace":
                    del items[0]
        self.reply(200, "OK", json.dumps(ans).encode())

    def mode_batchbig(self, op, body, cfg):
        req = json.loads(body)
        keys = sum(len(v.get("Keys", []))
                   for v in req.get("RequestItems", {}).values())
        if keys > int(cfg.get("most", 1)):
            with H.lock:
                H.refused += 1
            self.send_raw(200, "OK",
                          [("Content-Type", "application/x-amz-json-1.0"),
                           ("Content-Length", str(65 * 1024 * 1024))],
                          b"{", cut=1)
            return
        status, reason, rhdrs, data = self.forward(body)
        self.reply(status, reason, data)

    def mode_errtext(self, op, body, cfg):
        pad = int(cfg.get("pad", 100 * 1024))
        msg = ("bad\x1b[2J\x1b]0;owned\x07 \rline\x1b[31mred\x9b "
               "\u202eevil\u202c " + "x" * pad)
        raw = json.dumps({"__type": "com.amazon.coral.validate#"
                                    "ValidationException",
                          "message": msg}).encode()
        # bytes that are no UTF-8, inside the JSON string
        raw = raw.replace(b"bad", b"bad\xff\xfe\xc3", 1)
        self.reply(400, "Bad Request", raw)

    def mode_badcount(self, op, body, cfg):
        status, reason, rhdrs, data = self.forward(body)
        if status != 200:
            self.reply(status, reason, data)
            return
        ans = json.loads(data)
        ans[cfg.get("field", "Count")] = cfg.get("value", -5)
        self.reply(200, "OK", json.dumps(ans).encode())

    def mode_skew(self, op, body, cfg):
        now = time.time() + float(cfg.get("skew", 3600))
        sent = self.headers.get("X-Amz-Date") or ""
        try:
            t = calendar.timegm(time.strptime(sent, "%Y%m%dT%H%M%SZ"))
        except ValueError:
            t = 0
        if abs(t - now) > SKEW_LIMIT:
            with H.lock:
                H.refused += 1
            if cfg.get("error") == "InvalidSignatureException":
                msg = ("Signature expired: %s is now earlier than %s "
                       "(%s - 5 min.)" % (sent, amz_time(now - SKEW_LIMIT),
                                          amz_time(now)))
                err = {"__type": "com.amazon.coral.service#"
                                 "InvalidSignatureException", "message": msg}
                self.reply(400, "Bad Request", json.dumps(err).encode())
            else:
                err = {"__type": "com.amazon.coral.service#"
                                 "RequestTimeTooSkewed",
                       "message": "The difference between the request time "
                                  "and the current time is too large."}
                self.reply(400, "Bad Request", json.dumps(err).encode(),
                           [("Date", email.utils.formatdate(now,
                                                            usegmt=True))])
            return
        status, reason, rhdrs, data = self.forward(body)
        out = [(k, v) for k, v in rhdrs
               if k.lower() not in ("content-length", "x-amz-crc32",
                                    "connection", "transfer-encoding",
                                    "date")]
        out.append(("Date", email.utils.formatdate(now, usegmt=True)))
        out.append(("Content-Length", str(len(data))))
        out.append(("x-amz-crc32", str(zlib.crc32(data) & 0xffffffff)))
        self.send_raw(status, reason, out, data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    proxy.UPSTREAM = a.upstream
    srv = proxy.Server(("127.0.0.1", a.port), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
