/*
** test_creds.c -- unit tests of client/creds.c: ISO 8601 times, the
** credential JSON of a credential_process and of the metadata endpoints,
** every link of the chain (environment, shared files with [profile x],
** credential_process, container credentials, IMDSv2), the "no
** credentials" message.  (The services section of the config file and the
** CA bundle: test_config.c; credentials inside a client:
** test_creds_client.c.)
**
** The container and instance-metadata endpoints are a small HTTP server on
** a thread of this process (creds_fixtures.h), reached through
** AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_EC2_METADATA_SERVICE_ENDPOINT.
** Every test saves and restores the environment it touches.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../client/ddb_client_int.h"
#include "creds_fixtures.h"
#include "tap.h"

/* Run the chain for profile; returns the result, fills the outputs (the
** caller frees them with chain_free). */
typedef struct chain_out {
  ddb_cred_source src;
  ddb_creds creds;
  char *what;
  ddb_error err;
} chain_out;

static ddb_result chain(const char *profile, int given, chain_out *o) {
  ddb_profile p;
  ddb_cred_env env;
  ddb_result r;
  memset(o, 0, sizeof(*o));
  r = ddb_profile_load(profile, 0, &p, &o->err);
  if(r)
    return r;
  memset(&env, 0, sizeof(env));
  env.top = &p;
  env.region = "us-east-1";
  r = ddb_creds_chain(&p, given, &env, &o->src, &o->creds, &o->what, &o->err);
  ddb_profile_free(&p);
  return r;
}

/* Free what chain() returned in o. */
static void chain_free(chain_out *o) {
  ddb_creds_clear(&o->creds);
  ddb_cred_source_free(&o->src);
  free(o->what);
}

/* ------------------------------------------------------------------------
** Tests
*/
static void test_iso8601(void) {
  static const struct {
    const char *s;
    int ok;
    int64_t want;
  } v[] = {
      {"1970-01-01T00:00:00Z", 1, 0},
      {"2030-01-02T03:04:05Z", 1, 1893553445},
      {"2030-01-02T03:04:05.123456Z", 1, 1893553445},
      {"2030-01-02T04:04:05+01:00", 1, 1893553445},
      {"2030-01-02T02:34:05-0030", 1, 1893553445},
      {"2000-02-29T12:00:00Z", 1, 951825600},
      {"2030-01-02t03:04:05z", 1, 1893553445},
      {"2030-01-02T03:04:05", 0, 0},
      {"2030-01-02 03:04:05Z", 0, 0},
      {"2030-13-02T03:04:05Z", 0, 0},
      {"2030-01-02T24:04:05Z", 0, 0},
      {"2030-01-02T03:04:05.Z", 0, 0},
      {"2030-01-02T03:04:05Zjunk", 0, 0},
      {"2030-01-02T03:04:05+25:00", 0, 0},
      {"", 0, 0},
      {"x", 0, 0},
  };
  size_t i;
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    int64_t t = -1;
    int rc = ddb_parse_iso8601(v[i].s, strlen(v[i].s), &t);
    if(!CHECK_MSG((rc == 0) == v[i].ok, "'%s': rc %d", v[i].s, rc))
      continue;
    if(v[i].ok)
      CHECK_MSG(t == v[i].want, "'%s': %lld, want %lld", v[i].s, (long long)t,
                (long long)v[i].want);
  }
}

