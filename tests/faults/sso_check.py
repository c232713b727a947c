#!/usr/bin/env python3
"""IAM Identity Center (SSO) profiles, the extension against botocore.

A fake SSO portal (GET /federation/credentials) and SSO OIDC (POST /token)
serve on loopback; the token cache of `aws sso login` is written by hand in
$HOME/.aws/sso/cache.  For each case botocore resolves the profile first (a
child process with only these files and variables), then the cache is put
back as it was and the extension, in sqlite3, runs CREATE VIRTUAL TABLE
through tests/faults/proxy.py to DynamoDB Local.  Checked:

  * botocore finds credentials: the DescribeTable request is signed with the
    portal's accessKeyId and carries its sessionToken (the same botocore
    got); the portal saw the same bearer token from both, with role_name and
    account_id; OIDC was called as often by both, with the same JSON; a
    refreshed cache file has botocore's keys, mode 0600;
  * botocore fails: the statement fails with a one-line error holding the
    words listed with the case (`aws sso login --profile NAME` where that is
    the fix), never a token, and nothing was sent to DynamoDB.

Needs AWS_ENDPOINT_URL_DYNAMODB and botocore.  Prints TAP lines.
"""

import base64
import datetime
import hashlib
import http.server
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
from tap import Tap  # noqa: E402

TABLE = "Sso29"
START = "https://corp.awsapps.com/start"
VALID = {"tok-valid", "tok-soon", "tok-new"}

STATE = {"portal": "ok", "oidc": "ok", "log": []}


