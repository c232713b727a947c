#!/usr/bin/env python3
"""Profiles resolved by the extension and by botocore, on the same files.

Each case is a config file and a credentials file (odd ones: upper-case
key names, ':' delimiters, keys split across the two files, a stale
session token in the config file, a 5,002-character token, comments,
continuation lines, duplicate sections and keys, [profile x] and [x] in
each file, indented keys, a byte-order mark, CRLF and lone CR line ends,
empty values, [DEFAULT], a quoted profile name, a credential_process next
to keys, a missing profile) and a profile (the profile= option, or
AWS_PROFILE, or none).

botocore (the aws CLI's library, run in a child process with only these
files and variables) resolves the credentials and the region; the
extension, in sqlite3, runs CREATE VIRTUAL TABLE through
tests/faults/proxy.py to DynamoDB Local, which records the DescribeTable
request.  The two must agree:

  * botocore finds credentials: the recorded request's Authorization is
    the one botocore signs for it with botocore's credentials (same key
    id, secret and session token, byte for byte: botocore's SigV4 at the
    request's X-Amz-Date), its credential scope names botocore's region,
    and X-Amz-Security-Token is botocore's token;
  * botocore fails (ProfileNotFound, ConfigParseError,
    PartialCredentialsError, no credentials) or finds an empty key id or
    secret (which cannot sign): the statement fails with a one-line error
    that says why (the words listed with the case), and nothing was sent.

Needs AWS_ENDPOINT_URL_DYNAMODB and botocore.  Prints TAP lines.
"""

import base64
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
from tap import Tap  # noqa: E402

TABLE = "Prof21"
LONG_TOKEN = "IQoJb3JpZ2luX2VjE" + "x" * 4980 + "END12"   # 5,002 characters
CFG_REGION = "[default]\nregion = eu-west-3\n"