/* The JSON of a credential_process and of the metadata endpoints. */
static void test_creds_json(void) {
  ddb_creds c;
  ddb_error e;
  const char *p1 = "{\"Version\":1,\"AccessKeyId\":\"AK\",\"SecretAccessKey\":"
                   "\"SK\",\"SessionToken\":\"TOK\",\"Expiration\":"
                   "\"2030-01-02T03:04:05Z\"}";
  ddb_error_clear(&e);
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 1, "p", &c, &e), DDB_OK);
  CHECK_STR(c.access_key, "AK");
  CHECK_STR(c.secret_key, "SK");
  CHECK_STR(c.session_token, "TOK");
  CHECK_INT(c.expires, 1893553445);
  ddb_creds_clear(&c);
  /* long-term keys: no token, no expiry */
  p1 = "{\"Version\":1,\"AccessKeyId\":\"AK\",\"SecretAccessKey\":\"SK\"}";
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 1, "p", &c, &e), DDB_OK);
  CHECK(c.session_token == NULL && c.expires == 0);
  ddb_creds_clear(&c);
  /* the metadata form: Token, Code */
  CHECK_INT(ddb_creds_from_json(ROLE_JSON, strlen(ROLE_JSON), 0, "m", &c, &e),
            DDB_OK);
  CHECK_STR(c.session_token, "roletoken");
  ddb_creds_clear(&c);
  /* errors name the source and never a secret */
  p1 = "{\"Version\":2,\"AccessKeyId\":\"AK\",\"SecretAccessKey\":\"SK\"}";
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 1, "proc", &c, &e),
            DDB_ERR_CONFIG);
  CHECK_STR(e.message, "proc: unsupported Version (expected 1)");
  p1 = "{\"Version\":1,\"AccessKeyId\":\"AK\"}";
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 1, "proc", &c, &e),
            DDB_ERR_CONFIG);
  CHECK_STR(e.message, "proc: the answer lacks SecretAccessKey");
  p1 = "{\"Version\":1,\"SecretAccessKey\":\"TOPSECRET\"}";
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 1, "proc", &c, &e),
            DDB_ERR_CONFIG);
  CHECK_STR(e.message, "proc: the answer lacks AccessKeyId");
  p1 = "{\"Version\":1,\"AccessKeyId\":\"AK\",\"SecretAccessKey\":"
       "\"TOPSECRET\",\"Expiration\":\"soon\"}";
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 1, "proc", &c, &e),
            DDB_ERR_CONFIG);
  CHECK_STR(e.message, "proc: Expiration 'soon' is not an ISO 8601 time");
  p1 = "TOPSECRET not json";
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 1, "proc", &c, &e),
            DDB_ERR_CONFIG);
  CHECK_STR(e.message, "proc: the answer is not a JSON object");
  p1 = "{\"Code\":\"Failure\",\"AccessKeyId\":\"AK\"}";
  CHECK_INT(ddb_creds_from_json(p1, strlen(p1), 0, "imds", &c, &e),
            DDB_ERR_CONFIG);
  CHECK_STR(e.message, "imds: Code is 'Failure'");
  CHECK(c.access_key == NULL && c.secret_key == NULL);
}

/* Links 1 and 2 of the chain: the environment, the shared files. */
static void test_chain_env_and_files(void) {
  sandbox s;
  chain_out o;
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  put_file(s.config, "[default]\nregion = us-west-2\n"
                     "[profile dev]\naws_access_key_id = CFGDEV\n"
                     "aws_secret_access_key = cfgdevsecret\n"
                     "aws_session_token = cfgdevtoken\n"
                     "[profile default]\nregion = ignored\n");
  put_file(s.creds, "[default]\naws_access_key_id = CREDDEF\n"
                    "aws_secret_access_key = creddefsecret\n");
  /* 1. the environment */
  setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
  setenv("AWS_SESSION_TOKEN", "envtoken", 1);
  CHECK_INT(chain("default", 0, &o), DDB_OK);
  CHECK_STR(o.what, "environment");
  CHECK_STR(o.creds.session_token, "envtoken");
  CHECK_INT(o.src.kind, DDB_CRED_STATIC);
  CHECK(o.creds.expires == 0);
  chain_free(&o);
  /* ... but not when the profile= option names a profile */
  CHECK_INT(chain("dev", 1, &o), DDB_OK);
  CHECK_STR(o.what, "profile 'dev'");
  CHECK_STR(o.creds.access_key, "CFGDEV");
  CHECK_STR(o.creds.session_token, "cfgdevtoken");
  chain_free(&o);
  /* 2. the credentials file's [default] */
  unsetenv("AWS_ACCESS_KEY_ID");
  CHECK_INT(chain("default", 0, &o), DDB_OK);
  CHECK_STR(o.what, "profile 'default'");
  CHECK_STR(o.creds.access_key, "CREDDEF");
  CHECK(o.creds.session_token == NULL);
  chain_free(&o);
  sandbox_close(&s);
}

