#!/usr/bin/env python3
"""Assumed credentials over time, in one sqlite3 session.

The extension only: tests/faults/fake_aws.py plays STS, the SSO portal and
SSO OIDC on loopback (also as every client's http(s)_proxy, refusing any
other address); statements go through tests/faults/proxy.py to DynamoDB
Local, which records the key id each request was signed with.  Checked:

  * 51 statements make one AssumeRole call, and all sign with its key;
  * three virtual tables over one role, in two connections of the
    process, make one AssumeRole call (the process keeps the credentials);
  * credentials 11 minutes from expiry (inside the 15-minute advisory
    window, outside the 10-minute mandatory one): one call for the
    statements of the first minute, then, 61 s later, a second one (the
    signer refreshes at most once a minute), and no third for the
    statements after it; the second is signed with the source key, and
    the statements after it sign with the new key;
  * credentials that expired are fetched again before the next request
    and never used after their expiry;
  * an expired set that STS refuses to renew fails the statement with an
    error naming the role and STS's code;
  * the web identity token file is read again at each refresh (it rotates:
    the fake sees the new token);
  * SSO: 51 statements with a cached token 5 minutes from expiry make one
    CreateToken and one GetRoleCredentials call; expired role credentials
    are fetched again with the refreshed token; two connections of the
    process make one GetRoleCredentials call;
  * libdyndb (tests/api/api_roles.c): two clients of a role profile make
    one AssumeRole call, two of an SSO profile one GetRoleCredentials call;
  * a slow STS or SSO portal is interruptible: sqlite3's interrupt()
    (Debian's /usr/bin/python3, whose sqlite3 loads extensions) stops
    CREATE VIRTUAL TABLE's AssumeRole, a refresh's and CREATE VIRTUAL
    TABLE's GetRoleCredentials within about a second;
  * no secret, session token, web identity or SSO token appears in what
    the extension printed.

Needs AWS_ENDPOINT_URL_DYNAMODB.  Prints TAP lines.  Takes about 80 s
(the 61 s of the advisory refresh).
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "faults"))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
from tap import Tap  # noqa: E402

TABLE = "RoleRefresh29"
ROLE = "arn:aws:iam::111122223333:role/Refresh"
SRCSECRET = "sEcReT-refresh-src-77"
WEBTOK = "eyJhbGciOiJSUzI1NiJ9.ROTATINGTOKEN-first.c2ln"
WEBTOK2 = "eyJhbGciOiJSUzI1NiJ9.ROTATINGTOKEN-second.c2ln"
SSOTOK = "aoaREFRESHSUITESSOTOKEN-0123456"
RT = "aorREFRESHSUITEREFRESH-0123456"
CID, CSEC = "client-rr", "cLiEnTsEcReT-rr-99"
START = "https://refresh.awsapps.com/start"
Q = "SELECT count(*) FROM t WHERE PK = 'CUSTOMER#alice';"
CONFIG = """[profile r]
role_arn = %s
source_profile = src
[profile src]
aws_access_key_id = AKIDREFRESH
aws_secret_access_key = %s
[profile dev]
sso_session = corp
sso_account_id = 111122223333
sso_role_name = Dev
[sso-session corp]
sso_start_url = %s
sso_region = us-east-1
""" % (ROLE, SRCSECRET, START)

INTERRUPT = r"""
import json, os, sqlite3, sys, threading, time, urllib.request
ext, endpoint, table, fake, cfg, phase = sys.argv[1:7]
QUERY = "SELECT count(*) FROM t WHERE PK = 'CUSTOMER#alice'"
def control(c):
    urllib.request.urlopen(urllib.request.Request(
        fake + "/_control", data=json.dumps(c).encode()), timeout=10).read()
def run(conn, sql):
    timer = threading.Timer(1.0, conn.interrupt)
    t0 = time.monotonic()
    timer.start()
    try:
        conn.execute(sql).fetchall()
        err = "no error"
    except sqlite3.Error as e:
        err = str(e)
    timer.cancel()
    return err, time.monotonic() - t0
