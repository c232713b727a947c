#!/usr/bin/env python3
"""Credentials, endpoints, TLS and bad answers, end to end in sqlite3.

Every statement goes through tests/faults/proxy.py (which records the
access key id of each request's signature) to DynamoDB Local.  A fake
metadata server on a thread of this script plays the container
credentials endpoint and EC2's IMDSv2; a shell script plays a
credential_process.  Checked:

  * credential_process, container credentials and IMDSv2 sign requests,
    and dynamodb_info() says where the credentials came from;
  * temporary credentials: a credential_process handing out credentials
    good for 4 minutes runs at most twice for 52 requests; one returning
    expired credentials signs nothing and the error names it and the
    expiry; container credentials are used while valid, fetched again at
    most once a minute, fetched again once expired (never signing with
    the expired ones), and an expired set that cannot be refreshed fails
    the statement with an error naming the source and the expiry;
  * AWS_CONTAINER_CREDENTIALS_FULL_URI is checked on the host libcurl
    connects to (http://127.0.0.1:1@evil.localhost:PORT/ is refused, and
    nothing reaches the listener behind evil.localhost);
  * sqlite3's interrupt() stops a slow credential_process (making the
    client, refreshing, CREATE VIRTUAL TABLE), killing it and what it
    started, and CREATE VIRTUAL TABLE's DescribeTable that gets no answer
    (tests/faults/creds_interrupt.py, Debian's /usr/bin/python3);
  * with nothing configured, the error lists what was tried;
  * a missing table's error names it, the endpoint and the region, at
    CREATE VIRTUAL TABLE and at the first read of a table dropped since;
  * https verifies the certificate (a self-signed one is refused, with a
    hint), and ca_bundle= or AWS_CA_BUNDLE trusts it;
  * the endpoint from the config file's services section;
  * malformed, mis-shaped and oversized answers end in one-line errors;
  * a dead endpoint fails within the timeout.

Needs AWS_ENDPOINT_URL_DYNAMODB.  Prints TAP lines.
"""

import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
import fixtures  # noqa: E402
from tap import Tap  # noqa: E402

TABLE = "Creds21"


class Meta:
    """What the fake metadata server hands out."""
    lock = threading.Lock()
    ttl = 3600          # seconds until the credentials it gives expire
    fail_after = None   # fetches after which it answers 500
    fetches = 0
    auth = None         # the Authorization header of the last fetch
    prefix = "AKIDCONT"


def creds_json(prefix, n, ttl):
    exp = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=ttl)
    return json.dumps({
        "Code": "Success", "AccessKeyId": "%s%d" % (prefix, n),
        "SecretAccessKey": "metasecret%d" % n, "Token": "metatoken%d" % n,
        "Expiration": exp.strftime("%Y-%m-%dT%H:%M:%SZ")}).encode()


class MetaHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, body):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        if self.path == "/latest/api/token" and \
                self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            self.answer(200, b"imdstoken")
        else:
            self.answer(403, b"")

    def do_GET(self):
        p = self.path
        if p.startswith("/latest/meta-data/iam/security-credentials/"):
            if self.headers.get("X-aws-ec2-metadata-token") != "imdstoken":
                self.answer(401, b"")
            elif p.endswith("/"):
                self.answer(200, b"role-21\n")
            else:
                self.serve_creds("AKIDIMDS")
            return
        if p == "/container":
            with Meta.lock:
                Meta.auth = self.headers.get("Authorization")
            self.serve_creds(Meta.prefix)
            return
        self.answer(404, b"")

    def serve_creds(self, prefix):
        with Meta.lock:
            Meta.fetches += 1
            n = Meta.fetches
            fail = Meta.fail_after is not None and n > Meta.fail_after
            ttl = Meta.ttl
        if fail:
            self.answer(500, b"no")
        else:
            self.answer(200, creds_json(prefix, n, ttl))


def meta_reset(ttl=3600, fail_after=None):
    with Meta.lock:
        Meta.ttl = ttl
        Meta.fail_after = fail_after
        Meta.fetches = 0
        Meta.auth = None