/* Link 3: credential_process, its failures and AssumeRole profiles. */
static void test_chain_process(void) {
  sandbox s;
  chain_out o;
  char cfg[2048];
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  put_script(s.script,
             "#!/bin/sh\n"
             "echo '{\"Version\": 1, \"AccessKeyId\": \"PROCAK\", "
             "\"SecretAccessKey\": \"procsecret\", \"SessionToken\": "
             "\"proctoken\", \"Expiration\": \"2030-01-02T03:04:05Z\"}'\n");
  snprintf(cfg, sizeof(cfg),
           "[profile p]\ncredential_process = %s --flag 'x y'\n"
           "[profile bad]\ncredential_process = sh -c 'echo TOPSECRET; echo "
           "\"token expired, run aws sso login\" >&2; exit 3'\n"
           "[profile junk]\ncredential_process = echo TOPSECRET\n"
           "[profile both]\nrole_arn = arn:aws:iam::1:role/x\n"
           "source_profile = p\ncredential_source = Environment\n"
           "[profile neither]\nrole_arn = arn:aws:iam::1:role/x\n"
           "[profile loop1]\nrole_arn = arn:aws:iam::1:role/x\n"
           "source_profile = loop2\n"
           "[profile loop2]\nrole_arn = arn:aws:iam::1:role/y\n"
           "source_profile = loop1\n"
           "[profile self]\nrole_arn = arn:aws:iam::1:role/x\n"
           "source_profile = self\n"
           "[profile nosrc]\nrole_arn = arn:aws:iam::1:role/x\n"
           "source_profile = ghost\n"
           "[profile mfa]\nrole_arn = arn:aws:iam::1:role/x\n"
           "source_profile = p\nmfa_serial = arn:aws:iam::1:mfa/u\n"
           "[profile odd]\nrole_arn = arn:aws:iam::1:role/x\n"
           "credential_source = environment\n"
           "[profile wi]\nweb_identity_token_file = /nonexistent/token\n",
           s.script);
  put_file(s.config, cfg);
  CHECK_INT(chain("p", 1, &o), DDB_OK);
  CHECK_STR(o.what, "credential_process of profile 'p'");
  CHECK_STR(o.creds.access_key, "PROCAK");
  CHECK_STR(o.creds.session_token, "proctoken");
  CHECK_INT(o.creds.expires, 1893553445);
  CHECK_INT(o.src.kind, DDB_CRED_PROCESS);
  chain_free(&o);
  /* a failing process: its exit status and first line of stderr */
  CHECK_INT(chain("bad", 1, &o), DDB_ERR_CONFIG);
  CHECK_STR(o.err.message, "credential_process of profile 'bad' failed (exit "
                           "status 3): token expired, run aws sso login");
  chain_free(&o);
  /* output that is not the protocol's JSON is not echoed */
  CHECK_INT(chain("junk", 1, &o), DDB_ERR_CONFIG);
  CHECK_STR(o.err.message, "credential_process of profile 'junk': the answer "
                           "is not a JSON object");
  chain_free(&o);
  /* AssumeRole profiles that cannot work: each error names the profile
  ** and the fix, before any call to STS */
  {
    static const char *const cases[][2] = {
        {"both", "profile 'both' sets both source_profile and "
                 "credential_source: keep one"},
        {"neither", "profile 'neither' sets role_arn without source_profile "
                    "or credential_source: add one"},
        {"loop1", "profile 'loop2': source_profile 'loop1' makes a loop"},
        {"self", "profile 'self': source_profile 'self' makes a loop"},
        {"nosrc", "profile 'nosrc': its source_profile 'ghost' does not "
                  "exist"},
        {"mfa", "profile 'mfa' sets mfa_serial"},
        {"odd", "profile 'odd': credential_source 'environment' is not one "
                "of Environment, Ec2InstanceMetadata, EcsContainer"},
        {"wi", "a web identity token file is set (profile 'wi') but no "
               "role: set AWS_ROLE_ARN or role_arn in profile 'wi'"}};
    size_t i;
    for(i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
      CHECK_INT(chain(cases[i][0], 1, &o), DDB_ERR_CONFIG);
      if(!CHECK(strstr(o.err.message, cases[i][1]) != NULL))
        fprintf(stderr, "  got: %s\n", o.err.message);
      chain_free(&o);
    }
  }
  sandbox_close(&s);
}