cfg = json.loads(cfg)
create = ("CREATE VIRTUAL TABLE t USING dynamodb(table=%s, endpoint='%s', "
          "profile=%s, item_ttl=0, query_ttl=0)"
          % (table, endpoint, "dev" if phase == "sso" else "r"))
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(ext)
if phase == "create":
    control(dict(cfg, delay={"AssumeRole": 20}))
    out = run(conn, create)
elif phase == "refresh":
    control(dict(cfg, ttl=3))
    try:
        conn.execute(create)
        conn.execute(QUERY).fetchall()
        time.sleep(4)
        control(dict(cfg, delay={"AssumeRole": 20}))
        out = run(conn, QUERY)
    except sqlite3.Error as e:
        out = ("before the interrupt: " + str(e), 0)
else:
    control(dict(cfg, delay={"GetRoleCredentials": 20}))
    out = run(conn, create)
conn.close()
print(json.dumps(out))
"""


class Session:
    """The files, the environment and a sqlite3 runner."""

    def __init__(self, tmp, ext, port, fake):
        self.tmp, self.ext, self.port, self.fake = tmp, ext, port, fake
        self.log = os.path.join(tmp, "requests.jsonl")
        self.outputs = []
        with open(os.path.join(tmp, "config"), "w") as f:
            f.write(CONFIG)
        open(os.path.join(tmp, "credentials"), "w").close()
        open(self.log, "w").close()

    def env(self, extra=None):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("AWS_") and k.lower() not in
             ("http_proxy", "https_proxy", "no_proxy", "all_proxy")}
        url = self.fake.url
        e.update({"AWS_CONFIG_FILE": os.path.join(self.tmp, "config"),
                  "AWS_SHARED_CREDENTIALS_FILE":
                  os.path.join(self.tmp, "credentials"),
                  "AWS_EC2_METADATA_DISABLED": "true", "HOME": self.tmp,
                  "AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL_STS": url,
                  "AWS_ENDPOINT_URL_SSO": url,
                  "AWS_ENDPOINT_URL_SSO_OIDC": url,
                  "no_proxy": "127.0.0.1,localhost",
                  "NO_PROXY": "127.0.0.1,localhost"})
        for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            e[k] = url
        preload.sqlite3_env(e)
        e.update(extra or {})
        return e

    def sql(self, body, opts=", profile=r", env=None, timeout=300):
        script = (".bail off\n.headers off\n.load %s\n"
                  "CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
                  "endpoint='http://127.0.0.1:%d'%s, item_ttl=0, "
                  "query_ttl=0);\n%s\n" % (self.ext, TABLE, self.port, opts,
                                           body))
        open(self.log, "w").close()
        p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                           input=script, capture_output=True, text=True,
                           env=env or self.env(), cwd=self.tmp,
                           timeout=timeout)
        out = re.sub(r"^(Runtime|Parse) error near line \d+:", r"\1 error:",
                     p.stdout + p.stderr, flags=re.M).strip()
        self.outputs.append(out)
        return out

    def key_ids(self):
        ids = []
        with open(self.log) as f:
            for line in f:
                for k, v in json.loads(line)["headers"]:
                    if k.lower() == "authorization":
                        m = re.search(r"Credential=([^/]+)/", v)
                        ids.append(m.group(1) if m else "?")
        return ids


def sso_cache(tmp, expires_in):
    import datetime

    def when(s):
        t = datetime.datetime.now(datetime.timezone.utc) + \
            datetime.timedelta(seconds=s)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    d = os.path.join(tmp, ".aws", "sso", "cache")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(b"corp").hexdigest() + ".json"),
              "w") as f:
        json.dump({"startUrl": START, "region": "us-east-1",
                   "accessToken": SSOTOK, "expiresAt": when(expires_in),
                   "clientId": CID, "clientSecret": CSEC,
                   "registrationExpiresAt": when(30 * 86400),
                   "refreshToken": RT}, f)


def ops(fake, op):
    return [c for c in fake.log() if c["op"] == op]


def interrupt_checks(t, s, fake, base):
    """The slow-STS checks, in Debian's python3 (sqlite3 with extensions)."""
    names = ("CREATE VIRTUAL TABLE's AssumeRole",
             "a refresh's AssumeRole", "CREATE VIRTUAL TABLE's "
             "GetRoleCredentials")
    pydeb = "/usr/bin/python3"
    can = subprocess.run([pydeb, "-c", "import sqlite3; sqlite3.connect("
                          "':memory:').enable_load_extension(True)"],
                         capture_output=True) if os.path.exists(pydeb) \
        else None
    if not can or can.returncode != 0:
        for name in names:
            t.skip("interrupt() stops a slow call (%s)" % name,
                   "%s cannot load extensions" % pydeb)
        return
    e = s.env()
    e.pop("LD_PRELOAD", None)
    preload.python_env(e)
    sso_cache(s.tmp, 8 * 3600)
    for phase, name in zip(("create", "refresh", "sso"), names):
        p = subprocess.run([pydeb, "-c", INTERRUPT, s.ext,
                            "http://127.0.0.1:%d" % s.port, TABLE, fake.url,
                            json.dumps(base), phase], capture_output=True,
                           text=True, env=e, cwd=s.tmp, timeout=300)
        s.outputs.append(p.stdout + p.stderr)
        try:
            err, secs = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            err, secs = "did not run", 0
            if p.returncode < 0:
                err = "the process died of signal %d" % -p.returncode
        t.ok("interrupted" in err and secs <= 2.5,
             "interrupt() stops a slow call (%s): %s after %.1f s (at "
             "most 2.5)" % (name, err[:160], secs),
             p.stdout + p.stderr[-1500:])


