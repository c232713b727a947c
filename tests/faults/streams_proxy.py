#!/usr/bin/env python3
"""tests/faults/proxy.py in front of DynamoDB Local, with the faults of a
DynamoDB Stream (suite 62).  Every request goes through proxy.py's
handler (its /__control faults, /__stats counts) except when a stream
fault below is armed:

    expired   the next `count` GetRecords: 400 ExpiredIteratorException
    trimmed   the next `count` GetRecords: 400 TrimmedDataAccessException
    limit     the next `count` GetRecords (count -1: every one): 400
              LimitExceededException (a throttling answer)
    shardend  the next GetRecords is forwarded and its NextShardIterator
              dropped (the shard ended); from then on DescribeStream shows
              that shard closed (an EndingSequenceNumber) with one child,
              "<id>-child", whose GetShardIterator goes to the real shard
              (at TRIM_HORIZON: its records are read again, which only
              retires entries)

    POST /__streams {"fault": "expired|trimmed|limit|shardend|none",
                     "count": 1}
    GET  /__streams {"fault": ..., "count": left, "injected": {fault: n},
                     "child_iterators": n}

    streams_proxy.py --upstream URL     prints its port, serves until killed
"""
import argparse
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proxy  # noqa: E402

ERRORS = {"expired": "ExpiredIteratorException",
          "trimmed": "TrimmedDataAccessException",
          "limit": "LimitExceededException"}


class Streams:
    def __init__(self):
        self.lock = threading.Lock()
        self.fault, self.count = "none", 0
        self.injected = {}
        self.ended = set()  # shards made to end
        self.child_iterators = 0

    def take(self):
        """The fault for this GetRecords, if any."""
        with self.lock:
            if self.fault == "none" or self.count == 0:
                return None
            if self.count > 0:
                self.count -= 1
            self.injected[self.fault] = self.injected.get(self.fault, 0) + 1
            return self.fault


S = Streams()


class Handler(proxy.Handler):
    def do_GET(self):
        if self.path == "/__streams":
            with S.lock:
                body = {"fault": S.fault, "count": S.count,
                        "injected": dict(S.injected),
                        "child_iterators": S.child_iterators}
            self.reply(200, "OK", json.dumps(body).encode())
            return
        super().do_GET()

    def do_POST(self):
        if self.path == "/__streams":
            n = int(self.headers.get("Content-Length") or 0)
            cfg = json.loads(self.rfile.read(n) or b"{}")
            with S.lock:
                S.fault = cfg.get("fault", "none")
                S.count = int(cfg.get("count", 1))
            self.reply(200, "OK", b"{}")
            return
        super().do_POST()

    def forward(self, body):
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() not in ("host", "content-length", "connection",
                                     "expect", "accept-encoding")}
        return proxy.upstream_post(self.path, hdrs, body)

    def answer(self, status, reason, data):
        self.reply(status, reason, data)

    def serve(self, op, body):
        if op == "GetRecords":
            f = S.take()
            if f in ERRORS:
                msg = {"__type": proxy.PREFIX + ERRORS[f],
                       "message": "%s (injected)" % ERRORS[f]}
                self.reply(400, "Bad Request", json.dumps(msg).encode())
                return
            if f == "shardend":
                status, reason, _, data = self.forward(body)
                ans = json.loads(data)
                if status == 200:
                    ans.pop("NextShardIterator", None)
                    with S.lock:
                        S.ended.add("*")
                self.answer(status, reason, json.dumps(ans).encode())
                return
        if op == "DescribeStream" and S.ended:
            status, reason, _, data = self.forward(body)
            ans = json.loads(data)
            if status == 200:
                shards = ans["StreamDescription"].get("Shards", [])
                extra = []
                for sh in shards:
                    if sh["ShardId"].endswith("-child"):
                        continue
                    rng = sh.setdefault("SequenceNumberRange", {})
                    rng.setdefault("EndingSequenceNumber",
                                   "9" * 21)
                    extra.append({
                        "ShardId": sh["ShardId"] + "-child",
                        "ParentShardId": sh["ShardId"],
                        "SequenceNumberRange": {
                            "StartingSequenceNumber": "1"}})
                ans["StreamDescription"]["Shards"] = shards + extra
            self.answer(status, reason, json.dumps(ans).encode())
            return
        if op == "GetShardIterator":
            req = json.loads(body)
            if req.get("ShardId", "").endswith("-child"):
                req["ShardId"] = req["ShardId"][:-len("-child")]
                with S.lock:
                    S.child_iterators += 1
                body = json.dumps(req).encode()
        super().serve(op, body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    a = ap.parse_args()
    proxy.UPSTREAM = a.upstream
    srv = proxy.Server(("127.0.0.1", 0), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