/* Link 4: container credentials, tokens, refresh, bad settings. */
static void test_chain_container(void) {
  sandbox s;
  chain_out o;
  fake_http f;
  char url[128];
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  if(!CHECK(fake_start(&f, ROLE_JSON) == 0)) {
    sandbox_close(&s);
    return;
  }
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/container", f.port);
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer abc", 1);
  CHECK_INT(chain("default", 0, &o), DDB_OK);
  CHECK_STR(o.what, "container credentials");
  CHECK_STR(o.creds.access_key, "ASIAROLE");
  CHECK_STR(o.creds.session_token, "roletoken");
  CHECK_INT(o.src.kind, DDB_CRED_CONTAINER);
  CHECK_STR(f.last_auth, "Bearer abc");
  /* a refresh fetches again */
  {
    ddb_creds again;
    ddb_error e;
    CHECK_INT(ddb_creds_fetch(&o.src, NULL, NULL, &again, &e), DDB_OK);
    CHECK_STR(again.secret_key, "rolesecret");
    ddb_creds_clear(&again);
  }
  chain_free(&o);
  /* the token file beats the variable, and is read on every fetch */
  put_file(s.tokfile, "from-file\n");
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", s.tokfile, 1);
  CHECK_INT(chain("default", 0, &o), DDB_OK);
  CHECK_STR(f.last_auth, "from-file");
  chain_free(&o);
  unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  /* plain http only to a loopback or the ECS/EKS addresses */
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://example.com/creds", 1);
  CHECK_INT(chain("default", 0, &o), DDB_ERR_CONFIG);
  CHECK(strstr(o.err.message, "must be https") != NULL);
  chain_free(&o);
  /* the host checked is the one curl connects to: user:password@HOST is
  ** HOST, and is refused (before any connection) like HOST itself */
  {
    static const struct {
      const char *url, *want;
    } bad[] = {
        {"http://127.0.0.1:1@evil.example/creds",
         "AWS_CONTAINER_CREDENTIALS_FULL_URI: a user name or password in the "
         "URL is not allowed (it would connect to host 'evil.example')"},
        {"https://user:pw@example.com/creds",
         "AWS_CONTAINER_CREDENTIALS_FULL_URI: a user name or password in the "
         "URL is not allowed (it would connect to host 'example.com')"},
        {"http://169.254.170.2.evil.example/",
         "AWS_CONTAINER_CREDENTIALS_FULL_URI 'http://169.254.170.2.evil."
         "example/': must be https, or http to a loopback address or the "
         "ECS/EKS credentials address, not to host "
         "'169.254.170.2.evil.example'"},
        {"http://127.0.0.1.evil.example/",
         "AWS_CONTAINER_CREDENTIALS_FULL_URI 'http://127.0.0.1.evil.example/"
         "': must be https, or http to a loopback address or the ECS/EKS "
         "credentials address, not to host '127.0.0.1.evil.example'"},
        {"http://[fd00:ec2::24]/",
         "AWS_CONTAINER_CREDENTIALS_FULL_URI 'http://[fd00:ec2::24]/': must "
         "be https, or http to a loopback address or the ECS/EKS credentials "
         "address, not to host '[fd00:ec2::24]'"},
        {"ftp://127.0.0.1/", "AWS_CONTAINER_CREDENTIALS_FULL_URI "
                             "'ftp://127.0.0.1/': must be http or https"},
        {"127.0.0.1:9/x", "AWS_CONTAINER_CREDENTIALS_FULL_URI: not a URL"},
    };
    size_t i;
    int before = f.requests;
    for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", bad[i].url, 1);
      CHECK_INT(chain("default", 0, &o), DDB_ERR_CONFIG);
      CHECK_STR(o.err.message, bad[i].want);
      chain_free(&o);
    }
    CHECK_INT(f.requests, before);
    /* loopback in other spellings is allowed: the fetch is tried */
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://localhost:9/x", 1);
    CHECK_INT(chain("default", 0, &o), DDB_ERR_CONFIG);
    CHECK(strncmp(o.err.message,
                  "container credentials (http://localhost:9"
                  "/x): ",
                  45) == 0);
    chain_free(&o);
    setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.1.2.3:9/x", 1);
    CHECK_INT(chain("default", 0, &o), DDB_ERR_CONFIG);
    CHECK(strstr(o.err.message, "must be https") == NULL);
    chain_free(&o);
  }
  /* a configured endpoint that does not answer is an error naming it */
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9/x", 1);
  CHECK_INT(chain("default", 0, &o), DDB_ERR_CONFIG);
  CHECK_STR(o.err.message, "container credentials (http://127.0.0.1:9/x): "
                           "Couldn't connect to server");
  chain_free(&o);
  fake_stop(&f);
  sandbox_close(&s);
}