def api_checks(t, s, fake, base, tmp):
    """libdyndb (tests/api/api_roles.c): two clients of profile r make one
    AssumeRole call, two of profile dev one GetRoleCredentials call, each
    client names where its credentials came from."""
    binp = os.path.join(tmp, "api_roles")
    flags = ["-fsanitize=address,undefined"] if os.environ.get(
        "SANITIZE") == "1" else []
    libs = subprocess.run(["make", "-s", "--no-print-directory", "libs"],
                          cwd=ROOT, capture_output=True, text=True)
    built = subprocess.run(
        ["make", "-s", "--no-print-directory", "build/libddb.a"], cwd=ROOT,
        capture_output=True, text=True)
    cc = subprocess.run(
        [os.environ.get("CC", "cc"), "-Wall", "-Wextra", "-Werror"] + flags +
        ["-I.", "-o", binp, "tests/api/api_roles.c", "api/client.c",
         "api/item.c", "api/read.c", "api/write.c", "build/libddb.a"] +
        libs.stdout.split(), cwd=ROOT, capture_output=True, text=True)
    if built.returncode or cc.returncode:
        t.ok(False, "libdyndb: build tests/api/api_roles.c",
             (built.stderr + cc.stderr)[-600:])
        return
    fake.control(base)
    sso_cache(tmp, 8 * 3600)
    p = subprocess.run([binp, "http://127.0.0.1:%d" % s.port, TABLE, "r",
                        "dev"], capture_output=True, text=True,
                       env=s.env(), cwd=tmp, timeout=120)
    lines = p.stdout.splitlines()
    ar, gr = ops(fake, "AssumeRole"), ops(fake, "GetRoleCredentials")
    s.outputs.append(p.stdout + p.stderr)
    t.ok(p.returncode == 0 and len(lines) == 4 and
         all(l.endswith(": found") for l in lines) and
         lines[0] == lines[1] and lines[2] == lines[3] and
         lines[0].startswith("r: assume-role " + ROLE + " (profile 'r') "
                             "via profile 'src'") and
         lines[2].startswith("dev: sso-session 'corp' (profile 'dev')") and
         len(ar) == 1 and len(gr) == 1,
         "libdyndb: two clients of a role profile make 1 AssumeRole "
         "call (%d), two of an SSO profile 1 GetRoleCredentials call "
         "(%d); each names its source" % (len(ar), len(gr)),
         (p.stdout + p.stderr)[-600:])