class Env:
    def __init__(self, tmp, ext, proxy_port):
        self.tmp = tmp
        self.ext = ext
        self.port = proxy_port
        self.config = os.path.join(tmp, "config")
        self.creds = os.path.join(tmp, "credentials")
        self.log = os.path.join(tmp, "requests.jsonl")

    def base(self):
        """A clean environment: no credentials anywhere, IMDS off."""
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("AWS_")}
        e.update({"AWS_REGION": "us-east-1",
                  "AWS_CONFIG_FILE": self.config,
                  "AWS_SHARED_CREDENTIALS_FILE": self.creds,
                  "AWS_EC2_METADATA_DISABLED": "true",
                  "HOME": self.tmp})
        preload.sqlite3_env(e)
        return e

    def sql(self, body, env, opts="", endpoint=None, timeout=60):
        """Run body after CREATE VIRTUAL TABLE t; (output, seconds)."""
        ep = endpoint if endpoint is not None else \
            "http://127.0.0.1:%d" % self.port
        script = (".bail off\n.headers off\n.load %s\n"
                  "CREATE VIRTUAL TABLE t USING dynamodb(table=%s%s%s, "
                  "item_ttl=0, query_ttl=0);\n%s\n"
                  % (self.ext, TABLE,
                     (", endpoint='%s'" % ep) if ep else "", opts, body))
        t0 = time.monotonic()
        p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                           input=script, capture_output=True, text=True,
                           env=env, cwd=ROOT, timeout=timeout)
        out = p.stdout + p.stderr
        out = re.sub(r"^(Runtime|Parse) error near line \d+:",
                     r"\1 error:", out, flags=re.M)
        return out.strip(), time.monotonic() - t0

    def key_ids(self):
        """The access key ids of the recorded requests, in order."""
        ids = []
        with open(self.log) as f:
            for line in f:
                rec = json.loads(line)
                for k, v in rec["headers"]:
                    if k.lower() == "authorization":
                        m = re.search(r"Credential=([^/]+)/", v)
                        ids.append(m.group(1) if m else "?")
        open(self.log, "w").close()
        return ids


def start_proxy(upstream, log=None, cert=None, key=None):
    cmd = [sys.executable, os.path.join(ROOT, "tests/faults/proxy.py"),
           "--upstream", upstream]
    if log:
        cmd += ["--log", log]
    if cert:
        cmd += ["--cert", cert, "--key", key]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def control(port, **cfg):
    req = urllib.request.Request("http://127.0.0.1:%d/__control" % port,
                                 data=json.dumps(cfg).encode(),
                                 method="POST")
    urllib.request.urlopen(req, timeout=10).read()