# (name, config text, credentials text, profile option, extra environment,
#  words our error must contain when botocore fails)
CASES = [
    ("upper-case key names",
     CFG_REGION,
     "[default]\nAWS_ACCESS_KEY_ID = AKUPPER\n"
     "Aws_Secret_Access_Key = uppersecret\n", None, {}, ()),
    ("':' delimiters",
     CFG_REGION,
     "[default]\naws_access_key_id: AKCOLON\n"
     "aws_secret_access_key:colon/secret:x\n"
     "aws_session_token : tok:en\n", None, {}, ()),
    ("a stale token in the config file is not joined to the credentials "
     "file's keys",
     "[default]\nregion = eu-west-3\naws_access_key_id = AKOLD\n"
     "aws_secret_access_key = oldsecret\naws_session_token = STALETOKEN\n",
     "[default]\naws_access_key_id = AKLONGTERM\n"
     "aws_secret_access_key = longtermsecret\n", None, {}, ()),
    ("a key id in one file, the secret in the other",
     "[default]\nregion = eu-west-3\naws_secret_access_key = cfgsecret\n",
     "[default]\naws_access_key_id = AKSPLIT\n", None, {},
     ("aws_access_key_id without aws_secret_access_key",)),
    ("a 5,002-character session token",
     CFG_REGION,
     "[default]\naws_access_key_id = AKLONGTOKEN\n"
     "aws_secret_access_key = s\naws_session_token = %s\n" % LONG_TOKEN,
     None, {}, ()),
    ("comment lines; '#' and ';' inside a value are part of it",
     "# config\n" + CFG_REGION,
     "# credentials\n; both kinds\n[default]\n# aws_access_key_id = AKHIDE\n"
     "aws_access_key_id = AKCOMMENT\n  ; indented comment\n"
     "aws_secret_access_key = sec#ret ;kept\n", None, {}, ()),
    ("an indented line continues the value above, it is no key",
     CFG_REGION,
     "[default]\nnote = a\n  aws_secret_access_key = WRONGSECRET\n"
     "aws_access_key_id = AKCONT\naws_secret_access_key = rightsecret\n",
     None, {}, ()),
    ("a duplicate section",
     CFG_REGION,
     "[default]\naws_access_key_id = AKDUP1\naws_secret_access_key = a\n"
     "[default]\naws_access_key_id = AKDUP2\naws_secret_access_key = b\n",
     None, {}, ("line 4", "duplicate section [default]")),
    ("a duplicate key (after lower-casing)",
     CFG_REGION,
     "[default]\naws_access_key_id = AKDUPKEY\naws_secret_access_key = a\n"
     "AWS_SECRET_ACCESS_KEY = b\n", None, {},
     ("line 4", "duplicate key 'aws_secret_access_key'")),
    ("[profile x] in the credentials file is not profile x",
     "[profile dev]\nregion = ap-south-1\n",
     "[profile dev]\naws_access_key_id = AKWRONG\naws_secret_access_key = w\n"
     "[dev]\naws_access_key_id = AKDEV\naws_secret_access_key = devsecret\n",
     "dev", {}, ()),
    ("[x] in the config file is not profile x",
     "[dev]\nregion = us-west-1\naws_access_key_id = AKWRONG\n"
     "aws_secret_access_key = w\n"
     "[profile dev]\nregion = ap-south-1\naws_access_key_id = AKCFGDEV\n"
     "aws_secret_access_key = cfgdevsecret\n", "", "dev", {}, ()),
    ("indented keys and spaces around names",
     "[profile   spaced  ]\n  region   =   sa-east-1  \n",
     "[spaced]\n  aws_access_key_id   =   AKSPACED  \n"
     "  aws_secret_access_key=spacedsecret\n", "spaced", {}, ()),
    ("a UTF-8 byte-order mark",
     CFG_REGION,
     "\ufeff[default]\naws_access_key_id = AKBOM\naws_secret_access_key = b\n",
     None, {}, ("line 1", "byte-order mark")),
    ("CRLF and lone CR line ends",
     "[default]\r\nregion = eu-north-1\r\n",
     "[default]\raws_access_key_id = AKCRLF\r\n"
     "aws_secret_access_key = crlfsecret\r\naws_session_token = crtoken\r",
     None, {}, ()),
    ("an empty session token is none",
     CFG_REGION,
     "[default]\naws_access_key_id = AKEMPTYTOK\naws_secret_access_key = e\n"
     "aws_session_token =\n", None, {}, ()),
    ("an empty key id cannot sign",
     CFG_REGION,
     "[default]\naws_access_key_id =\naws_secret_access_key = e\n",
     None, {}, ("aws_access_key_id is empty",)),
    ("[DEFAULT] gives every section its keys",
     CFG_REGION,
     "[DEFAULT]\naws_secret_access_key = defaultsecret\n"
     "[default]\naws_access_key_id = AKFROMDEFAULT\n", None, {}, ()),
    ("the region from the credentials file beats the config file's",
     CFG_REGION,
     "[default]\nregion = ca-central-1\naws_access_key_id = AKREGION\n"
     "aws_secret_access_key = r\n", None, {}, ()),
    ("a quoted profile name",
     "[profile \"two words\"]\nregion = eu-south-1\n"
     "aws_access_key_id = AKQUOTED\naws_secret_access_key = q\n", "",
     "two words", {}, ()),
    ("credential_process comes before the config file's keys",
     "[default]\nregion = eu-west-3\naws_access_key_id = AKCFGKEYS\n"
     "aws_secret_access_key = c\ncredential_process = @PROC@\n", "",
     None, {}, ()),
    ("a key line without '=' or ':'",
     CFG_REGION,
     "[default]\naws_access_key_id = AKORPHAN\naws_secret_access_key = o\n"
     "orphan\n", None, {}, ("line 4", "without '=' or ':'")),
    ("profile= naming a missing profile",
     CFG_REGION, "[default]\naws_access_key_id = AK\n"
     "aws_secret_access_key = s\n", "nosuch",
     {"AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "eu-west-3"},
     ("profile 'nosuch' not found", "config", "credentials")),
    ("AWS_PROFILE naming a missing profile, keys in the environment",
     CFG_REGION, "", None,
     {"AWS_PROFILE": "nosuch", "AWS_ACCESS_KEY_ID": "AKENV",
      "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_REGION": "eu-west-3",
      "AWS_DEFAULT_REGION": "eu-west-3"},
     ("profile 'nosuch' not found",)),
]

BOTOCORE = r"""
import json, sys
import botocore.session
profile = sys.argv[1] or None
try:
    s = botocore.session.Session(profile=profile)
    c = s.get_credentials()
    region = s.get_config_variable("region")
    if c is None:
        print(json.dumps({"error": "NoCredentials"}))
    else:
        f = c.get_frozen_credentials()
        print(json.dumps({"ak": f.access_key, "sk": f.secret_key,
                          "tok": f.token, "region": region}))
except Exception as e:
    print(json.dumps({"error": type(e).__name__}))
"""

PROC = """#!/bin/sh
echo '{"Version": 1, "AccessKeyId": "AKPROCESS", "SecretAccessKey": "procsecret", "SessionToken": "proctoken"}'
"""


def base_env(tmp):
    e = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    e.update({"AWS_CONFIG_FILE": os.path.join(tmp, "config"),
              "AWS_SHARED_CREDENTIALS_FILE": os.path.join(tmp, "credentials"),
              "AWS_EC2_METADATA_DISABLED": "true", "HOME": tmp})
    return e


def botocore_resolve(env, profile):
    p = subprocess.run([sys.executable, "-c", BOTOCORE, profile or ""],
                       capture_output=True, text=True, env=env, timeout=60)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": "crashed: " + p.stderr[-300:]}


def ours(ext, port, env, profile):
    e = dict(env)
    preload.sqlite3_env(e)
    opt = ", profile='%s'" % profile if profile else ""
    script = (".bail off\n.headers off\n.load %s\n"
              "CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
              "endpoint='http://127.0.0.1:%d'%s);\n"
              "SELECT json_extract(dynamodb_info('t'), '$.region');\n"
              % (ext, TABLE, port, opt))
    p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch"],
                       input=script, capture_output=True, text=True, env=e,
                       cwd=ROOT, timeout=120)
    out = p.stdout + p.stderr
    return re.sub(r"^(Runtime|Parse) error near line \d+:", r"\1 error:",
                  out, flags=re.M).strip()