def main():
    upstream = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not upstream:
        print("1..0 # SKIP AWS_ENDPOINT_URL_DYNAMODB not set")
        return 0
    sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
    import fake_aws
    import fixtures
    ext = fixtures.extension()
    client = fixtures.connect()
    fixtures.lesson(client, TABLE)
    tmp = tempfile.mkdtemp(prefix="ddb-rolerefresh29-")
    t = Tap("role refresh: ")
    fake = fake_aws.start()
    base = {"secrets": {"AKIDREFRESH": SRCSECRET}, "serial": True,
            "web_tokens": [WEBTOK, WEBTOK2], "sso_tokens": [SSOTOK],
            "refresh_tokens": [RT], "clients": {CID: CSEC}}
    proxy, log = fixtures.recording_proxy(upstream, tmp)
    try:
        s = Session(tmp, ext, int(proxy.stdout.readline()), fake)
        ones = "\n".join(["4"] * 51)

        # -- 51 statements, one AssumeRole ------------------------------
        fake.control(base)
        out = s.sql("\n".join([Q] * 51))
        calls, ids = ops(fake, "AssumeRole"), s.key_ids()
        t.ok(out == ones and len(calls) == 1 and len(ids) == 52 and
             all(i == calls[0].get("issued") for i in ids),
             "51 statements make 1 AssumeRole call (%d), all 52 requests "
             "signed with its key" % len(calls),
             (out[:300], len(calls), sorted(set(ids))))

        # -- the process keeps them: more tables, another connection ------
        fake.control(base)
        more = ("CREATE VIRTUAL TABLE u USING dynamodb(table=%s, "
                "endpoint='http://127.0.0.1:%d', profile=r);\n"
                "SELECT count(*) FROM u WHERE PK = 'CUSTOMER#alice';\n"
                ".open second.db\n.load %s\n"
                "CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
                "endpoint='http://127.0.0.1:%d', profile=r);\n%s"
                % (TABLE, s.port, s.ext, TABLE, s.port, Q))
        out = s.sql(Q + "\n" + more)
        calls, ids = ops(fake, "AssumeRole"), s.key_ids()
        t.ok(out == "4\n4\n4" and len(calls) == 1 and
             all(i == calls[0].get("issued") for i in ids),
             "three tables over one role, two of them in another "
             "connection of the process: 1 AssumeRole call (%d), every "
             "request signed with its key" % len(calls),
             (out[:300], len(calls), sorted(set(ids))))

        # -- 11 minutes from expiry: a refresh a minute, not a statement --
        fake.control(dict(base, ttl=660))
        out = s.sql("\n".join([Q] * 25 + [".shell sleep 61"] + [Q] * 26))
        calls, ids = ops(fake, "AssumeRole"), s.key_ids()
        iss = [c.get("issued") for c in calls]
        t.ok(out == ones and len(calls) == 2 and
             all(c.get("ak") == "AKIDREFRESH" for c in calls) and
             ids[:26] == [iss[0]] * 26 and ids[-26:] == [iss[-1]] * 26,
             "credentials 11 minutes from expiry: 1 AssumeRole for the "
             "first minute's 25 statements, a second after 61 s, no third "
             "for the 26 after it (%d calls)" % len(calls),
             (out[:300], [(c.get("ak"), c.get("issued")) for c in calls],
              ids))

        # -- expired: fetched again, never used after expiry -------------
        fake.control(dict(base, ttl=3))
        out = s.sql(Q + "\n.shell sleep 4\n" + Q + "\n" + Q)
        calls, ids = ops(fake, "AssumeRole"), s.key_ids()
        iss = [c.get("issued") for c in calls]
        t.ok(out == "4\n4\n4" and len(calls) == 2 and
             ids == [iss[0], iss[0], iss[1], iss[1]],
             "expired credentials are fetched again before the next "
             "request, and not used after their expiry",
             (out, iss, ids))

        # -- expired, and STS refuses to renew ------------------------------
        fake.control(dict(base, ttl=3, fail={"AssumeRole": {
            "after": 1, "code": "AccessDenied",
            "message": "not authorized to perform: sts:AssumeRole"}}))
        out = s.sql(Q + "\n.shell sleep 4\n" + Q)
        lines = out.splitlines()
        t.ok(len(lines) == 2 and lines[0] == "4" and
             lines[1].startswith("Runtime error: dynamodb:") and
             ROLE in lines[1] and "AccessDenied" in lines[1] and
             "expired" in lines[1] and len(s.key_ids()) == 2,
             "expired credentials STS refuses to renew: the statement "
             "fails naming the role, AccessDenied and the expiry", out)

        # -- web identity: the token file is read at each refresh --------
        tokf = os.path.join(tmp, "web-token")
        with open(tokf, "w") as f:
            f.write(WEBTOK)
        with open(os.path.join(tmp, "web-token-2"), "w") as f:
            f.write(WEBTOK2)
        irsa = s.env({"AWS_WEB_IDENTITY_TOKEN_FILE": tokf,
                      "AWS_ROLE_ARN": ROLE + "Web",
                      "AWS_ROLE_SESSION_NAME": "pod-rr"})
        fake.control(dict(base, ttl=3))
        out = s.sql(Q + "\n.shell cp web-token-2 web-token\n.shell sleep 4\n"
                    + Q, opts="", env=irsa)
        calls = ops(fake, "AssumeRoleWithWebIdentity")
        seen = [c.get("WebIdentityToken") for c in calls]
        t.ok(out == "4\n4" and seen == [WEBTOK, WEBTOK2],
             "web identity: the token file is read again at the refresh "
             "(the fake saw the first token, then the rotated one)",
             (out, ["first" if x == WEBTOK else "second" if x == WEBTOK2
                    else "other" for x in seen]))

        # -- SSO: 51 statements, a token 5 minutes from expiry -----------
        sso_cache(tmp, 300)
        fake.control(base)
        out = s.sql("\n".join([Q] * 51), opts=", profile=dev")
        ct, gr = ops(fake, "CreateToken"), ops(fake, "GetRoleCredentials")
        t.ok(out == ones and len(ct) == 1 and len(gr) == 1 and
             gr[0].get("bearer") == ct[0].get("issued"),
             "SSO: 51 statements with a token 5 minutes from expiry: 1 "
             "CreateToken (%d), 1 GetRoleCredentials (%d) with the new "
             "token" % (len(ct), len(gr)), out[:300])
        sso_cache(tmp, 8 * 3600)
        fake.control(dict(base, ttl=3))
        out = s.sql(Q + "\n.shell sleep 4\n" + Q, opts=", profile=dev")
        gr, ids = ops(fake, "GetRoleCredentials"), s.key_ids()
        t.ok(out == "4\n4" and len(gr) == 2 and not ops(fake,
                                                        "CreateToken")
             and ids[-1] == gr[-1].get("issued"),
             "SSO: expired role credentials are fetched again (%d "
             "GetRoleCredentials), the token not refreshed" % len(gr),
             (out, len(gr), ids))

        fake.control(base)
        out = s.sql(Q + "\n.open sso-second.db\n.load %s\n"
                    "CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
                    "endpoint='http://127.0.0.1:%d', profile=dev);\n%s"
                    % (s.ext, TABLE, s.port, Q), opts=", profile=dev")
        gr, ids = ops(fake, "GetRoleCredentials"), s.key_ids()
        t.ok(out == "4\n4" and len(gr) == 1 and
             all(i == gr[0].get("issued") for i in ids),
             "SSO: two connections of the process make 1 "
             "GetRoleCredentials call (%d)" % len(gr), (out, len(gr), ids))

        # -- libdyndb: the same chain, the same memo ----------------------
        api_checks(t, s, fake, base, tmp)

        # -- interrupt() stops a slow STS or portal -----------------------
        interrupt_checks(t, s, fake, base)

        # -- nothing secret was printed, nothing else contacted -----------
        with fake.state.lock:
            issued = [v for pair in fake.state.issued.values() for v in pair]
            issued += list(fake.state.sso_issued)
            issued += list(fake.state.refresh_issued)
        secrets = [SRCSECRET, WEBTOK, WEBTOK2, SSOTOK, RT, CSEC] + issued
        leaked = [x[:6] + "..." for x in secrets
                  if any(x in o for o in s.outputs)]
        t.ok(not leaked, "no secret or token in anything the extension "
             "printed (%d outputs)" % len(s.outputs), leaked)
    finally:
        proxy.kill()
        proxy.wait()
        esc = fake.escapes()
        fake.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        fixtures.drop_table(client, TABLE)
    t.ok(not esc, "no other address or path was tried", esc)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
