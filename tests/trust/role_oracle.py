#!/usr/bin/env python3
"""Assume-role, web identity and SSO credentials: the extension against
botocore, case by case, on the same files and environment.

Each case is a config file, a credentials file, other files (web identity
tokens, ~/.aws/sso/cache/<sha1>.json), an environment and a profile (the
profile= option: botocore's explicit profile; AWS_PROFILE is not one).
tests/faults/fake_aws.py, on a thread of this script, plays STS, the SSO
portal, SSO OIDC, a container endpoint and IMDSv2 on loopback, and is also
every client's http(s)_proxy (no_proxy=127.0.0.1): a client that tries a
real AWS address reaches it and is refused ("ESCAPE").

botocore (a child process with only the case's files and variables,
pointed at the fake with AWS_ENDPOINT_URL_STS/_SSO/_SSO_OIDC, or, before
botocore 1.31, with Session.create_client patched to pass endpoint_url:
the plan line says which) resolves the credentials; then, on freshly
written files, the extension in sqlite3 runs CREATE VIRTUAL TABLE through
tests/faults/proxy.py to DynamoDB Local, which records the DescribeTable.

  * botocore finds credentials: the recorded Authorization is the one
    botocore signs with them (key id, secret and token, byte for byte),
    X-Amz-Security-Token is botocore's token, the calls the fake saw are
    the same (operation, role ARN, the key id AssumeRole was signed with
    and the region of its signature, ExternalId, DurationSeconds, the
    session name when one is configured, the web identity token, the SSO
    role, account and bearer token, the refresh token), dynamodb_info()'s
    "credentials" holds the case's words, and an SSO token botocore
    refreshed is written back as botocore writes it;
  * botocore fails: ours fails with a one-line error holding the case's
    words, nothing reaches DynamoDB, and when botocore called no service
    ours called none;
  * always: no secret, session token, web identity token, SSO access or
    refresh token, client secret or container token appears in anything
    the extension printed (its messages, all of dynamodb_info(), the
    request log dynamodb_log) or in its database file, and nothing tried a
    non-loopback address.

mfa_serial cases run ours only (botocore would prompt for a code).
Needs AWS_ENDPOINT_URL_DYNAMODB and botocore.  Prints TAP lines.
"""

import datetime
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
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import preload  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "faults"))
sys.path.insert(0, os.path.join(ROOT, "tests", "trust"))
import fake_aws  # noqa: E402
from tap import Tap  # noqa: E402

TABLE = "Role29"
# static keys (the fake verifies AssumeRole's signature with these)
STATIC = {"AKIDSRC": "sEcReT-src-0001", "AKIDSRC2": "sEcReT-src-0002",
          "ASIATEMPSRC": "sEcReT-tempsrc-0007",
          "AKIDSELF": "sEcReT-self-0003", "AKIDENV": "sEcReT-env-0004",
          "AKIDDEF": "sEcReT-def-0005", "AKIDPROF": "sEcReT-prof-0006"}
WEBTOK = "eyJhbGciOiJSUzI1NiJ9.WEBIDENTITYTOKEN-one.c2lnbmF0dXJl"
WEBTOK2 = "eyJhbGciOiJSUzI1NiJ9.WEBIDENTITYTOKEN-two.c2lnbmF0dXJl"
TEMPTOK = "IQoJb3JpZ2luX2VjSOURCESESSIONTOKEN-0123"
SSOTOK = "aoaVALIDSSOACCESSTOKEN0123456789"
SSOOLD = "aoaEXPIREDSSOACCESSTOKEN987654321"
RT = "aorREFRESHTOKEN-abcdefghijklmnop"
CID = "clientid-0123"
CSEC = "cLiEnTsEcReT-4567"
CONTTOK = "Bearer cOnTaInErToKeN-89"
ROLE = "arn:aws:iam::111122223333:role/"
START = "https://corp.awsapps.com/start"
LEGACY = "https://legacy.awsapps.com/start#/"
SECRETS = list(STATIC.values()) + [WEBTOK, WEBTOK2, TEMPTOK, SSOTOK, SSOOLD,
                                   RT, CSEC,
                                   CONTTOK.split()[1]]


def sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


def when(seconds):
    t = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def sso_cache(start, token, expires_in, refresh=True, region="us-east-1"):
    d = {"startUrl": start, "region": region, "accessToken": token,
         "expiresAt": when(expires_in)}
    if refresh:
        d.update({"clientId": CID, "clientSecret": CSEC,
                  "registrationExpiresAt": when(30 * 86400),
                  "refreshToken": RT})
    return json.dumps(d)