def botocore_auth(rec, port, region, ak, sk, token):
    """botocore's Authorization and token header for the recorded rec."""
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    transport = {"host", "content-length", "accept", "user-agent", "expect",
                 "accept-encoding", "connection", "authorization",
                 "x-amz-date", "x-amz-security-token"}
    hdrs = rec["headers"]
    date = [v for k, v in hdrs if k.lower() == "x-amz-date"][0]
    fixed = datetime.datetime.strptime(date, "%Y%m%dT%H%M%SZ")
    botocore.auth.get_current_datetime = lambda *a, **k: fixed
    req = AWSRequest(method=rec["method"],
                     url="http://127.0.0.1:%d%s" % (port, rec["path"]),
                     data=base64.b64decode(rec["body"]),
                     headers={k: v for k, v in hdrs
                              if k.lower() not in transport})
    botocore.auth.SigV4Auth(Credentials(ak, sk, token), "dynamodb",
                            region).add_auth(req)
    return req.headers["Authorization"], req.headers.get(
        "X-Amz-Security-Token")


def compare(case, want, out, recs, port):
    """A list of differences (empty: the two agree)."""
    name, _, _, _, _, words = case
    bad = []
    usable = "error" not in want and want.get("ak") and want.get("sk")
    if not usable:
        first = out.splitlines()[0] if out else ""
        if not first.startswith(("Runtime error: dynamodb:",
                                 "Parse error: dynamodb:")):
            bad.append("botocore: %s; ours did not fail: %r"
                       % (want.get("error", "an empty key"), out[:300]))
        for w in words:
            if w not in first:
                bad.append("our error lacks %r: %r" % (w, first[:300]))
        if recs:
            bad.append("%d request(s) sent" % len(recs))
        return bad
    if not recs:
        return ["botocore: key id %s; ours sent nothing: %r"
                % (want["ak"], out[:300])]
    rec = recs[0]
    hd = {k.lower(): v for k, v in rec["headers"]}
    auth = hd.get("authorization", "")
    m = re.search(r"Credential=([^/]*)/\d+/([^/]*)/", auth)
    if not m or m.group(1) != want["ak"]:
        bad.append("key id: ours %r, botocore %r"
                   % (m and m.group(1), want["ak"]))
    if not m or m.group(2) != want["region"] or out != want["region"]:
        bad.append("region: ours %r (%r), botocore %r"
                   % (m and m.group(2), out, want["region"]))
    if not bad:
        theirs, tok = botocore_auth(rec, port, want["region"], want["ak"],
                                    want["sk"], want["tok"])
        if auth != theirs:
            bad.append("Authorization differs (secret or token): ours %s, "
                       "botocore %s" % (auth, theirs))
        if hd.get("x-amz-security-token") != tok:
            bad.append("token: ours %r, botocore %r"
                       % ((hd.get("x-amz-security-token") or "")[:40],
                          (tok or "")[:40]))
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
    tmp = tempfile.mkdtemp(prefix="ddb-profile21-")
    proxy, log = fixtures.recording_proxy(upstream, tmp)
    t = Tap("profiles as botocore: ")
    try:
        port = int(proxy.stdout.readline())
        proc = os.path.join(tmp, "proc.sh")
        with open(proc, "w") as f:
            f.write(PROC)
        os.chmod(proc, 0o700)
        for case in CASES:
            name, config, creds, profile, extra, _ = case
            for fname, text in (("config", config), ("credentials", creds)):
                with open(os.path.join(tmp, fname), "w", encoding="utf-8",
                          newline="") as f:
                    f.write(text.replace("@PROC@", proc))
            env = base_env(tmp)
            env.update(extra)
            want = botocore_resolve(env, profile)
            open(log, "w").close()
            out = ours(ext, port, env, profile)
            with open(log) as f:
                recs = [json.loads(line) for line in f]
            bad = compare(case, want, out, recs, port)
            t.ok(not bad, "%s (botocore: %s)"
                 % (name, want.get("error") or want.get("ak") or "an empty key"),
                 bad)
    finally:
        proxy.kill()
        proxy.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        fixtures.drop_table(client, TABLE)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
