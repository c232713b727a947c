#!/usr/bin/env python3
"""Fake AWS credential services on loopback (STS, SSO, SSO OIDC), for the
assumed-role and SSO credential tests.

Test code only.  ONE threaded HTTP server plays, by path and method:

  STS        POST /  (query protocol, form-encoded; Action=...)
             AssumeRole: must be SigV4-signed for service "sts" with a
             key this fake knows (FakeAWS.secrets, or one it issued: then
             X-Amz-Security-Token must be the token it issued with it);
             the signature is verified (else 403 SignatureDoesNotMatch /
             InvalidClientTokenId, as STS answers).
             AssumeRoleWithWebIdentity: unsigned; WebIdentityToken must
             be one of `web_tokens` when that list is set (else 400
             InvalidIdentityToken).
  SSO portal GET /federation/credentials?role_name=R&account_id=A with
             x-amz-sso_bearer_token: a token of `sso_tokens` (or one the
             OIDC part issued), else 401 UnauthorizedException.
  SSO OIDC   POST /token {"grantType": "refresh_token", "clientId",
             "clientSecret", "refreshToken"}: refreshToken one of
             `refresh_tokens` (or one issued), clientId/clientSecret a
             pair of `clients`, else 400 InvalidGrantException.
  container  GET /container (AWS_CONTAINER_CREDENTIALS_FULL_URI=
             http://127.0.0.1:PORT/container): container credentials
             JSON, the Authorization header recorded.
  IMDSv2     PUT /latest/api/token, GET /latest/meta-data/iam/
             security-credentials/[ROLE]
             (AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:PORT).
  the guard  CONNECT host:443 and absolute-URI requests (the fake is also
             set as http(s)_proxy, with no_proxy=127.0.0.1, so a client
             that tries a real AWS address reaches it): recorded as op
             "ESCAPE" and refused with 403; any other path: 404, op
             "UNKNOWN".

Every credential it hands out is derived from what was asked, so that a
test can tell who signed: AssumeRole's AccessKeyId is "ASIA" + 16 hex of
sha256("role|ARN|SOURCE-KEY-ID") (with `serial`, the last 4 of them
the number of the credential handed out), the web identity one of
("web|ARN|TOKEN"), the portal's of ("sso|ACCOUNT|ROLE|TOKEN"); the
secret and session token likewise.  Two clients asking the same thing get
the same credentials.  OIDC's new
access token is "aoa" + hash of the refresh token, the new refresh token
"aor" + hash.

Control (clients under test never call these):
  POST /_control  JSON: replaces the settings (keys below; missing ones
                  take their defaults) and clears the log
  POST /_reset    clears the log only
  GET  /_log      the calls since the last /_control or /_reset: a list
                  of objects with at least "op" (AssumeRole,
                  AssumeRoleWithWebIdentity, GetRoleCredentials,
                  CreateToken, container, imds-token, imds-role,
                  imds-creds, ESCAPE, UNKNOWN) and "status"

Settings:
  ttl          seconds until the credentials handed out expire (3600)
  exp_millis   STS Expiration with milliseconds ("...:05.123Z")
  serial       key ids end with 4 digits: the n-th credential handed out
  secrets      {access key id: secret} of the static keys AssumeRole may
               be signed with
  tokens       {access key id: session token} of those of `secrets` that
               must come with X-Amz-Security-Token
  web_tokens   [tokens] AssumeRoleWithWebIdentity accepts (null: any)
  sso_tokens   [tokens] the portal accepts
  refresh_tokens  [tokens] OIDC accepts; clients {clientId: secret}
  oidc_expires_in  expiresIn of OIDC's answer (28800)
  fail         {op: {"code": C, "status": S, "message": M, "count": N}}:
               the next N calls of op (all with N absent) fail with STS's
               (or the service's) error shape; code "500" an empty 500,
               "garbage" a 200 that is not XML/JSON; "after": M lets the
               first M calls through
  delay        {op: seconds}: the answer waits (a slow service)
  container_auth  the Authorization the container endpoint requires
               (null: none)

    fake_aws.py [--port N]     prints the port, serves until killed
or, in a test: srv = fake_aws.start(); srv.port; srv.control({...});
srv.log(); srv.stop().
"""

import argparse
import datetime
import hashlib
import hmac
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"
DEFAULTS = {"ttl": 3600, "exp_millis": False, "serial": False,
            "secrets": {}, "tokens": {}, "web_tokens": None, "sso_tokens": [],
            "refresh_tokens": [], "clients": {}, "oidc_expires_in": 28800,
            "fail": {}, "delay": {}, "container_auth": None}
