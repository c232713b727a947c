#!/usr/bin/env python3
"""SigV4: our Authorization header against botocore's, byte for byte.

The extension signs with its own signer (client/sigv4.c), with the clock
of each attempt.  To compare with botocore at a fixed clock, every request
the extension sends goes through tests/faults/proxy.py, which records it
(method, path, headers in order, body bytes) on its way to DynamoDB Local.
For each recorded request, botocore's SigV4Auth signs the same method, URL
(127.0.0.1 on the proxy's non-default port), body bytes and headers, with
its clock fixed to the X-Amz-Date that the extension sent; the two
Authorization headers must be identical.

Covered: a session token (x-amz-security-token signed and sent), bodies
with non-ASCII UTF-8 (keys, names and values in several scripts and an
emoji), a non-default port in Host, every operation the statements below
make, credentials without a token, and an endpoint spelled oddly (the
scheme in capitals, a path with a dot segment and trailing slashes:
what is signed is the path curl sends, "/v1/", from the one parse of the
endpoint).  A control checks that the comparison notices a changed byte.

Needs AWS_ENDPOINT_URL_DYNAMODB.  Prints TAP lines.
"""

import base64
import datetime
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

import botocore.auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

# headers curl adds on its own (not signed), or that botocore sets itself
TRANSPORT = {"host", "content-length", "accept", "user-agent", "expect",
             "accept-encoding", "connection", "authorization", "x-amz-date",
             "x-amz-security-token"}
REGION = "eu-central-1"
TABLE = "Sig22"

SQL = """.bail off
.headers off
.load {ext}
CREATE VIRTUAL TABLE t USING dynamodb(table='{table}', endpoint='{endpoint}', region={region}, item_ttl=0, query_ttl=0);
INSERT INTO t(PK, SK, item) VALUES ('clé-ü', '日本語', '{{"name":"Zoë 😀","note":"€ ß Ω ж"}}');
INSERT INTO t(PK, SK, item) VALUES ('clé-ü', 'b', '{{"ğ":1}}');
SELECT PK, SK, json_extract(item, '$.name') FROM t WHERE PK = 'clé-ü' AND SK = '日本語';
SELECT count(*) FROM t WHERE PK = 'clé-ü';
SELECT count(*) FROM t WHERE PK = 'clé-ü' AND SK IN ('日本語', 'b', 'ø');
UPDATE t SET item = json_set(item, '$.note', 'naïve café') WHERE PK = 'clé-ü' AND SK = 'b';
BEGIN;
INSERT INTO t(PK, SK, item) VALUES ('clé-ü', 'c', '{{"v":"🙂"}}');
DELETE FROM t WHERE PK = 'clé-ü' AND SK = 'b';
COMMIT;
SELECT count(*) FROM t;
DELETE FROM t WHERE PK = 'clé-ü' AND SK = 'c';
"""


def run(ext, endpoint, env):
    e = dict(os.environ)
    e.update(env)
    preload.sqlite3_env(e)
    script = SQL.format(ext=ext, table=TABLE, endpoint=endpoint, region=REGION)
    p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                       input=script, capture_output=True, text=True, env=e,
                       cwd=ROOT, timeout=120)
    return p.stdout + p.stderr


def botocore_auth(rec, port, ak, sk, token, body=None):
    """botocore's Authorization for the recorded request rec."""
    hdrs = rec["headers"]
    dates = [v for k, v in hdrs if k.lower() == "x-amz-date"]
    fixed = datetime.datetime.strptime(dates[0], "%Y%m%dT%H%M%SZ")
    botocore.auth.get_current_datetime = lambda *a, **k: fixed
    data = base64.b64decode(rec["body"]) if body is None else body
    req = AWSRequest(method=rec["method"],
                     url="http://127.0.0.1:%d%s" % (port, rec["path"]),
                     data=data,
                     headers={k: v for k, v in hdrs
                              if k.lower() not in TRANSPORT})
    botocore.auth.SigV4Auth(Credentials(ak, sk, token), "dynamodb",
                            REGION).add_auth(req)
    return req.headers["Authorization"], req.headers.get(
        "X-Amz-Security-Token")