/* Link 5: IMDSv2 on the fake server; disabled; not answering. */
static void test_chain_imds(void) {
  sandbox s;
  chain_out o;
  fake_http f;
  char url[128];
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  if(!CHECK(fake_start(&f, ROLE_JSON) == 0)) {
    sandbox_close(&s);
    return;
  }
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/", f.port);
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
  /* disabled: not asked */
  CHECK_INT(chain("default", 0, &o), DDB_ERR_CONFIG);
  CHECK_INT(f.requests, 0);
  chain_free(&o);
  /* IMDSv2: a token, then the role, then its credentials with the token */
  unsetenv("AWS_EC2_METADATA_DISABLED");
  CHECK_INT(chain("default", 0, &o), DDB_OK);
  CHECK_STR(o.what, "instance metadata (IMDSv2)");
  CHECK_STR(o.creds.access_key, "ASIAROLE");
  CHECK_INT(o.creds.expires, 1893553445);
  CHECK_INT(o.src.kind, DDB_CRED_IMDS);
  CHECK(f.saw_token_ttl && f.saw_token_on_creds);
  CHECK_INT(f.requests, 3);
  chain_free(&o);
  /* no token, no credentials (no fallback to IMDSv1): listed as tried */
  f.imds_code = 403;
  CHECK_INT(chain("default", 0, &o), DDB_ERR_CONFIG);
  snprintf(url, sizeof(url),
           "(http://127.0.0.1:%d/latest/api/token): HTTP 403", f.port);
  CHECK(strstr(o.err.message, url) != NULL);
  CHECK(strncmp(o.err.message, "no credentials: tried ", 22) == 0);
  chain_free(&o);
  fake_stop(&f);
  /* nothing listening: short timeouts, and the chain ends */
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9", 1);
  CHECK_INT(chain("nobody", 1, &o), DDB_ERR_CONFIG);
  CHECK_STR(o.err.message,
            "no credentials: tried the shared credentials and config files "
            "(profile 'nobody'); container credentials "
            "(AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/FULL_URI not set); "
            "instance metadata (IMDSv2) "
            "(http://127.0.0.1:9/latest/api/token): Couldn't connect to "
            "server");
  chain_free(&o);
  sandbox_close(&s);
}

const tap_test tap_creds_tests[] = {
    {"creds: ISO 8601 expiry times", test_iso8601},
    {"creds: credential JSON of a process and of metadata endpoints",
     test_creds_json},
    {"creds: chain, environment and shared files", test_chain_env_and_files},
    {"creds: chain, credential_process", test_chain_process},
    {"creds: chain, container credentials", test_chain_container},
    {"creds: chain, IMDSv2", test_chain_imds},
    {NULL, NULL}};