STS_ERRORS = {"AccessDenied": 403, "ExpiredTokenException": 400,
              "InvalidIdentityToken": 400, "InvalidClientTokenId": 403,
              "SignatureDoesNotMatch": 403, "RegionDisabledException": 403,
              "IDPCommunicationError": 400, "InternalFailure": 500}


def h16(text):
    """16 upper-case hex digits of text's SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:16].upper()


class State:
    """Settings, issued credentials and the log (under lock)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.issued = {}      # key id -> (secret, token), every one handed out
        self.sso_issued = set()
        self.refresh_issued = set()
        self.count = 0
        self.calls = []
        self.escapes = []     # every ESCAPE and UNKNOWN, never cleared
        self.cfg = dict(DEFAULTS)

    def control(self, cfg):
        with self.lock:
            self.cfg = dict(DEFAULTS)
            self.cfg.update(cfg)
            self.cfg["fail"] = {k: dict(v) for k, v in
                                self.cfg["fail"].items()}
            self.calls = []

    def record(self, entry):
        with self.lock:
            entry["t"] = time.time()
            self.calls.append(entry)

    def take_fail(self, op):
        """The failure to answer op with now, or None."""
        with self.lock:
            f = self.cfg["fail"].get(op)
            if not f:
                return None
            if f.get("after", 0) > 0:
                f["after"] -= 1
                return None
            if "count" in f:
                if f["count"] <= 0:
                    return None
                f["count"] -= 1
            return dict(f)

    def creds(self, seed):
        """(key id, secret, token, expiry datetime) for seed, remembered."""
        with self.lock:
            self.count += 1
            ak = "ASIA" + h16(seed)
            if self.cfg["serial"]:  # letters and digits only, 20 of them
                ak = ak[:16] + "%04d" % (self.count % 10000)
            sk = "fakesecret/" + h16("secret|" + ak) + h16("s2|" + ak)
            tok = "FQoGZXIvYXdzE" + h16("token|" + ak) + h16("t2|" + ak) * 4
            exp = datetime.datetime.now(datetime.timezone.utc) + \
                datetime.timedelta(seconds=self.cfg["ttl"])
            self.issued[ak] = (sk, tok)
            return ak, sk, tok, exp