def C(name, config="", creds="", files=None, env=None, profile=None,
      fake=None, words=(), info=(), sts=None, mode="oracle", cache=None,
      escape=None):
    """A case: words non-empty means both must fail; sts: parameters the
    last STS call of ours must carry; cache: an SSO cache file (relative
    to HOME) to compare after both runs; escape: the host:port both must
    have tried through the proxy (the case expects a failure there)."""
    return dict(name=name, config=config, creds=creds, files=files or {},
                env=env or {}, profile=profile, fake=fake or {},
                words=tuple(words), info=tuple(info), sts=sts or {},
                mode=mode, cache=cache, escape=escape)


SRC = ("[profile src]\naws_access_key_id = AKIDSRC\n"
       "aws_secret_access_key = %s\n" % STATIC["AKIDSRC"])
SSO_CFG = ("[profile dev]\nsso_session = corp\nsso_account_id = 111122223333"
           "\nsso_role_name = Dev\nregion = eu-west-1\n"
           "[sso-session corp]\nsso_start_url = %s\nsso_region = us-east-1\n"
           % START)
LEGACY_CFG = ("[profile dev]\nsso_start_url = %s\nsso_region = us-east-1\n"
              "sso_account_id = 111122223333\nsso_role_name = Dev\n"
              "region = eu-west-1\n" % LEGACY)
CORP_CACHE = ".aws/sso/cache/%s.json" % sha1("corp")
LEGACY_CACHE = ".aws/sso/cache/%s.json" % sha1(LEGACY)
IRSA = {"AWS_WEB_IDENTITY_TOKEN_FILE": "@DIR@/web-token",
        "AWS_ROLE_ARN": ROLE + "irsa", "AWS_ROLE_SESSION_NAME": "pod-1"}
CONTAINER = {"AWS_CONTAINER_CREDENTIALS_FULL_URI": "@FAKE@/container",
             "AWS_CONTAINER_AUTHORIZATION_TOKEN": CONTTOK}
ENVKEYS = {"AWS_ACCESS_KEY_ID": "AKIDENV",
           "AWS_SECRET_ACCESS_KEY": STATIC["AKIDENV"]}
NOSTS = {"AWS_ENDPOINT_URL_STS": None}