def main():
    upstream = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not upstream:
        print("1..0 # SKIP AWS_ENDPOINT_URL_DYNAMODB not set")
        return 0
    ext = os.environ.get("DDB_EXT", "build/dynamodb")
    client = fixtures.connect()
    t = Tap("sigv4 ")
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "requests.jsonl")
        proxy = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tests/faults/proxy.py"),
             "--upstream", upstream, "--log", log],
            stdout=subprocess.PIPE, text=True)
        try:
            port = int(proxy.stdout.readline())
            # title, credentials, the endpoint, the path it sends to
            plain = "http://127.0.0.1:%d" % port
            cases = [
                ("with a session token", "AKIDSIG22TOKEN",
                 "wJalr/XUtnFE+MI/K7MDENG/bPxRfiCY", "FwoGZXIvYXdzE//tok+en=",
                 plain, "/"),
                ("without a session token", "AKIDSIG22",
                 "s3cr3t/k3y+with/slashes", None, plain, "/"),
                ("endpoint HTTP://.../a/../v1//", "AKIDSIG22PATH",
                 "pa/th+k3y", None,
                 "HTTP://127.0.0.1:%d/a/../v1//" % port, "/v1/"),
            ]
            for title, ak, sk, token, endpoint, want_path in cases:
                fixtures.drop_table(client, TABLE)
                fixtures.create_table(client, TABLE, "PK", "SK")
                open(log, "w").close()
                env = {"AWS_ACCESS_KEY_ID": ak, "AWS_SECRET_ACCESS_KEY": sk,
                       "AWS_SESSION_TOKEN": token or ""}
                out = run(ext, endpoint, env)
                if "error" in out.lower():
                    t.ok(False, "%s: the statements ran" % title, out)
                    continue
                with open(log) as f:
                    recs = [json.loads(line) for line in f]
                seen = set()
                for rec in recs:
                    hd = {k.lower(): v for k, v in rec["headers"]}
                    op = hd.get("x-amz-target", "?").rsplit(".", 1)[-1]
                    body = base64.b64decode(rec["body"])
                    ours = hd.get("authorization")
                    theirs, tok = botocore_auth(rec, port, ak, sk, token)
                    diag = []
                    if ours != theirs:
                        diag.append("ours:     %s" % ours)
                        diag.append("botocore: %s" % theirs)
                    if sum(1 for k, _ in rec["headers"]
                           if k.lower() == "x-amz-date") != 1:
                        diag.append("X-Amz-Date sent more than once")
                    if hd.get("x-amz-security-token") != tok:
                        diag.append("x-amz-security-token: %r, want %r"
                                    % (hd.get("x-amz-security-token"), tok))
                    if hd.get("host") != "127.0.0.1:%d" % port:
                        diag.append("Host: %r" % hd.get("host"))
                    if rec["path"] != want_path:
                        diag.append("path %r, want %r"
                                    % (rec["path"], want_path))
                    non_ascii = any(b > 127 for b in body)
                    key = (op, non_ascii)
                    if key in seen and not diag:
                        continue
                    seen.add(key)
                    t.ok(not diag, "%s: %s%s, port %d, path %s, %d-byte body: "
                         "Authorization identical to botocore's"
                         % (title, op, " (non-ASCII body)" if non_ascii else "",
                            port, rec["path"], len(body)), diag)
                # control: botocore on a body with one byte changed differs
                rec = next(r for r in recs
                           if any(b > 127 for b in base64.b64decode(r["body"])))
                body = bytearray(base64.b64decode(rec["body"]))
                body[-2] ^= 1
                changed, _ = botocore_auth(rec, port, ak, sk, token,
                                           bytes(body))
                hd = {k.lower(): v for k, v in rec["headers"]}
                t.ok(changed != hd.get("authorization"), "%s: control, one "
                     "changed body byte changes botocore's signature" % title)
        finally:
            proxy.kill()
            proxy.wait()
    fixtures.drop_table(client, TABLE)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