class Fake(http.server.BaseHTTPRequestHandler):
    """The portal and OIDC in one server; STATE says how they answer."""

    def log_message(self, *a):
        pass

    def answer(self, status, obj, etype=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        if etype:
            self.send_header("x-amzn-ErrorType", etype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        tok = self.headers.get("x-amz-sso_bearer_token")
        STATE["log"].append(["portal", u.path, q, tok])
        if STATE["portal"] == "403":
            return self.answer(403, {"message": "No access"},
                               "ForbiddenException")
        if u.path != "/federation/credentials" or tok not in VALID or \
                STATE["portal"] == "401":
            return self.answer(401, {"message": "Session token not found "
                                     "or invalid"}, "UnauthorizedException")
        if STATE["portal"] == "garbage":
            return self.answer(200, {"roleCredentials": {
                "accessKeyId": "ASIAX", "secretAccessKey": "s"}})
        exp = int((datetime.datetime.now().timestamp() + 3600) * 1000)
        self.answer(200, {"roleCredentials": {
            "accessKeyId": "ASIA" + tok.upper().replace("-", ""),
            "secretAccessKey": "secret/" + tok,
            "sessionToken": "session-" + tok, "expiration": exp}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        STATE["log"].append(["oidc", self.path, body, None])
        if self.path != "/token" or STATE["oidc"] == "400":
            return self.answer(400, {"error": "invalid_grant",
                                     "error_description": "bad refresh"},
                               "InvalidGrantException")
        ans = {"accessToken": "tok-new", "expiresIn": 3600,
               "refreshToken": "refresh-2", "tokenType": "Bearer"}
        if STATE["oidc"] == "norefresh":
            del ans["refreshToken"]
        if STATE["oidc"] == "noexpires":
            del ans["expiresIn"]
        self.answer(200, ans)


def iso(minutes):
    t = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(minutes=minutes)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def token(access, minutes, refresh=True, reg_minutes=600):
    t = {"startUrl": START, "region": "us-east-1", "accessToken": access,
         "expiresAt": iso(minutes)}
    if refresh:
        t.update({"clientId": "cid", "clientSecret": "csecret",
                  "registrationExpiresAt": iso(reg_minutes),
                  "refreshToken": "refresh-1"})
    return t


def raw(text):
    """A cache file's text as it is (not a token dict)."""
    return {"__raw__": text}


SESSION = ("[profile dev]\nsso_session = corp\nsso_account_id = 111122223333"
           "\nsso_role_name = Read Only\nregion = us-east-1\n"
           "[sso-session corp]\nsso_start_url = %s\nsso_region = us-east-1\n"
           % START)
LEGACY = ("[profile old]\nsso_start_url = %s\nsso_region = us-east-1\n"
          "sso_account_id = 111122223333\nsso_role_name = ReadOnly\n"
          "region = us-east-1\n" % START)
SERVICES = SESSION.replace("region = us-east-1\n[sso",
                           "region = us-east-1\nservices = fake\n[sso", 1) + \
    "[services fake]\nsso =\n  endpoint_url = @URL@\n" \
    "sso_oidc =\n  endpoint_url = @URL@\n"

# (name, config, profile, cache {key: token or None}, portal, oidc,
#  services section instead of AWS_ENDPOINT_URL_* (True), or OIDC on a
#  closed port ("oidc-down"), words of our error)
CASES = [
    ("sso_session, valid token", SESSION, "dev",
     {"corp": token("tok-valid", 60)}, "ok", "ok", False, ()),
    ("legacy, valid token (cache named by the start URL)", LEGACY, "old",
     {START: token("tok-valid", 60, refresh=False)}, "ok", "ok", False, ()),
    ("sso_session, token expiring in 5 min: OIDC refresh, cache rewritten",
     SESSION, "dev", {"corp": token("tok-soon", 5)}, "ok", "ok", False, ()),
    ("expires in 17 min: outside the 15-minute window, no refresh",
     SESSION, "dev", {"corp": token("tok-soon", 17)}, "ok", "ok", False, ()),
    ("expires in 13 min: inside the window, refreshed", SESSION, "dev",
     {"corp": token("tok-soon", 13)}, "ok", "ok", False, ()),
    ("legacy expiring in 5 min with refresh keys: never refreshed", LEGACY,
     "old", {START: token("tok-soon", 5)}, "ok", "ok", False, ()),
    ("refresh through a services section's sso and sso_oidc", SERVICES,
     "dev", {"corp": token("tok-soon", 5)}, "ok", "ok", True, ()),
    ("refresh refused, token still valid: the cached one", SESSION, "dev",
     {"corp": token("tok-soon", 5)}, "ok", "400", False, ()),
    ("OIDC unreachable in the window: an error, as botocore raises",
     SESSION, "dev", {"corp": token("tok-soon", 5)}, "ok", "ok",
     "oidc-down", ("sso-session 'corp' (profile 'dev'): SSO OIDC "
                   "CreateToken", "127.0.0.1:9")),
    ("expired, refresh refused", SESSION, "dev",
     {"corp": token("tok-old", -5)}, "ok", "400", False,
     ("expired", "400 invalid_grant", "aws sso login --profile dev")),
    ("expired, registration expired", SESSION, "dev",
     {"corp": token("tok-old", -5, reg_minutes=-1)}, "ok", "ok", False,
     ("registration expired", "aws sso login --profile dev")),
    ("expired, no refresh token", SESSION, "dev",
     {"corp": token("tok-old", -5, refresh=False)}, "ok", "ok", False,
     ("expired", "aws sso login --profile dev")),
    ("legacy, expired (never refreshed)", LEGACY, "old",
     {START: token("tok-soon", -1)}, "ok", "ok", False,
     ("expired", "aws sso login --profile old")),
    ("no cached token", SESSION, "dev", {}, "ok", "ok", False,
     ("no SSO token", "aws sso login --profile dev")),
    ("portal answers 401", SESSION, "dev",
     {"corp": token("tok-valid", 60)}, "401", "ok", False,
     ("401", "aws sso login --profile dev")),
    ("portal answers 403", SESSION, "dev",
     {"corp": token("tok-valid", 60)}, "403", "ok", False,
     ("403", "No access", "Read Only")),
    ("sso_session missing", SESSION.replace("[sso-session corp]",
                                            "[sso-session other]"), "dev",
     {}, "ok", "ok", False, ("sso-session does not exist", "corp")),
    ("sso_region missing", SESSION.replace("sso_region = us-east-1\n", ""),
     "dev", {}, "ok", "ok", False, ("missing", "sso_region")),
    ("profile and session disagree", SESSION.replace(
        "region = us-east-1\n[sso", "region = us-east-1\n"
        "sso_region = us-west-2\n[sso"), "dev", {}, "ok", "ok", False,
     ("inconsistent", "sso_region")),
    ("legacy, expiresAt of the older CLI ('...UTC')", LEGACY, "old",
     {START: raw('{"startUrl": "%s", "region": "us-east-1", "accessToken": '
                 '"tok-valid", "expiresAt": "%sUTC"}'
                 % (START, iso(60)[:-1]))}, "ok", "ok", False, ()),
    ("refresh answered without refreshToken: the cache loses it", SESSION,
     "dev", {"corp": token("tok-soon", 5)}, "ok", "norefresh", False, ()),
    ("a second profile on the same sso-session", SESSION +
     "[profile two]\nsso_session = corp\nsso_account_id = 444455556666\n"
     "sso_role_name = Admin\nregion = us-east-1\n", "two",
     {"corp": token("tok-valid", 60)}, "ok", "ok", False, ()),
    ("cache file not JSON", SESSION, "dev", {"corp": raw("{not json")},
     "ok", "ok", False, ("not a JSON object", "aws sso login")),
    ("cache file without expiresAt", SESSION, "dev",
     {"corp": raw('{"accessToken": "tok-valid"}')}, "ok", "ok", False,
     ("accessToken and expiresAt", "aws sso login --profile dev")),
    ("sso_start_url in the profile, not in the session", SESSION.replace(
        "sso_start_url = %s\n" % START, "").replace(
        "region = us-east-1\n[sso", "region = us-east-1\nsso_start_url = "
        "%s\n[sso" % START), "dev", {"corp": token("tok-valid", 60)}, "ok",
     "ok", False, ("SSO token provider", "sso_start_url")),
    ("sso_account_id alone", "[profile acc]\nsso_account_id = 1\n"
     "region = us-east-1\n", "acc", {}, "ok", "ok", False,
     ("missing required configuration", "sso_role_name, sso_start_url, "
      "sso_region")),
    ("sso_session alone is no SSO credential source: the keys", "[profile k]"
     "\nsso_session = corp\nregion = us-east-1\naws_access_key_id = AKKEYS"
     "\naws_secret_access_key = s\n[sso-session corp]\nsso_start_url = x\n"
     "sso_region = us-east-1\n", "k", {}, "ok", "ok", False, ()),
    ("sso_region not a region", SESSION.replace(
        "sso_region = us-east-1", "sso_region = us east 1"), "dev",
     {"corp": token("tok-valid", 60)}, "ok", "ok", False,
     ("sso_region", "us east 1")),
    ("portal answers 200 without sessionToken", SESSION, "dev",
     {"corp": token("tok-valid", 60)}, "garbage", "ok", False,
     ("GetRoleCredentials", "sessionToken")),
    ("OIDC answers 200 without expiresIn (botocore raises)", SESSION, "dev",
     {"corp": token("tok-soon", 5)}, "ok", "noexpires", False,
     ("CreateToken", "expiresIn")),
    ("a quoted sso-session name with a space", SESSION.replace(
        "sso_session = corp", "sso_session = my corp").replace(
        "[sso-session corp]", '[sso-session "my corp"]'), "dev",
     {"my corp": token("tok-valid", 60)}, "ok", "ok", False, ()),
    ("sso_region from [DEFAULT]", "[DEFAULT]\nsso_region = us-east-1\n" +
     SESSION.replace("sso_region = us-east-1\n", ""), "dev",
     {"corp": token("tok-valid", 60)}, "ok", "ok", False, ()),
    ("legacy without sso_role_name", LEGACY.replace(
        "sso_role_name = ReadOnly\n", ""), "old", {}, "ok", "ok", False,
     ("missing required configuration", "sso_role_name")),
]

BOTOCORE = r"""
import json, sys, botocore.session
try:
    c = botocore.session.Session(profile=sys.argv[1]).get_credentials()
    f = c.get_frozen_credentials() if c else None
    print(json.dumps({"ak": f.access_key, "tok": f.token} if f else
                     {"error": "no credentials"}))
except Exception as e:
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
"""


def cache_path(home, key):
    return os.path.join(home, ".aws", "sso", "cache",
                        hashlib.sha1(key.encode()).hexdigest() + ".json")


def setup(home, case, url):
    config = case[1].replace("@URL@", url)
    shutil.rmtree(os.path.join(home, ".aws"), ignore_errors=True)
    os.makedirs(os.path.join(home, ".aws", "sso", "cache"))
    with open(os.path.join(home, ".aws", "config"), "w") as f:
        f.write(config)
    for key, tok in case[3].items():
        with open(cache_path(home, key), "w") as f:
            if "__raw__" in tok:
                f.write(tok["__raw__"])
            else:
                json.dump(tok, f)
    STATE.update(portal=case[4], oidc=case[5], log=[])


def environment(home, url, services):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update({"HOME": home, "AWS_EC2_METADATA_DISABLED": "true"})
    if services is not True:
        e.update({"AWS_ENDPOINT_URL_SSO": url,
                  "AWS_ENDPOINT_URL_SSO_OIDC": url})
    if services == "oidc-down":
        e["AWS_ENDPOINT_URL_SSO_OIDC"] = "http://127.0.0.1:9"
    return e


def ours(ext, port, env, profile):
    env = dict(env)
    preload.sqlite3_env(env)
    script = (".bail off\n.load %s\n"
              "CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
              "endpoint='http://127.0.0.1:%d', profile='%s');\n"
              % (ext, TABLE, port, profile))
    p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                       input=script, capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=120)
    return (p.stdout + p.stderr).strip()


def cache_state(home, case):
    """The cache files' text (expiresAt cut to the minute) and modes."""
    out = {}
    for key in case[3]:
        p = cache_path(home, key)
        with open(p) as f:
            text = f.read()
        text = re.sub(r'("expiresAt": "[^"]{15})[^"]*"', r'\1"', text)
        out[key] = (text, oct(stat.S_IMODE(os.stat(p).st_mode)))
    return out


def check(case, want, theirs_log, out, recs, mine_log, their_cache,
          my_cache):
    words = case[7]
    bad = []
    if "Sanitizer" in out or "runtime error:" in out:
        bad.append("sanitizer: %r" % out[-600:])
    if "error" in want:
        first = out.splitlines()[0] if out else ""
        if "dynamodb:" not in first:
            bad.append("botocore: %s; ours did not fail: %r"
                       % (want["error"], out[:300]))
        for w in words:
            if w not in first:
                bad.append("our error lacks %r: %r" % (w, first[:400]))
        if re.search(r"tok-|refresh-|csecret", out):
            bad.append("a token in our error: %r" % out[:400])
        if recs:
            bad.append("%d request(s) sent to DynamoDB" % len(recs))
        if words == ():
            bad.append("botocore failed (%s), the case expected success"
                       % want["error"])
        return bad
    if words:
        bad.append("botocore succeeded, the case expected %r" % (words,))
    if not recs:
        return bad + ["botocore: %s; ours sent nothing: %r"
                      % (want["ak"], out[:300])]
    hd = {k.lower(): v for k, v in recs[0]["headers"]}
    m = re.search(r"Credential=([^/]*)/", hd.get("authorization", ""))
    if not m or m.group(1) != want["ak"]:
        bad.append("key id: ours %r, botocore %r" % (m and m.group(1),
                                                    want["ak"]))
    if hd.get("x-amz-security-token") != want["tok"]:
        bad.append("session token: ours %r, botocore %r"
                   % (hd.get("x-amz-security-token"), want["tok"]))
    if json.dumps(mine_log, sort_keys=True) != \
            json.dumps(theirs_log, sort_keys=True):
        bad.append("SSO calls: ours %s, botocore %s" % (mine_log, theirs_log))
    if my_cache != their_cache:
        bad.append("cache file: ours %s, botocore %s" % (my_cache,
                                                         their_cache))
    return bad


def main():
    upstream = os.environ.get("AWS_ENDPOINT_URL_DYNAMODB")
    if not upstream:
        print("1..0 # SKIP AWS_ENDPOINT_URL_DYNAMODB not set")
        return 0
    try:
        import botocore  # noqa: F401
    except ImportError:
        print("1..0 # SKIP no botocore")
        return 0
    import fixtures
    ext = fixtures.extension()
    client = fixtures.connect()
    fixtures.drop_table(client, TABLE)
    fixtures.create_table(client, TABLE, "PK", "SK")
    fake = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % fake.server_address[1]
    home = tempfile.mkdtemp(prefix="ddb-sso29-")
    proxy, log = fixtures.recording_proxy(upstream, home)
    t = Tap("sso: ")
    try:
        port = int(proxy.stdout.readline())
        for case in CASES:
            env = environment(home, url, case[6])
            setup(home, case, url)
            p = subprocess.run([sys.executable, "-c", BOTOCORE, case[2]],
                               capture_output=True, text=True, env=env,
                               timeout=60)
            try:
                want = json.loads(p.stdout)
            except ValueError:
                want = {"error": "crashed: " + p.stderr[-300:]}
            theirs_log = STATE["log"]
            their_cache = cache_state(home, case) if "error" not in want \
                else None
            setup(home, case, url)
            open(log, "w").close()
            out = ours(ext, port, env, case[2])
            with open(log) as f:
                recs = [json.loads(line) for line in f]
            my_cache = cache_state(home, case) if "error" not in want \
                else None
            bad = check(case, want, theirs_log, out, recs, STATE["log"],
                        their_cache, my_cache)
            t.ok(not bad, "%s (botocore: %s)"
                 % (case[0], want.get("error", want.get("ak"))[:160]), bad)
    finally:
        proxy.kill()
        proxy.wait()
        fake.shutdown()
        shutil.rmtree(home, ignore_errors=True)
        fixtures.drop_table(client, TABLE)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