def main():
    upstream = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not upstream:
        print("1..0 # SKIP AWS_ENDPOINT_URL_DYNAMODB not set")
        return 0
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    os.environ.setdefault("AWS_REGION", "us-east-1")
    ext = os.path.abspath(os.path.join(
        ROOT, os.environ.get("DDB_EXT", "build/dynamodb")))
    client = fixtures.connect()
    fixtures.lesson(client, TABLE)
    t = Tap("creds: ")
    meta = ThreadingHTTPServer(("127.0.0.1", 0), MetaHandler)
    meta.daemon_threads = True
    threading.Thread(target=meta.serve_forever, daemon=True).start()
    meta_url = "http://127.0.0.1:%d" % meta.server_address[1]
    tmp = tempfile.mkdtemp(prefix="ddb-creds21-")
    procs = []
    try:
        log = os.path.join(tmp, "requests.jsonl")
        open(log, "w").close()
        proxy, port = start_proxy(upstream, log=log)
        procs.append(proxy)
        env = Env(tmp, ext, port)
        q = "SELECT count(*) FROM t WHERE PK = 'CUSTOMER#alice';"
        info = "SELECT json_extract(dynamodb_info('t'), '$.credentials');"

        # -- credential_process ------------------------------------------
        script = os.path.join(tmp, "proc.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\ncat <<'EOF'\n{\"Version\": 1, "
                    "\"AccessKeyId\": \"AKIDPROC\", \"SecretAccessKey\": "
                    "\"procsecret\", \"SessionToken\": \"proctoken\"}\n"
                    "EOF\n")
        os.chmod(script, 0o700)
        with open(env.config, "w") as f:
            f.write("[profile proc]\ncredential_process = %s\n" % script)
        open(env.creds, "w").close()
        env.key_ids()
        out, _ = env.sql(q + "\n" + info, env.base(), ", profile=proc")
        ids = env.key_ids()
        t.ok(out == "4\ncredential_process of profile 'proc'" and ids
             and all(i == "AKIDPROC" for i in ids),
             "credential_process signs the requests", (out, ids))

        # -- a credential_process of short-lived credentials: not run on
        # every request (51 requests: one run, at most one refresh) --------
        counter = os.path.join(tmp, "runs")
        short = os.path.join(tmp, "short.sh")
        with open(short, "w") as f:
            f.write("#!/bin/sh\necho run >> '%s'\n"
                    "n=$(wc -l < '%s')\n"
                    "exp=$(date -u -d \"@$(( $(date +%%s) + %s ))\" "
                    "+%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
                    "printf '{\"Version\": 1, \"AccessKeyId\": "
                    "\"AKIDSHORT%%s\", \"SecretAccessKey\": \"s\", "
                    "\"SessionToken\": \"t\", \"Expiration\": \"%%s\"}' "
                    "\"$n\" \"$exp\"\n"
                    % (counter, counter, "${TTL:-240}"))
        os.chmod(short, 0o700)
        with open(env.config, "w") as f:
            f.write("[profile short]\ncredential_process = %s\n" % short)
        get = ("SELECT count(*) FROM t WHERE PK = 'CUSTOMER#alice' AND "
               "SK = 'PROFILE';")
        env.key_ids()
        out, _ = env.sql("\n".join([get] * 51), env.base(), ", profile=short")
        ids = env.key_ids()
        with open(counter) as f:
            runs = len(f.readlines())
        t.ok(out == "\n".join(["1"] * 51) and len(ids) == 52 and
             runs <= 2 and all(i.startswith("AKIDSHORT") for i in ids),
             "a credential_process whose credentials expire in 4 minutes "
             "runs %d time(s) for 52 requests, not once a request"
             % runs, (out[-200:], runs, len(ids)))
        # already expired: never used to sign; the error names the source
        # and the expiry
        os.unlink(counter)
        e = env.base()
        e["TTL"] = "-3600"
        out, _ = env.sql(get, e, ", profile=short")
        ids = env.key_ids()
        m = re.match(r"Runtime error: dynamodb: table '%s': credential_process "
                     r"of profile 'short' returned credentials that expired "
                     r"at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\n" % TABLE,
                     out + "\n")
        t.ok(m and not ids and len(out.splitlines()) <= 2,
             "a credential_process that returns expired credentials: "
             "nothing is signed with them, the error names the source and "
             "the expiry", (out, ids))
        open(env.config, "w").close()

        # -- container credentials, refreshed before they expire -----------
        e = env.base()
        e["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = meta_url + "/container"
        e["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "Basic c2VjcmV0"
        meta_reset(ttl=120)
        out, _ = env.sql("\n".join([q] * 3 + [info]), e)
        ids = env.key_ids()
        t.ok(out == "4\n4\n4\ncontainer credentials"
             and Meta.auth == "Basic c2VjcmV0"
             and 1 <= Meta.fetches <= 2 and set(ids) <= {"AKIDCONT1",
                                                          "AKIDCONT2"},
             "container credentials 2 minutes from expiry are used while "
             "valid, fetched again at most once a minute",
             (out, Meta.fetches, ids))
        meta_reset(ttl=3600)
        out, _ = env.sql("\n".join([q] * 3), e)
        ids = env.key_ids()
        t.ok(out == "4\n4\n4" and Meta.fetches == 1 and
             set(ids) == {"AKIDCONT1"},
             "container credentials an hour from expiry are not fetched "
             "again", (out, Meta.fetches, ids))
        # expired while in use: fetched again before the next request
        meta_reset(ttl=2)
        out, _ = env.sql(q + "\n.shell sleep 3\n" + q, e)
        ids = env.key_ids()
        t.ok(out == "4\n4" and Meta.fetches == 2 and
             ids == ["AKIDCONT1", "AKIDCONT1", "AKIDCONT2"],
             "credentials that expired are fetched again, and the old "
             "ones are not used after their expiry", (out, Meta.fetches,
                                                      ids))
        meta_reset(ttl=2, fail_after=1)
        out, _ = env.sql(q + "\n.shell sleep 3\n" + q, e)
        ids = env.key_ids()
        t.ok(re.match(
             r"4\nRuntime error: dynamodb: the credentials "
             r"from container credentials expired at "
             r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ and could not be "
             r"refreshed: container credentials \(%s/container\): "
             r"HTTP 500$" % re.escape(meta_url), out) and
             ids and all(i == "AKIDCONT1" for i in ids),
             "expired credentials that cannot be refreshed fail the "
             "statement, naming the source and the expiry", (out, ids))
        # the host curl connects to is checked: user:password@ is not a
        # loopback host (evil.localhost resolves to 127.0.0.1 here, so a
        # request would reach this server, and the token with it)
        meta_reset(ttl=3600)
        port_m = meta.server_address[1]
        for url, host in [
                ("http://127.0.0.1:1@evil.localhost:%d/container" % port_m,
                 "evil.localhost"),
                ("http://evil.localhost:%d/container" % port_m,
                 "evil.localhost")]:
            meta_reset(ttl=3600)
            e2 = dict(e)
            e2["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = url
            out, _ = env.sql(q, e2)
            t.ok(out.startswith("Runtime error: dynamodb: table '%s': "
                                "AWS_CONTAINER_CREDENTIALS_FULL_URI"
                                % TABLE) and
                 "host '%s'" % host in out and Meta.fetches == 0 and
                 Meta.auth is None,
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI %s is refused before "
                 "any connection (the token goes nowhere)" % url,
                 (out, Meta.fetches, Meta.auth))
        env.key_ids()

        # -- interrupt() stops a slow credential_process (Debian's python3,
        # tests/faults/creds_interrupt.py) --------------------------------
        pydeb = "/usr/bin/python3"
        idir = os.path.join(tmp, "interrupt")
        os.mkdir(idir)
        slow = os.path.join(idir, "slow.sh")
        with open(slow, "w") as f:
            f.write("#!/bin/sh\nd='%s'\n"
                    "if [ -e \"$d/slow\" ]; then\n"
                    "  sleep 40 & echo $$ $! > \"$d/pids\"; wait\nfi\n"
                    "exp=$(date -u -d \"@$(( $(date +%%s) + $(cat \"$d/ttl\") "
                    "))\" +%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
                    "printf '{\"Version\": 1, \"AccessKeyId\": \"AKIDSLOW\", "
                    "\"SecretAccessKey\": \"s\", \"Expiration\": \"%%s\"}' "
                    "\"$exp\"\n" % idir)
        os.chmod(slow, 0o700)
        with open(env.config, "w") as f:
            f.write("[profile slow]\ncredential_process = %s\n" % slow)
        can_load = subprocess.run(
            [pydeb, "-c", "import sqlite3; sqlite3.connect(':memory:')"
             ".enable_load_extension(True)"], capture_output=True)
        if os.path.exists(pydeb) and can_load.returncode == 0:
            e = env.base()
            preload.python_env(e)
            p = subprocess.run(
                [pydeb, os.path.join(ROOT, "tests/faults/creds_interrupt.py"),
                 ext, "http://127.0.0.1:%d" % port, TABLE, idir],
                capture_output=True, text=True, env=e, timeout=300)
            lines = [ln for ln in p.stdout.splitlines()
                     if re.match(r"(not )?ok \d+ - ", ln)]
            for ln in lines:
                m = re.match(r"(not ok|ok) \d+ - creds: (.*)", ln)
                t.ok(m.group(1) == "ok", m.group(2), p.stdout + p.stderr)
            if len(lines) != 4:
                t.ok(False, "creds_interrupt.py ran", p.stdout + p.stderr)
        else:
            for name in ("making the client", "refreshing",
                         "CREATE VIRTUAL TABLE", "CREATE's DescribeTable"):
                t.skip("interrupt() stops a slow credential_process (%s)"
                       % name, "%s cannot load extensions" % pydeb)
        open(env.config, "w").close()
        env.key_ids()

        # -- IMDSv2 --------------------------------------------------------
        e = env.base()
        del e["AWS_EC2_METADATA_DISABLED"]
        e["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = meta_url
        meta_reset(ttl=3600)
        out, _ = env.sql(q + "\n" + info, e)
        ids = env.key_ids()
        t.ok(out == "4\ninstance metadata (IMDSv2)" and ids and
             all(i.startswith("AKIDIMDS") for i in ids),
             "IMDSv2 (token, role, credentials) signs the requests",
             (out, ids))

        # -- nothing -------------------------------------------------------
        out, _ = env.sql(q, env.base())
        t.ok(out == "Runtime error: dynamodb: table '%s': no credentials: "
             "tried AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; the shared "
             "credentials and config files (profile 'default'); container "
             "credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/FULL_URI "
             "not set); instance metadata (AWS_EC2_METADATA_DISABLED=true)"
             "\nParse error: no such table: t" % TABLE,
             "no credentials: the error lists what was tried", out)

        # -- a missing table: the error names it, the endpoint, the region
        e = env.base()
        e.update({"AWS_ACCESS_KEY_ID": "AKIDMISS",
                  "AWS_SECRET_ACCESS_KEY": "s", "AWS_REGION": "eu-west-2"})
        ep = "http://127.0.0.1:%d" % port
        script = (".bail off\n.load %s\n"
                  "CREATE VIRTUAL TABLE m USING dynamodb(table=Missing21, "
                  "endpoint='%s');\n"
                  ".shell env -u LD_PRELOAD python3 tests/harness/fixtures.py "
                  "lesson Gone21\n"
                  "CREATE VIRTUAL TABLE g USING dynamodb(table=Gone21, "
                  "endpoint='%s', item_ttl=0, query_ttl=0);\n"
                  ".shell env -u LD_PRELOAD python3 tests/harness/fixtures.py "
                  "drop Gone21\n"
                  "SELECT count(*) FROM g WHERE PK = 'CUSTOMER#alice';\n"
                  % (ext, ep, ep))
        e2 = dict(e)
        e2["AWS_ENDPOINT_URL_DYNAMODB"] = upstream
        p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                           input=script, capture_output=True, text=True,
                           env=e2, cwd=ROOT, timeout=120)
        out = re.sub(r"^(Runtime|Parse) error near line \d+:", r"\1 error:",
                     p.stdout + p.stderr, flags=re.M).splitlines()
        for i, (table, when) in enumerate([("Missing21",
                                            "CREATE VIRTUAL TABLE"),
                                           ("Gone21", "its first read")]):
            want = ("Runtime error: dynamodb: table '%s' not found at %s in "
                    "region eu-west-2 (ResourceNotFoundException: "
                    % (table, ep))
            t.ok(len(out) == 2 and out[i].startswith(want),
                 "a missing table: the error of %s names the table, the "
                 "endpoint and the region" % when, "\n".join(out))
        env.key_ids()

        # -- the endpoint from the config file's services section ----------
        e = env.base()
        e.update({"AWS_ACCESS_KEY_ID": "AKIDSVC",
                  "AWS_SECRET_ACCESS_KEY": "s"})
        with open(env.config, "w") as f:
            f.write("[default]\nservices = local-ddb\n"
                    "[services local-ddb]\ndynamodb =\n"
                    "  endpoint_url = http://127.0.0.1:%d\n" % port)
        out, _ = env.sql(q + "\nSELECT json_extract(dynamodb_info('t'), "
                         "'$.endpoint');", e, endpoint="")
        t.ok(out == "4\nhttp://127.0.0.1:%d" % port and
             set(env.key_ids()) == {"AKIDSVC"},
             "endpoint_url of the services section's dynamodb entry", out)
        open(env.config, "w").close()

        # -- TLS -----------------------------------------------------------
        if shutil.which("openssl"):
            cert = os.path.join(tmp, "cert.pem")
            key = os.path.join(tmp, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                            "-nodes", "-keyout", key, "-out", cert, "-days",
                            "2", "-subj", "/CN=127.0.0.1", "-addext",
                            "subjectAltName=IP:127.0.0.1"],
                           check=True, capture_output=True)
            tls, tport = start_proxy(upstream, cert=cert, key=key)
            procs.append(tls)
            e = env.base()
            e.update({"AWS_ACCESS_KEY_ID": "AKIDTLS",
                      "AWS_SECRET_ACCESS_KEY": "s"})
            ep = "https://127.0.0.1:%d" % tport
            out, secs = env.sql(q, e, endpoint=ep)
            t.ok(out.startswith(
                "Runtime error: dynamodb: table '%s': DescribeTable to %s "
                "failed: SSL peer certificate or SSH remote key was not OK"
                % (TABLE, ep)) and "set ca_bundle= or AWS_CA_BUNDLE" in out
                and "retr" not in out,
                "https verifies certificates: a self-signed one is refused "
                "at once", out)
            out, _ = env.sql(q, e, ", ca_bundle='%s'" % cert, endpoint=ep)
            t.ok(out == "4", "ca_bundle= trusts another CA", out)
            e["AWS_CA_BUNDLE"] = cert
            out, _ = env.sql(q, e, endpoint=ep)
            t.ok(out == "4", "AWS_CA_BUNDLE trusts another CA", out)
        else:
            for name in ("https verifies certificates", "ca_bundle=",
                         "AWS_CA_BUNDLE"):
                t.skip(name, "no openssl")

        # -- bad answers ---------------------------------------------------
        e = env.base()
        e.update({"AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "s"})
        get = "SELECT SK FROM t WHERE PK = 'CUSTOMER#alice' AND SK = 'PROFILE';"
        for fault, want in [
                ("garbage", "Runtime error: dynamodb: malformed response to "
                 "GetItem (28 bytes) (after 1 retry)"),
                ("badshape", "Runtime error: dynamodb: attribute 'PK' is not "
                 "a valid AttributeValue"),
                ("huge", "Runtime error: dynamodb: the response to GetItem "
                 "is larger than 8388608 bytes (8 MB)")]:
            control(port, fault=fault, mode="always", ops=["GetItem"])
            out, secs = env.sql(get, e, ", max_retries=1")
            control(port, fault="none")
            ok = out.startswith(want) and len(out.splitlines()) == 1
            t.ok(ok and secs < 10,
                 "a %s answer is a one-line error (%.1fs): %s"
                 % (fault, secs, out[:120]), out)

        # -- a hung endpoint fails within the timeout ----------------------
        # (a socket that listens and never answers: connecting works, the
        # request never gets an answer)
        hung = socket.socket()
        hung.bind(("127.0.0.1", 0))
        hung.listen(16)
        ep = "http://127.0.0.1:%d" % hung.getsockname()[1]
        out, secs = env.sql(q, e, ", timeout=1, max_retries=1", endpoint=ep)
        hung.close()
        t.ok(out.startswith("Runtime error: dynamodb: table '%s': "
                            "DescribeTable to %s failed: Timeout was "
                            "reached" % (TABLE, ep)) and "after 1 retry"
             in out and secs < 6,
             "a hung endpoint fails within (max_retries + 1) x timeout "
             "(%.1fs)" % secs, out)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        meta.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