def sigv4_check(state, method, path, query, headers, body):
    """Verify a SigV4 Authorization: (key id, region, service, verdict)
    with verdict "ok", "none" (unsigned), "unknown-key", "bad-token" or
    "bad-signature"."""
    auth = headers.get("authorization")
    if not auth:
        return None, None, None, "none"
    try:
        algo, rest = auth.split(" ", 1)
        parts = dict(p.strip().split("=", 1) for p in rest.split(","))
        ak, date, region, service, _ = parts["Credential"].split("/")
        signed = parts["SignedHeaders"].split(";")
        sig = parts["Signature"]
    except (ValueError, KeyError):
        return None, None, None, "bad-signature"
    with state.lock:
        secret = state.cfg["secrets"].get(ak)
        token = state.cfg["tokens"].get(ak)
        if secret is None and ak in state.issued:
            secret, token = state.issued[ak]
    if secret is None:
        return ak, region, service, "unknown-key"
    if token is not None and headers.get("x-amz-security-token") != token:
        return ak, region, service, "bad-token"
    canon_q = "&".join(sorted(
        "%s=%s" % (urllib.parse.quote(k, safe="-_.~"),
                   urllib.parse.quote(v, safe="-_.~"))
        for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True)))
    canon_h = "".join("%s:%s\n" % (n, " ".join(headers.get(n, "").split()))
                      for n in signed)
    payload = headers.get("x-amz-content-sha256") or \
        hashlib.sha256(body).hexdigest()
    creq = "\n".join([method, path or "/", canon_q, canon_h, ";".join(signed),
                      payload])
    amzdate = headers.get("x-amz-date", "")
    scope = "/".join([date, region, service, "aws4_request"])
    sts = "\n".join([algo, amzdate, scope,
                     hashlib.sha256(creq.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    ok = hmac.compare_digest(want, sig) and amzdate.startswith(date)
    return ak, region, service, "ok" if ok else "bad-signature"


def iso(exp, millis=False):
    if millis:
        return exp.strftime("%Y-%m-%dT%H:%M:%S.") + \
            "%03dZ" % (exp.microsecond // 1000)
    return exp.strftime("%Y-%m-%dT%H:%M:%SZ")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-aws"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing ---------------------------------------------------------
    @property
    def state(self):
        return self.server.state

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def answer(self, status, body, ctype="text/xml", extra=()):
        if isinstance(body, str):
            body = body.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("x-amzn-RequestId",
                             "fake-" + h16(str(time.time())))
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client went away (an interrupted call)

    def lheaders(self):
        return {k.lower(): v for k, v in self.headers.items()}

    def wait(self, op):
        with self.state.lock:
            d = float(self.state.cfg["delay"].get(op, 0))
        if d:
            time.sleep(d)

    def guard(self, entry_op="ESCAPE"):
        entry = {"op": entry_op, "method": self.command, "target": self.path,
                 "status": 403 if entry_op == "ESCAPE" else 404}
        self.state.record(entry)
        with self.state.lock:
            self.state.escapes.append(dict(entry))
        self.answer(403 if entry_op == "ESCAPE" else 404, b"no")

    # -- methods ----------------------------------------------------------
    def do_CONNECT(self):
        self.guard()

    def do_PUT(self):
        if not self.path.startswith("/"):
            return self.guard()
        self.body()
        if self.path == "/latest/api/token" and \
                self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            self.state.record({"op": "imds-token", "status": 200})
            return self.answer(200, "fake-imds-token", "text/plain")
        self.guard("UNKNOWN")

    def do_GET(self):
        if not self.path.startswith("/"):
            return self.guard()
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_log":
            with self.state.lock:
                data = json.dumps(self.state.calls)
            return self.answer(200, data, "application/json")
        if u.path == "/federation/credentials":
            return self.sso_portal(u)
        if u.path == "/container":
            return self.container()
        if u.path.startswith("/latest/meta-data/iam/security-credentials/"):
            return self.imds(u.path)
        self.guard("UNKNOWN")

    def do_POST(self):
        if not self.path.startswith("/"):
            return self.guard()
        body = self.body()
        u = urllib.parse.urlsplit(self.path)
        if u.path == "/_control":
            self.state.control(json.loads(body or b"{}"))
            return self.answer(200, "{}", "application/json")
        if u.path == "/_reset":
            with self.state.lock:
                self.state.calls = []
            return self.answer(200, "{}", "application/json")
        if u.path == "/token":
            return self.oidc(body)
        if u.path == "/":
            return self.sts(u, body)
        self.guard("UNKNOWN")

    # -- STS --------------------------------------------------------------
    def sts_error(self, entry, code, message, status=None):
        status = status or STS_ERRORS.get(code, 400)
        entry.update(status=status, error=code)
        self.state.record(entry)
        kind = "Receiver" if status >= 500 else "Sender"
        self.answer(status,
                    '<ErrorResponse xmlns="%s">\n  <Error>\n'
                    '    <Type>%s</Type>\n    <Code>%s</Code>\n'
                    '    <Message>%s</Message>\n  </Error>\n'
                    '  <RequestId>%s</RequestId>\n</ErrorResponse>\n'
                    % (STS_NS, kind, code, message, h16(str(time.time()))))

    def sts(self, u, body):
        hd = self.lheaders()
        form = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace"),
                                           keep_blank_values=True))
        op = form.get("Action", "")
        entry = {"op": op or "STS?", "path": self.path,
                 "content_type": hd.get("content-type"),
                 "version": form.get("Version"), "ua": hd.get("user-agent")}
        for k in ("RoleArn", "RoleSessionName", "ExternalId",
                  "DurationSeconds", "SerialNumber", "TokenCode",
                  "WebIdentityToken"):
            if k in form:
                entry[k] = form[k]
        ak, region, service, verdict = sigv4_check(
            self.state, "POST", u.path, u.query, hd, body)
        entry.update(ak=ak, region=region, service=service, sig=verdict,
                     token=hd.get("x-amz-security-token"))
        self.wait(op)
        if op not in ("AssumeRole", "AssumeRoleWithWebIdentity") or \
                form.get("Version") != "2011-06-15":
            return self.sts_error(entry, "InvalidAction",
                                  "Could not find operation %s" % op, 400)
        if op == "AssumeRole":
            if verdict == "none":
                return self.sts_error(entry, "MissingAuthenticationToken",
                                      "Request is missing Authentication "
                                      "Token", 403)
            if service != "sts":
                return self.sts_error(entry, "SignatureDoesNotMatch",
                                      "Credential should be scoped to correct"
                                      " service: 'sts'.")
            if verdict in ("unknown-key", "bad-token"):
                return self.sts_error(entry, "InvalidClientTokenId",
                                      "The security token included in the "
                                      "request is invalid.")
            if verdict != "ok":
                return self.sts_error(entry, "SignatureDoesNotMatch",
                                      "The request signature we calculated "
                                      "does not match the signature you "
                                      "provided.")
        if not form.get("RoleArn") or not form.get("RoleSessionName"):
            return self.sts_error(entry, "ValidationError",
                                  "RoleArn and RoleSessionName are required",
                                  400)
        if op == "AssumeRoleWithWebIdentity":
            with self.state.lock:
                ok = self.state.cfg["web_tokens"]
            if ok is not None and form.get("WebIdentityToken") not in ok:
                return self.sts_error(entry, "InvalidIdentityToken",
                                      "Couldn't retrieve verification key "
                                      "from your identity provider")
        f = self.state.take_fail(op)
        if f:
            return self.fail_answer(entry, f, self.sts_error)
        arn = form["RoleArn"]
        if op == "AssumeRole":
            seed = "role|%s|%s" % (arn, ak)
        else:
            seed = "web|%s|%s" % (arn, form.get("WebIdentityToken", ""))
        nak, sk, tok, exp = self.state.creds(seed)
        with self.state.lock:
            millis = self.state.cfg["exp_millis"]
        entry.update(status=200, issued=nak)
        self.state.record(entry)
        sess = form["RoleSessionName"]
        account = arn.split(":")[4] if arn.count(":") >= 5 else "123456789012"
        role = arn.rsplit("/", 1)[-1]
        user = ("<AssumedRoleUser>\n      <AssumedRoleId>AROA%s:%s"
                "</AssumedRoleId>\n      <Arn>arn:aws:sts::%s:assumed-role/"
                "%s/%s</Arn>\n    </AssumedRoleUser>\n"
                % (h16(arn), sess, account, role, sess))
        extra = ""
        if op == "AssumeRoleWithWebIdentity":
            extra = ("    <SubjectFromWebIdentityToken>system:serviceaccount:"
                     "default:fake</SubjectFromWebIdentityToken>\n"
                     "    <Audience>sts.amazonaws.com</Audience>\n"
                     "    <Provider>arn:aws:iam::%s:oidc-provider/fake"
                     "</Provider>\n" % account)
        self.answer(200,
                    '<%sResponse xmlns="%s">\n  <%sResult>\n%s'
                    '    <Credentials>\n'
                    '      <AccessKeyId>%s</AccessKeyId>\n'
                    '      <SecretAccessKey>%s</SecretAccessKey>\n'
                    '      <SessionToken>%s</SessionToken>\n'
                    '      <Expiration>%s</Expiration>\n'
                    '    </Credentials>\n    %s'
                    '    <PackedPolicySize>6</PackedPolicySize>\n'
                    '  </%sResult>\n  <ResponseMetadata>\n'
                    '    <RequestId>%s</RequestId>\n  </ResponseMetadata>\n'
                    '</%sResponse>\n'
                    % (op, STS_NS, op, extra, nak, sk, tok,
                       iso(exp, millis), user, op, h16(nak), op))

    def fail_answer(self, entry, f, err_fn):
        code = str(f.get("code", "AccessDenied"))
        if code == "500":
            entry.update(status=500, error="500")
            self.state.record(entry)
            return self.answer(500, b"")
        if code == "garbage":
            entry.update(status=200, error="garbage")
            self.state.record(entry)
            return self.answer(200, b"<<<not xml {not json")
        return err_fn(entry, code, f.get("message", "fake %s" % code),
                      f.get("status"))

    # -- SSO portal and OIDC ----------------------------------------------
    def json_error(self, entry, code, message, status=None):
        status = status or 400
        entry.update(status=status, error=code)
        self.state.record(entry)
        self.answer(status, json.dumps({"message": message}),
                    "application/json", [("x-amzn-ErrorType", code)])

    def sso_portal(self, u):
        q = dict(urllib.parse.parse_qsl(u.query))
        tokn = self.headers.get("x-amz-sso_bearer_token")
        entry = {"op": "GetRoleCredentials", "role_name": q.get("role_name"),
                 "account_id": q.get("account_id"), "bearer": tokn,
                 "signed": "authorization" in self.lheaders(),
                 "ua": self.headers.get("User-Agent")}
        self.wait("GetRoleCredentials")
        with self.state.lock:
            valid = tokn in self.state.cfg["sso_tokens"] or \
                tokn in self.state.sso_issued
        if not valid:
            return self.json_error(entry, "UnauthorizedException",
                                   "Session token not found or invalid", 401)
        if not q.get("role_name") or not q.get("account_id"):
            return self.json_error(entry, "InvalidRequestException",
                                   "role_name and account_id are required")
        f = self.state.take_fail("GetRoleCredentials")
        if f:
            return self.fail_answer(entry, f, self.json_error)
        ak, sk, tok, exp = self.state.creds(
            "sso|%s|%s|%s" % (q["account_id"], q["role_name"], tokn))
        entry.update(status=200, issued=ak)
        self.state.record(entry)
        self.answer(200, json.dumps({"roleCredentials": {
            "accessKeyId": ak, "secretAccessKey": sk, "sessionToken": tok,
            "expiration": int(exp.timestamp() * 1000)}}), "application/json")

    def oidc(self, body):
        try:
            req = json.loads(body)
        except ValueError:
            req = {}
        entry = {"op": "CreateToken", "grantType": req.get("grantType"),
                 "clientId": req.get("clientId"),
                 "refreshToken": req.get("refreshToken"),
                 "signed": "authorization" in self.lheaders()}
        self.wait("CreateToken")
        with self.state.lock:
            cfg = self.state.cfg
            client_ok = cfg["clients"].get(req.get("clientId")) == \
                req.get("clientSecret") and req.get("clientSecret")
            rt_ok = req.get("refreshToken") in cfg["refresh_tokens"] or \
                req.get("refreshToken") in self.state.refresh_issued
            expires_in = int(cfg["oidc_expires_in"])
        if req.get("grantType") != "refresh_token":
            return self.json_error(entry, "UnsupportedGrantTypeException",
                                   "grant type not supported")
        if not client_ok:
            return self.json_error(entry, "InvalidClientException",
                                   "Invalid client", 401)
        if not rt_ok:
            return self.json_error(entry, "InvalidGrantException",
                                   "Invalid grant provided")
        f = self.state.take_fail("CreateToken")
        if f:
            return self.fail_answer(entry, f, self.json_error)
        at = "aoa" + h16("oidc|" + req["refreshToken"]) * 3
        rt = "aor" + h16("oidcr|" + req["refreshToken"]) * 3
        with self.state.lock:
            self.state.sso_issued.add(at)
            self.state.refresh_issued.add(rt)
        entry.update(status=200, issued=at, new_refresh=rt)
        self.state.record(entry)
        self.answer(200, json.dumps({"accessToken": at, "tokenType": "Bearer",
                                     "expiresIn": expires_in,
                                     "refreshToken": rt}), "application/json")

    # -- container and instance metadata ----------------------------------
    def meta_creds(self, entry, seed):
        ak, sk, tok, exp = self.state.creds(seed)
        entry.update(status=200, issued=ak)
        self.state.record(entry)
        self.answer(200, json.dumps({
            "Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": ak,
            "SecretAccessKey": sk, "Token": tok,
            "Expiration": iso(exp)}), "application/json")

    def container(self):
        entry = {"op": "container",
                 "authorization": self.headers.get("Authorization")}
        with self.state.lock:
            need = self.state.cfg["container_auth"]
        if need is not None and entry["authorization"] != need:
            entry["status"] = 401
            self.state.record(entry)
            return self.answer(401, b"", "text/plain")
        self.meta_creds(entry, "container")

    def imds(self, path):
        if self.headers.get("X-aws-ec2-metadata-token") != "fake-imds-token":
            self.state.record({"op": "imds-creds", "status": 401})
            return self.answer(401, b"", "text/plain")
        if path.endswith("/"):
            self.state.record({"op": "imds-role", "status": 200})
            return self.answer(200, "fake-instance-role\n", "text/plain")
        self.meta_creds({"op": "imds-creds"}, "imds|" + path)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hung up (an interrupted or refused call)


class FakeAWS:
    """The server on a thread of the caller."""

    def __init__(self, port=0):
        self.httpd = Server(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.state = State()
        self.state = self.httpd.state
        self.port = self.httpd.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def control(self, cfg=None):
        self.state.control(cfg or {})

    def reset(self):
        with self.state.lock:
            self.state.calls = []

    def log(self, op=None):
        with self.state.lock:
            calls = [dict(c) for c in self.state.calls]
        return [c for c in calls if op is None or c["op"] == op]

    def escapes(self):
        """Every ESCAPE and UNKNOWN call since the start."""
        with self.state.lock:
            return [dict(c) for c in self.state.escapes]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def start(port=0):
    return FakeAWS(port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    srv = FakeAWS(args.port)
    print(srv.port, flush=True)
    try:
        srv.thread.join()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