CASES = [
    # -- assume role ------------------------------------------------------
    C("role_arn + source_profile (static keys)",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", info=(ROLE + "R1", "src")),
    C("the same through AWS_PROFILE",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      env={"AWS_PROFILE": "r"}, info=(ROLE + "R1",)),
    C("a chain of 2 hops",
      "[profile r2]\nrole_arn = %sR2\nsource_profile = r1\n"
      "[profile r1]\nrole_arn = %sR1\nsource_profile = src\n" % (ROLE, ROLE)
      + SRC, profile="r2", info=(ROLE + "R2", ROLE + "R1")),
    C("a chain of 3 hops; only the first profile's region signs STS",
      "[profile r3]\nrole_arn = %sR3\nsource_profile = r2\nregion = "
      "ap-south-1\n[profile r2]\nrole_arn = %sR2\nsource_profile = r1\n"
      "region = us-west-2\n[profile r1]\nrole_arn = %sR1\n"
      "source_profile = src\n" % (ROLE, ROLE, ROLE) + SRC, profile="r3",
      env={"AWS_REGION": None, "AWS_DEFAULT_REGION": None},
      info=(ROLE + "R3", ROLE + "R1")),
    C("source_profile = itself, with static keys",
      "[profile self]\nrole_arn = %sSELF\nsource_profile = self\n"
      "aws_access_key_id = AKIDSELF\naws_secret_access_key = %s\n"
      % (ROLE, STATIC["AKIDSELF"]), profile="self", info=(ROLE + "SELF",)),
    C("source_profile = itself, without keys: a loop",
      "[profile self]\nrole_arn = %sSELF\nsource_profile = self\n" % ROLE,
      profile="self", words=("loop", "'self'")),
    C("a loop of two profiles",
      "[profile a]\nrole_arn = %sA\nsource_profile = b\n"
      "[profile b]\nrole_arn = %sB\nsource_profile = a\n" % (ROLE, ROLE),
      profile="a", words=("loop",)),
    C("source_profile names a missing profile",
      "[profile r]\nrole_arn = %sR1\nsource_profile = nosuch\n" % ROLE,
      profile="r", words=("source_profile", "'nosuch'")),
    C("a source profile without credentials",
      "[profile r]\nrole_arn = %sR1\nsource_profile = empty\n"
      "[profile empty]\nregion = eu-west-1\n" % ROLE,
      profile="r", words=("'empty'",)),
    C("source keys with a session token sign AssumeRole with it",
      "[profile r]\nrole_arn = %sR1\nsource_profile = tmp\n"
      "[profile tmp]\naws_access_key_id = ASIATEMPSRC\n"
      "aws_secret_access_key = %s\naws_session_token = %s\n"
      % (ROLE, STATIC["ASIATEMPSRC"], TEMPTOK), profile="r"),
    C("a source profile with keys and a role_arn: its keys, not its role",
      "[profile r]\nrole_arn = %sR1\nsource_profile = mid\n"
      "[profile mid]\nrole_arn = %sMID\nsource_profile = src\n"
      "aws_access_key_id = AKIDSRC2\naws_secret_access_key = %s\n"
      % (ROLE, ROLE, STATIC["AKIDSRC2"]) + SRC, profile="r"),
    C("a hop whose role has credential_source = Environment",
      "[profile r]\nrole_arn = %sR2\nsource_profile = mid\n"
      "[profile mid]\nrole_arn = %sMID\ncredential_source = Environment\n"
      % (ROLE, ROLE), profile="r", env=ENVKEYS,
      info=(ROLE + "R2", ROLE + "MID", "environment")),
    C("source keys in the credentials file",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE,
      "[src]\naws_access_key_id = AKIDSRC2\naws_secret_access_key = %s\n"
      % STATIC["AKIDSRC2"], profile="r", info=(ROLE + "R1",)),
    C("credential_source = Environment",
      "[profile r]\nrole_arn = %sENV\ncredential_source = Environment\n"
      % ROLE, profile="r", env=ENVKEYS, info=(ROLE + "ENV", "environment")),
    C("credential_source = Environment without keys there",
      "[profile r]\nrole_arn = %sENV\ncredential_source = Environment\n"
      % ROLE, profile="r", words=("credential_source", "Environment")),
    C("credential_source = EcsContainer",
      "[profile r]\nrole_arn = %sECS\ncredential_source = EcsContainer\n"
      % ROLE, profile="r", env=CONTAINER, info=(ROLE + "ECS",)),
    C("credential_source = Ec2InstanceMetadata",
      "[profile r]\nrole_arn = %sEC2\ncredential_source = "
      "Ec2InstanceMetadata\n" % ROLE, profile="r",
      env={"AWS_EC2_METADATA_DISABLED": None,
           "AWS_EC2_METADATA_SERVICE_ENDPOINT": "@FAKE@"},
      info=(ROLE + "EC2", "instance metadata")),
    C("credential_source = Ec2InstanceMetadata with IMDS disabled",
      "[profile r]\nrole_arn = %sEC2\ncredential_source = "
      "Ec2InstanceMetadata\n" % ROLE, profile="r",
      words=("credential_source", "Ec2InstanceMetadata")),
    C("credential_source = EcsContainer without a container endpoint",
      "[profile r]\nrole_arn = %sECS\ncredential_source = EcsContainer\n"
      % ROLE, profile="r", words=("credential_source", "EcsContainer")),
    C("credential_source of an unknown name",
      "[profile r]\nrole_arn = %sR1\ncredential_source = Laptop\n" % ROLE,
      profile="r", words=("credential_source", "Laptop")),
    C("both source_profile and credential_source",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n"
      "credential_source = Environment\n" % ROLE + SRC, profile="r",
      env=ENVKEYS, words=("source_profile", "credential_source")),
    C("neither source_profile nor credential_source",
      "[profile r]\nrole_arn = %sR1\n" % ROLE, profile="r",
      words=("source_profile", "credential_source")),
    C("role_session_name, external_id, duration_seconds are sent",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n"
      "role_session_name = analyst-7\nexternal_id = ext-0042\n"
      "duration_seconds = 7200\n" % ROLE + SRC, profile="r",
      sts={"RoleSessionName": "analyst-7", "ExternalId": "ext-0042",
           "DurationSeconds": "7200"}),
    C("duration_seconds that is no number is left out, as botocore does",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n"
      "duration_seconds = an hour\n" % ROLE + SRC, profile="r"),
    C("credential_source spelled in lower case is no source",
      "[profile r]\nrole_arn = %sENV\ncredential_source = environment\n"
      % ROLE, profile="r", env=ENVKEYS,
      words=("credential_source", "environment")),
    C("a source profile with a credential_process",
      "[profile r]\nrole_arn = %sR1\nsource_profile = proc\n"
      "[profile proc]\ncredential_process = @DIR@/proc.sh\n" % ROLE,
      files={"proc.sh": "#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\":"
             " \"AKIDSRC2\", \"SecretAccessKey\": \"%s\"}'\n"
             % STATIC["AKIDSRC2"]}, profile="r", info=(ROLE + "R1",)),
    C("a source profile with web identity",
      "[profile r]\nrole_arn = %sAFTERWEB\nsource_profile = w\n"
      "[profile w]\nrole_arn = %sWEB\nweb_identity_token_file = "
      "@DIR@/web-token\n" % (ROLE, ROLE), files={"web-token": WEBTOK},
      profile="r", info=(ROLE + "AFTERWEB", ROLE + "WEB")),
    C("STS answers after 2 seconds",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", fake={"delay": {"AssumeRole": 2}}),
    C("mfa_serial is refused, naming it (botocore would prompt)",
      "[profile r]\nrole_arn = %sMFA\nsource_profile = src\n"
      "mfa_serial = arn:aws:iam::111122223333:mfa/me\n" % ROLE + SRC,
      profile="r", mode="ours", words=("mfa_serial",)),
    C("STS refuses: AccessDenied",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", fake={"fail": {"AssumeRole": {
          "code": "AccessDenied", "message": "User: arn:aws:iam::1:user/x "
          "is not authorized to perform: sts:AssumeRole"}}},
      words=("AccessDenied", ROLE + "R1")),
    C("STS refuses: ExpiredTokenException",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", fake={"fail": {"AssumeRole": {
          "code": "ExpiredTokenException",
          "message": "The security token included in the request is "
          "expired"}}}, words=("ExpiredToken",)),
    C("STS answers 500 once, then credentials (a retry)",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", fake={"fail": {"AssumeRole": {"code": "500",
                                                 "count": 1}}}),
    C("STS answers garbage",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", fake={"fail": {"AssumeRole": {"code": "garbage"}}},
      words=(ROLE + "R1",)),
    C("STS's Expiration with milliseconds",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", fake={"exp_millis": True}),
    # -- web identity -----------------------------------------------------
    C("web_identity_token_file + role_arn in the profile",
      "[profile w]\nrole_arn = %sWEB\nweb_identity_token_file = "
      "@DIR@/web-token\nrole_session_name = web-sess\n" % ROLE,
      files={"web-token": WEBTOK}, profile="w",
      info=(ROLE + "WEB", "web identity")),
    C("web identity from the environment (EKS IRSA)", "",
      files={"web-token": WEBTOK}, env=IRSA,
      info=(ROLE + "irsa", "AWS_WEB_IDENTITY_TOKEN_FILE")),
    C("a web identity token file ending in a newline", "",
      files={"web-token": WEBTOK + "\n"}, env=IRSA,
      fake={"web_tokens": [WEBTOK, WEBTOK + "\n"]}),
    C("web identity environment without AWS_ROLE_ARN", "",
      files={"web-token": WEBTOK},
      env={"AWS_WEB_IDENTITY_TOKEN_FILE": "@DIR@/web-token"},
      words=("AWS_ROLE_ARN",)),
    C("STS refuses the web identity token: InvalidIdentityToken", "",
      files={"web-token": "not-a-valid-token"}, env=IRSA,
      words=("InvalidIdentityToken",)),
    C("a missing web identity token file", "", env=IRSA,
      words=("web-token",)),
    C("the environment's AWS_ROLE_ARN over the profile's role_arn",
      "[default]\nweb_identity_token_file = @DIR@/web-token\n"
      "role_arn = %sPROFILEWEB\n" % ROLE,
      files={"web-token": WEBTOK}, env={"AWS_ROLE_ARN": ROLE + "ENVWEB"}),
    # -- precedence -------------------------------------------------------
    C("environment keys over AWS_PROFILE naming a role profile",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      env=dict(ENVKEYS, AWS_PROFILE="r"), info=("environment",)),
    C("profile= naming a role profile over environment keys",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      env=ENVKEYS, profile="r", info=(ROLE + "R1",)),
    C("IRSA over a default profile with keys", "",
      "[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key = %s\n"
      % STATIC["AKIDDEF"], files={"web-token": WEBTOK}, env=IRSA,
      info=(ROLE + "irsa",)),
    C("IRSA over AWS_PROFILE naming a profile with keys", "",
      "[p]\naws_access_key_id = AKIDPROF\naws_secret_access_key = %s\n"
      % STATIC["AKIDPROF"], files={"web-token": WEBTOK},
      env=dict(IRSA, AWS_PROFILE="p"), info=(ROLE + "irsa",)),
    C("profile= disables the web identity environment", "",
      "[p]\naws_access_key_id = AKIDPROF\naws_secret_access_key = %s\n"
      % STATIC["AKIDPROF"], files={"web-token": WEBTOK}, env=IRSA,
      profile="p", info=("profile 'p'",)),
    C("profile= naming a web identity profile: the environment's "
      "AWS_ROLE_ARN and token file are not used",
      "[profile w]\nrole_arn = %sWEB\nweb_identity_token_file = "
      "@DIR@/web-token-2\n" % ROLE,
      files={"web-token": WEBTOK, "web-token-2": WEBTOK2}, env=IRSA,
      profile="w", info=(ROLE + "WEB",)),
    C("IRSA over container credentials", "", files={"web-token": WEBTOK},
      env=dict(IRSA, **CONTAINER), info=(ROLE + "irsa",)),
    C("environment keys over IRSA", "", files={"web-token": WEBTOK},
      env=dict(IRSA, **ENVKEYS), info=("environment",)),
    C("a default role profile over IRSA",
      "[default]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      files={"web-token": WEBTOK}, env=IRSA, info=(ROLE + "R1",)),
    # -- IAM Identity Center ----------------------------------------------
    C("sso_session profile, a valid cached token", SSO_CFG,
      files={CORP_CACHE: sso_cache(START, SSOTOK, 8 * 3600)}, profile="dev",
      info=("corp", "dev")),
    C("legacy sso_start_url profile, a valid cached token", LEGACY_CFG,
      files={LEGACY_CACHE: sso_cache(LEGACY, SSOTOK, 8 * 3600, False)},
      profile="dev", info=("dev",)),
    C("sso_session, an expired token refreshed through SSO OIDC", SSO_CFG,
      files={CORP_CACHE: sso_cache(START, SSOOLD, -3600)}, profile="dev",
      cache=CORP_CACHE, info=("corp",)),
    C("sso_session, a token 5 minutes from expiry is refreshed", SSO_CFG,
      files={CORP_CACHE: sso_cache(START, SSOTOK, 300)}, profile="dev",
      cache=CORP_CACHE),
    C("sso_session, an expired token without refresh fields", SSO_CFG,
      files={CORP_CACHE: sso_cache(START, SSOOLD, -3600, False)},
      profile="dev", words=("aws sso login --profile dev",)),
    C("legacy profile, an expired token is not refreshed", LEGACY_CFG,
      files={LEGACY_CACHE: sso_cache(LEGACY, SSOOLD, -3600)}, profile="dev",
      words=("aws sso login --profile dev",)),
    C("sso_session, no cached token", SSO_CFG, profile="dev",
      words=("aws sso login --profile dev",)),
    C("sso_session, the portal refuses the token (401)", SSO_CFG,
      files={CORP_CACHE: sso_cache(START, "aoaREVOKEDTOKEN-000", 8 * 3600)},
      profile="dev", words=("aws sso login --profile dev",)),
    C("sso_session naming a missing [sso-session]",
      "[profile dev]\nsso_session = nope\nsso_account_id = 111122223333\n"
      "sso_role_name = Dev\n", profile="dev", words=("nope",)),
    C("SSO OIDC refuses the refresh: the expired token is an error",
      SSO_CFG, files={CORP_CACHE: sso_cache(START, SSOOLD, -3600)},
      profile="dev", fake={"refresh_tokens": []},
      words=("aws sso login --profile dev",)),
    C("an SSO profile as a role's source_profile",
      "[profile r]\nrole_arn = %sFROMSSO\nsource_profile = dev\n" % ROLE
      + SSO_CFG, files={CORP_CACHE: sso_cache(START, SSOTOK, 8 * 3600)},
      profile="r", info=(ROLE + "FROMSSO",)),
    # -- endpoints --------------------------------------------------------
    C("STS's endpoint from the config file's services section",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n"
      "services = fakes\n[services fakes]\nsts =\n  endpoint_url = @FAKE@\n"
      % ROLE + SRC, profile="r", env=NOSTS),
    C("STS's endpoint from endpoint_url of the profile",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n"
      "endpoint_url = @FAKE@\n" % ROLE + SRC, profile="r", env=NOSTS),
    C("STS's endpoint from AWS_ENDPOINT_URL",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", env=dict(NOSTS, AWS_ENDPOINT_URL="@FAKE@")),
    C("the portal and OIDC endpoints from the services section",
      SSO_CFG.replace("region = eu-west-1\n", "region = eu-west-1\n"
                      "services = fakes\n")
      + "[services fakes]\nsso =\n  endpoint_url = @FAKE@\n"
      "sso_oidc =\n  endpoint_url = @FAKE@\n",
      files={CORP_CACHE: sso_cache(START, SSOOLD, -3600)}, profile="dev",
      env={"AWS_ENDPOINT_URL_SSO": None, "AWS_ENDPOINT_URL_SSO_OIDC": None},
      cache=CORP_CACHE),
    C("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: the regional STS endpoint",
      "[profile r]\nrole_arn = %sR1\nsource_profile = src\n" % ROLE + SRC,
      profile="r", env={"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"},
      words=(ROLE + "R1",), escape="sts.eu-west-1.amazonaws.com:443"),
]

BOTOCORE = r"""
import json, os, sys
import botocore, botocore.session
profile = sys.argv[1] or None
ver = tuple(int(x) for x in botocore.__version__.split(".")[:2])
if ver < (1, 31):
    VARS = {"sts": "AWS_ENDPOINT_URL_STS", "sso": "AWS_ENDPOINT_URL_SSO",
            "sso-oidc": "AWS_ENDPOINT_URL_SSO_OIDC"}
    orig = botocore.session.Session.create_client
    def create_client(self, service_name, *a, **k):
        url = os.environ.get(VARS.get(service_name, "-")) or \
            os.environ.get("AWS_ENDPOINT_URL")
        if url and not k.get("endpoint_url"):
            k["endpoint_url"] = url
        return orig(self, service_name, *a, **k)
    botocore.session.Session.create_client = create_client
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
    print(json.dumps({"error": type(e).__name__, "message": str(e)[:300]}))
"""


def botocore_mode():
    p = subprocess.run([sys.executable, "-c", "import botocore; "
                        "print(botocore.__version__)"], capture_output=True,
                       text=True)
    v = p.stdout.strip()
    try:
        new = tuple(int(x) for x in v.split(".")[:2]) >= (1, 31)
    except ValueError:
        new = False
    return "botocore %s, %s" % (v, "AWS_ENDPOINT_URL_STS/_SSO/_SSO_OIDC" if
                                new else "create_client patched with "
                                "endpoint_url (before 1.31)")


def subst(text, tmp, fake):
    return text.replace("@DIR@", tmp).replace("@FAKE@", fake)


def case_env(case, tmp, fake):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("AWS_") and k.lower() not in
         ("http_proxy", "https_proxy", "no_proxy", "all_proxy")}
    e.update({"AWS_CONFIG_FILE": os.path.join(tmp, "config"),
              "AWS_SHARED_CREDENTIALS_FILE": os.path.join(tmp, "credentials"),
              "AWS_EC2_METADATA_DISABLED": "true", "HOME": tmp,
              "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1",
              "AWS_ENDPOINT_URL_STS": fake, "AWS_ENDPOINT_URL_SSO": fake,
              "AWS_ENDPOINT_URL_SSO_OIDC": fake})
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        e[k] = fake
    e["no_proxy"] = e["NO_PROXY"] = "127.0.0.1,localhost"
    for k, v in case["env"].items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = subst(v, tmp, fake)
    return e


def write_files(case, tmp, fake):
    """Write the case's files afresh (the previous run may have changed
    them) in a clean directory."""
    for name in os.listdir(tmp):
        p = os.path.join(tmp, name)
        if name not in ("requests.jsonl",):
            if os.path.isdir(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
    files = {"config": case["config"], "credentials": case["creds"]}
    files.update(case["files"])
    for rel, text in files.items():
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(subst(text, tmp, fake))
        if rel.endswith(".sh"):
            os.chmod(path, 0o700)


def botocore_resolve(env, profile):
    p = subprocess.run([sys.executable, "-c", BOTOCORE, profile or ""],
                       capture_output=True, text=True, env=env, timeout=120,
                       stdin=subprocess.DEVNULL)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"error": "crashed: " + p.stderr[-300:]}


def ours(ext, port, env, profile, db):
    e = dict(env)
    preload.sqlite3_env(e)
    opt = ", profile='%s'" % profile if profile else ""
    script = (".bail off\n.headers off\n.load %s\n"
              "CREATE VIRTUAL TABLE t USING dynamodb(table=%s, "
              "endpoint='http://127.0.0.1:%d'%s);\n"
              "SELECT json_extract(dynamodb_info('t'), '$.region');\n"
              "SELECT json_extract(dynamodb_info('t'), '$.credentials');\n"
              "SELECT dynamodb_info('t');\nSELECT * FROM dynamodb_log;\n"
              % (ext, TABLE, port, opt))
    p = subprocess.run([os.environ.get("SQLITE3", "sqlite3"), "-batch", db],
                       input=script, capture_output=True, text=True, env=e,
                       cwd=ROOT, timeout=180)
    out = p.stderr + p.stdout  # the error first, whatever the log shows
    return re.sub(r"^(Runtime|Parse) error near line \d+:", r"\1 error:",
                  out, flags=re.M).strip()


def call_key(c, named_session):
    """What must agree between botocore's calls and ours."""
    op = c["op"]
    if op == "AssumeRole":
        return (op, c.get("RoleArn"), c.get("ak"), c.get("region"),
                c.get("ExternalId"), c.get("DurationSeconds"),
                c.get("SerialNumber"),
                c.get("RoleSessionName") if named_session else None,
                c.get("status"))
    if op == "AssumeRoleWithWebIdentity":
        return (op, c.get("RoleArn"), c.get("WebIdentityToken"),
                c.get("RoleSessionName") if named_session else None,
                c.get("sig"), c.get("status"))
    if op == "GetRoleCredentials":
        return (op, c.get("role_name"), c.get("account_id"),
                c.get("bearer"), c.get("signed"), c.get("status"))
    if op == "CreateToken":
        return (op, c.get("clientId"), c.get("refreshToken"),
                c.get("signed"), c.get("status"))
    if op == "container":
        return (op, c.get("authorization"), c.get("status"))
    return (op, c.get("target"), c.get("status"))


def summary(k):
    """A call key without its secrets, for a message."""
    return "(" + ", ".join("<secret>" if isinstance(x, str) and
                           any(s in x for s in SECRETS) or
                           isinstance(x, str) and x.startswith("aoa")
                           else repr(x) for x in k) + ")"


def compare_calls(bcalls, ocalls):
    named = any(c.get("RoleSessionName") and not c["RoleSessionName"]
                .startswith("botocore-session-") for c in bcalls)
    b = [call_key(c, named) for c in bcalls if c["op"] != "ESCAPE"]
    o = [call_key(c, named) for c in ocalls if c["op"] != "ESCAPE"]
    if b == o:
        return []
    return ["calls differ:", "  botocore: " + "; ".join(map(summary, b)),
            "  ours:     " + "; ".join(map(summary, o))]


def cache_diff(bfile, ofile):
    """Differences between botocore's and our SSO cache file after a
    refresh (dicts, or None when unreadable)."""
    if bfile is None or ofile is None:
        return ["SSO cache file: botocore %s, ours %s" % (
            "readable" if bfile else "unreadable",
            "readable" if ofile else "unreadable")]
    bad = []
    if sorted(bfile) != sorted(ofile):
        bad.append("SSO cache keys: botocore %s, ours %s"
                   % (sorted(bfile), sorted(ofile)))
    for k in ("startUrl", "region", "accessToken", "refreshToken",
              "clientId", "clientSecret", "registrationExpiresAt"):
        if bfile.get(k) != ofile.get(k):
            bad.append("SSO cache %s differs" % k)
    try:
        def ts(v):
            return datetime.datetime.strptime(v[:19], "%Y-%m-%dT%H:%M:%S")
        if abs((ts(bfile["expiresAt"]) - ts(ofile["expiresAt"]))
               .total_seconds()) > 300:
            bad.append("SSO cache expiresAt: botocore %s, ours %s"
                       % (bfile["expiresAt"], ofile["expiresAt"]))
    except (KeyError, TypeError, ValueError):
        bad.append("SSO cache expiresAt: botocore %r, ours %r"
                   % (bfile.get("expiresAt"), ofile.get("expiresAt")))
    return bad


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def secrets_seen(texts, fake):
    """The secrets (by kind) found in any of texts."""
    with fake.state.lock:
        issued = [v for pair in fake.state.issued.values() for v in pair]
        sso = list(fake.state.sso_issued) + list(fake.state.refresh_issued)
    found = []
    for s in SECRETS + issued + sso:
        if len(s) >= 8 and any(s in t for t in texts):
            found.append(s[:6] + "...")
    return found


def check_case(case, want, bcalls, out, ocalls, recs, port, extra):
    """The differences between botocore's result and ours (empty: ok)."""
    from profile_oracle import botocore_auth
    bad = []
    lines = out.splitlines()
    first = lines[0] if lines else ""
    expect_fail = bool(case["words"])
    if case["mode"] == "oracle":
        if expect_fail and "error" not in want:
            bad.append("the case expects a failure, botocore found %s"
                       % want.get("ak"))
        if not expect_fail and "error" in want:
            bad.append("the case expects credentials, botocore: %s: %s"
                       % (want["error"], want.get("message", "")))
        if bad:
            return bad + list(extra)
    bad = list(extra)
    if expect_fail:
        if not first.startswith(("Runtime error: dynamodb:",
                                 "Parse error: dynamodb:")):
            bad.append("ours did not fail: %r" % out[:300])
        for w in case["words"]:
            if w not in first:
                bad.append("our error lacks %r: %r" % (w, first[:400]))
        if recs:
            bad.append("%d request(s) reached DynamoDB" % len(recs))
        if case["mode"] == "oracle" and not bcalls and [
                c for c in ocalls if c["op"] != "ESCAPE"]:
            bad.append("botocore called no service; ours called %s"
                       % [c["op"] for c in ocalls])
        if case["mode"] == "ours" and ocalls:
            bad.append("ours called %s" % [c["op"] for c in ocalls])
        return bad
    if not recs:
        return bad + ["botocore: key id %s; ours sent nothing: %r"
                      % (want["ak"], out[:400])]
    hd = {k.lower(): v for k, v in recs[0]["headers"]}
    auth = hd.get("authorization", "")
    m = re.search(r"Credential=([^/]*)/\d+/([^/]*)/", auth)
    if not m or m.group(1) != want["ak"]:
        bad.append("key id: ours %r, botocore %r"
                   % (m and m.group(1), want["ak"]))
    elif lines[:1] != [want["region"]] or m.group(2) != want["region"]:
        bad.append("region: ours %r (%r), botocore %r"
                   % (m.group(2), lines[:1], want["region"]))
    else:
        theirs, tok = botocore_auth(recs[0], port, want["region"],
                                    want["ak"], want["sk"], want["tok"])
        if auth != theirs:
            bad.append("Authorization differs (secret or token)")
        if hd.get("x-amz-security-token") != tok:
            bad.append("X-Amz-Security-Token differs from botocore's")
    bad += compare_calls(bcalls, ocalls)
    info = lines[1] if len(lines) > 1 else ""
    for w in case["info"]:
        if w not in info:
            bad.append("dynamodb_info credentials lacks %r: %r" % (w, info))
    last = [c for c in ocalls if c["op"].startswith("AssumeRole")]
    for k, v in case["sts"].items():
        if not last or last[-1].get(k) != v:
            bad.append("STS call's %s: ours %r, want %r"
                       % (k, last and last[-1].get(k), v))
    return bad


def run_case(case, tmp, fake, ext, port, log, base_cfg):
    cfg = dict(base_cfg)
    cfg.update(case["fake"])
    env = case_env(case, tmp, fake.url)
    want, bcalls, bcache = {}, [], None
    if case["mode"] == "oracle":
        write_files(case, tmp, fake.url)
        fake.control(cfg)
        want = botocore_resolve(env, case["profile"])
        bcalls = fake.log()
        if case["cache"]:
            bcache = read_json(os.path.join(tmp, case["cache"]))
    write_files(case, tmp, fake.url)
    fake.control(cfg)
    open(log, "w").close()
    db = os.path.join(tmp, "role29.db")
    out = ours(ext, port, env, case["profile"], db)
    ocalls = fake.log()
    with open(log) as f:
        recs = [json.loads(line) for line in f]
    extra = []
    with open(db, "rb") as f:
        dbtext = f.read().decode("latin-1")
    texts = [out, dbtext]
    leaked = secrets_seen(texts, fake)
    if leaked:
        extra.append("secrets in our output or database file: %s" % leaked)
    if case["cache"] and not case["words"]:
        extra += cache_diff(bcache, read_json(os.path.join(tmp,
                                                           case["cache"])))
    esc = sorted({c["target"] for c in bcalls + ocalls
                  if c["op"] == "ESCAPE"})
    if case["escape"]:
        oesc = {c["target"] for c in ocalls if c["op"] == "ESCAPE"}
        besc = {c["target"] for c in bcalls if c["op"] == "ESCAPE"}
        if case["escape"] not in besc and case["mode"] == "oracle":
            extra.append("botocore did not try %s: %s"
                         % (case["escape"], sorted(besc)))
        if oesc != {case["escape"]}:
            extra.append("ours tried %s, botocore %s (want %s)"
                         % (sorted(oesc), sorted(besc), case["escape"]))
    elif esc:
        extra.append("a non-loopback address was tried: %s" % esc)
    return want, check_case(case, want, bcalls, out, ocalls, recs, port,
                            extra)


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
    tmp = tempfile.mkdtemp(prefix="ddb-role29-")
    proxy, log = fixtures.recording_proxy(upstream, tmp)
    fake = fake_aws.start()
    base_cfg = {"secrets": STATIC, "tokens": {"ASIATEMPSRC": TEMPTOK},
                "web_tokens": [WEBTOK, WEBTOK2],
                "sso_tokens": [SSOTOK], "refresh_tokens": [RT],
                "clients": {CID: CSEC}, "container_auth": CONTTOK}
    print("# %s" % botocore_mode())
    only = os.environ.get("ROLE_ORACLE_ONLY")
    t = Tap("roles as botocore: ")
    try:
        port = int(proxy.stdout.readline())
        for case in CASES:
            if only and only not in case["name"]:
                continue
            want, bad = run_case(case, tmp, fake, ext, port, log, base_cfg)
            got = "ours only" if case["mode"] == "ours" else \
                want.get("error") or want.get("ak") or "an empty key"
            t.ok(not bad, "%s (botocore: %s)" % (case["name"], got), bad)
    finally:
        proxy.kill()
        proxy.wait()
        fake.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        fixtures.drop_table(client, TABLE)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
