/*
** test_creds.c -- unit tests of client/creds.c and the parts of
** client/config.c that came with it: ISO 8601 times, the credential JSON
** of a credential_process and of the metadata endpoints, every link of the
** chain (environment, shared files with [profile x], credential_process,
** container credentials, IMDSv2), the "no credentials" message, the
** services section of the config file and the CA bundle.
**
** The container and instance-metadata endpoints are a small HTTP server on
** a thread of this process (127.0.0.1, a free port), reached through
** AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_EC2_METADATA_SERVICE_ENDPOINT.
** Every test saves and restores the environment it touches.
*/
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../api/api_int.h"
#include "../../client/ddb_client_int.h"
#include "../../client/http_int.h"
#include "../../client/sigv4.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Environment and files
*/
static const char *const env_names[] = {
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_CA_BUNDLE",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "HOME"};
#define N_ENV (sizeof(env_names) / sizeof(env_names[0]))

typedef struct sandbox {
  char *saved[N_ENV];
  char dir[64];
  char config[128], creds[128], script[128], tokfile[128];
} sandbox;

/* Write text to path.  Returns 0 or -1. */
static int put_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if(!f)
    return -1;
  fputs(text, f);
  return fclose(f);
}

/* Save and clear the environment, make a scratch directory with the
** config and credentials files pointed at, IMDS off. */
static int sandbox_open(sandbox *s) {
  size_t i;
  for(i = 0; i < N_ENV; i++) {
    const char *v = getenv(env_names[i]);
    s->saved[i] = v ? strdup(v) : NULL;
    unsetenv(env_names[i]);
  }
  snprintf(s->dir, sizeof(s->dir), "/tmp/ddb-creds-XXXXXX");
  if(!mkdtemp(s->dir))
    return -1;
  snprintf(s->config, sizeof(s->config), "%s/config", s->dir);
  snprintf(s->creds, sizeof(s->creds), "%s/credentials", s->dir);
  snprintf(s->script, sizeof(s->script), "%s/process.sh", s->dir);
  snprintf(s->tokfile, sizeof(s->tokfile), "%s/token", s->dir);
  setenv("AWS_CONFIG_FILE", s->config, 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", s->creds, 1);
  setenv("HOME", s->dir, 1);
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  put_file(s->config, "");
  put_file(s->creds, "");
  return 0;
}

/* Remove the scratch files and restore the saved environment. */
static void sandbox_close(sandbox *s) {
  size_t i;
  unlink(s->config);
  unlink(s->creds);
  unlink(s->script);
  unlink(s->tokfile);
  rmdir(s->dir);
  for(i = 0; i < N_ENV; i++) {
    if(s->saved[i])
      setenv(env_names[i], s->saved[i], 1);
    else
      unsetenv(env_names[i]);
    free(s->saved[i]);
  }
}

/* Write an executable shell script (for credential_process). */
static int put_script(const char *path, const char *text) {
  if(put_file(path, text))
    return -1;
  return chmod(path, 0700);
}

/* ------------------------------------------------------------------------
** A small HTTP server for the metadata endpoints
*/
typedef struct fake_http {
  int fd, port, stop, requests;
  pthread_t tid;
  pthread_mutex_t lock;
  const char *role_json;  /* the credentials it hands out */
  int imds_code;          /* status of the token PUT (200 normally) */
  char last_auth[256];    /* Authorization of the last container GET */
  int saw_token_ttl;      /* the token PUT had its TTL header */
  int saw_token_on_creds; /* the credentials GET had the token */
  int not_found;          /* POST /: DynamoDB's ResourceNotFoundException */
} fake_http;

/* The value of header name in head, copied into out (cap bytes); "" when
** absent. */
static void header_value(const char *head, const char *name, char *out,
                         size_t cap) {
  size_t n = strlen(name);
  const char *p = head;
  out[0] = 0;
  while((p = strstr(p, "\r\n")) != NULL) {
    p += 2;
    if(strncasecmp(p, name, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1, *e;
      size_t k;
      while(*v == ' ')
        v++;
      e = strstr(v, "\r\n");
      k = e ? (size_t)(e - v) : strlen(v);
      if(k >= cap)
        k = cap - 1;
      memcpy(out, v, k);
      out[k] = 0;
      return;
    }
  }
}

/* Answer one request on connection c. */
static void fake_serve(fake_http *f, int c) {
  char head[8192], hv[256], resp[8192];
  const char *body = "", *status = "404 Not Found";
  size_t got = 0;
  while(got + 1 < sizeof(head)) {
    ssize_t n = recv(c, head + got, sizeof(head) - 1 - got, 0);
    if(n <= 0)
      break;
    got += (size_t)n;
    head[got] = 0;
    if(strstr(head, "\r\n\r\n"))
      break;
  }
  head[got] = 0;
  pthread_mutex_lock(&f->lock);
  f->requests++;
  if(strncmp(head, "PUT /latest/api/token ", 22) == 0) {
    header_value(head, "X-aws-ec2-metadata-token-ttl-seconds", hv, sizeof(hv));
    f->saw_token_ttl = strcmp(hv, "21600") == 0;
    status = f->imds_code == 200 ? "200 OK" : "403 Forbidden";
    body = f->imds_code == 200 ? "IMDSTOKEN42" : "";
  } else if(strncmp(head, "GET /latest/meta-data/iam/security-credentials/ ",
                    48) == 0) {
    header_value(head, "X-aws-ec2-metadata-token", hv, sizeof(hv));
    if(strcmp(hv, "IMDSTOKEN42") == 0) {
      status = "200 OK";
      body = "role-a\n";
    } else
      status = "401 Unauthorized";
  } else if(strncmp(head,
                    "GET /latest/meta-data/iam/security-credentials/role-a ",
                    54) == 0) {
    header_value(head, "X-aws-ec2-metadata-token", hv, sizeof(hv));
    f->saw_token_on_creds = strcmp(hv, "IMDSTOKEN42") == 0;
    status = f->saw_token_on_creds ? "200 OK" : "401 Unauthorized";
    body = f->saw_token_on_creds ? f->role_json : "";
  } else if(strncmp(head, "POST / ", 7) == 0 && f->not_found) {
    /* DynamoDB, for a table that is not there */
    status = "400 Bad Request";
    body = "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
           "ResourceNotFoundException\",\"message\":\"Requested resource "
           "not found\"}";
  } else if(strncmp(head, "GET /container ", 15) == 0) {
    header_value(head, "Authorization", f->last_auth, sizeof(f->last_auth));
    status = "200 OK";
    body = f->role_json;
  }
  pthread_mutex_unlock(&f->lock);
  snprintf(resp, sizeof(resp),
           "HTTP/1.1 %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n"
           "%s",
           status, strlen(body), body);
  if(send(c, resp, strlen(resp), MSG_NOSIGNAL) < 0)
    tap_diag("fake http: send failed");
  close(c);
  /* what it received (a session token, say) and sent (credentials) is not
  ** left on its stack for the heap scans of test_wipe to find */
  ddb_wipe(head, sizeof(head));
  ddb_wipe(resp, sizeof(resp));
}

/* The server thread: accept until stop is set. */
static void *fake_main(void *arg) {
  fake_http *f = arg;
  for(;;) {
    struct pollfd p;
    int stop;
    pthread_mutex_lock(&f->lock);
    stop = f->stop;
    pthread_mutex_unlock(&f->lock);
    if(stop)
      break;
    p.fd = f->fd;
    p.events = POLLIN;
    if(poll(&p, 1, 50) > 0) {
      int c = accept(f->fd, NULL, NULL);
      if(c >= 0)
        fake_serve(f, c);
    }
  }
  return NULL;
}

/* Start the fake metadata server on a free port.  Returns 0 or -1. */
static int fake_start(fake_http *f, const char *role_json) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  memset(f, 0, sizeof(*f));
  pthread_mutex_init(&f->lock, NULL);
  f->role_json = role_json;
  f->imds_code = 200;
  f->fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if(f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof(a)) ||
     listen(f->fd, 8) || getsockname(f->fd, (struct sockaddr *)&a, &len) ||
     pthread_create(&f->tid, NULL, fake_main, f))
    return -1;
  f->port = ntohs(a.sin_port);
  return 0;
}

/* Stop the fake server's thread and close its socket. */
static void fake_stop(fake_http *f) {
  pthread_mutex_lock(&f->lock);
  f->stop = 1;
  pthread_mutex_unlock(&f->lock);
  pthread_join(f->tid, NULL);
  close(f->fd);
  pthread_mutex_destroy(&f->lock);
}

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

#define ROLE_JSON                                                             \
  "{\"Code\":\"Success\",\"Type\":\"AWS-HMAC\",\"AccessKeyId\":"              \
  "\"ASIAROLE\",\"SecretAccessKey\":\"rolesecret\",\"Token\":\"roletoken\","  \
  "\"Expiration\":\"2030-01-02T03:04:05Z\"}"

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

/* The endpoint from the services section and its precedence. */
static void test_services_endpoint(void) {
  sandbox s;
  ddb_config cfg;
  ddb_settings st;
  ddb_error e;
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  put_file(s.config, "[default]\nregion = eu-west-1\nservices = local\n"
                     "endpoint_url = http://global:1\n"
                     "[profile plain]\nregion = eu-west-1\n"
                     "endpoint_url = http://global:2/\n"
                     "[profile ign]\nregion = eu-west-1\nservices = local\n"
                     "ignore_configured_endpoint_urls = true\n"
                     "[services local]\n"
                     "s3 =\n  endpoint_url = http://s3:1\n"
                     "dynamodb =\n  region = nope\n"
                     "  endpoint_url = http://ddb:8000\n"
                     "endpoint_url = http://not-nested:1\n");
  memset(&cfg, 0, sizeof(cfg));
  ddb_error_clear(&e);
  /* the services section's dynamodb entry */
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "http://ddb:8000");
  ddb_settings_free(&st);
  /* AWS_ENDPOINT_URL beats the config file */
  setenv("AWS_ENDPOINT_URL", "http://env:1", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "http://env:1");
  ddb_settings_free(&st);
  /* ... unless configured endpoints are ignored */
  setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "https://dynamodb.eu-west-1.amazonaws.com");
  ddb_settings_free(&st);
  unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
  unsetenv("AWS_ENDPOINT_URL");
  /* the profile's endpoint_url when there is no services entry */
  put_file(s.creds, "[plain]\naws_access_key_id = A\n"
                    "aws_secret_access_key = B\n"
                    "[ign]\naws_access_key_id = A\n"
                    "aws_secret_access_key = B\n");
  cfg.profile = "plain";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "http://global:2");
  ddb_settings_free(&st);
  cfg.profile = "ign";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "https://dynamodb.eu-west-1.amazonaws.com");
  ddb_settings_free(&st);
  /* the option always wins */
  cfg.endpoint = "https://opt.example";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "https://opt.example");
  ddb_settings_free(&st);
  /* nested keys are read where they belong */
  CHECK(ddb_ini_get(s.config, "services local", "region") == NULL);
  {
    char *v = ddb_ini_get(s.config, "services local", "endpoint_url");
    CHECK_STR(v, "http://not-nested:1");
    free(v);
    v = ddb_ini_get_sub(s.config, "services local", "s3", "endpoint_url");
    CHECK_STR(v, "http://s3:1");
    free(v);
  }
  sandbox_close(&s);
}

/* DynamoDB Streams' endpoint (config.c's resolve_streams): AWS's own
** beside AWS's DynamoDB; DynamoDB's when that is configured (DynamoDB
** Local serves both); botocore's configured endpoint of "DynamoDB Streams"
** (AWS_ENDPOINT_URL_DYNAMODB_STREAMS, a services entry dynamodb_streams)
** first. */
static void test_streams_endpoint(void) {
  sandbox s;
  ddb_config cfg;
  ddb_settings st;
  ddb_error e;
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  put_file(s.config, "[default]\nregion = eu-west-1\n"
                     "[profile svc]\nregion = eu-west-1\nservices = local\n"
                     "[services local]\n"
                     "dynamodb_streams =\n  endpoint_url = http://st:1\n");
  put_file(s.creds, "[svc]\naws_access_key_id = A\n"
                    "aws_secret_access_key = B\n");
  memset(&cfg, 0, sizeof(cfg));
  ddb_error_clear(&e);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url,
            "https://streams.dynamodb.eu-west-1.amazonaws.com/");
  CHECK_STR(st.streams_ep.host, "streams.dynamodb.eu-west-1.amazonaws.com");
  ddb_settings_free(&st);
  setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8000", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://127.0.0.1:8000/");
  ddb_settings_free(&st);
  cfg.endpoint = "http://127.0.0.1:9000";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://127.0.0.1:9000/");
  ddb_settings_free(&st);
  setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", "http://127.0.0.1:7000", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://127.0.0.1:7000/");
  CHECK_STR(st.ep.url, "http://127.0.0.1:9000/");
  ddb_settings_free(&st);
  unsetenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS");
  unsetenv("AWS_ENDPOINT_URL_DYNAMODB");
  cfg.endpoint = NULL;
  cfg.profile = "svc";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://st:1/");
  CHECK_STR(st.ep.url, "https://dynamodb.eu-west-1.amazonaws.com/");
  ddb_settings_free(&st);
  sandbox_close(&s);
}

/* ca_bundle from the config file, AWS_CA_BUNDLE and the option. */
static void test_ca_bundle(void) {
  sandbox s;
  ddb_config cfg;
  ddb_settings st;
  ddb_error e;
  char pem[160], txt[256];
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  setenv("AWS_REGION", "us-east-1", 1);
  memset(&cfg, 0, sizeof(cfg));
  ddb_error_clear(&e);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK(st.ca_bundle == NULL);
  ddb_settings_free(&st);
  /* the config file, then AWS_CA_BUNDLE, then the option */
  snprintf(txt, sizeof(txt), "[default]\nca_bundle = %s\n", s.tokfile);
  put_file(s.config, txt);
  put_file(s.tokfile, "pem");
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.ca_bundle, s.tokfile);
  ddb_settings_free(&st);
  setenv("AWS_CA_BUNDLE", s.creds, 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.ca_bundle, s.creds);
  ddb_settings_free(&st);
  snprintf(pem, sizeof(pem), "%s/none.pem", s.dir);
  cfg.ca_bundle = pem;
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_ERR_CONFIG);
  snprintf(txt, sizeof(txt),
           "ca_bundle '%s': cannot read: No such file or directory", pem);
  CHECK_STR(e.message, txt);
  cfg.ca_bundle = NULL;
  setenv("AWS_CA_BUNDLE", pem, 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_ERR_CONFIG);
  CHECK(strncmp(e.message, "AWS_CA_BUNDLE '", 15) == 0);
  sandbox_close(&s);
}

/* ------------------------------------------------------------------------
** Refresh (signer.c)
*/

/* The number of lines of the file at path (0 when missing). */
static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0, ch;
  if(!f)
    return 0;
  while((ch = fgetc(f)) != EOF)
    n += ch == '\n';
  fclose(f);
  return n;
}

typedef struct acquirer {
  ddb_client *c;
  ddb_signer *g;
  ddb_result rc;
} acquirer;

static void *acquire_main(void *arg) {
  acquirer *a = arg;
  ddb_error e;
  ddb_error_clear(&e);
  a->rc = ddb_signer_acquire(a->c, &a->g, &e);
  return NULL;
}

/* Mark c's credentials expired a second ago (as the clock would). */
static void expire_now(ddb_client *c) {
  pthread_mutex_lock(&c->cred_lock);
  c->sig->expires = (int64_t)time(NULL) - 1;
  pthread_mutex_unlock(&c->cred_lock);
}

/* A credential_process of credentials good for 4 minutes: 51 requests run
** it once (not once a request); once they expire, 8 threads at once run
** it once more and all sign with the new set; one that returns expired
** credentials makes the request fail, naming the source and the expiry. */
static void test_refresh(void) {
  sandbox s;
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error e;
  char cfgtext[256], runs[160], ttl[160], script[1024];
  acquirer a[8];
  pthread_t tid[8];
  int i, ok = 1;
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  snprintf(runs, sizeof(runs), "%s/runs", s.dir);
  snprintf(ttl, sizeof(ttl), "%s/ttl", s.dir);
  snprintf(script, sizeof(script),
           "#!/bin/sh\necho run >> '%s'\nsleep 0.2\n"
           "exp=$(date -u -d \"@$(( $(date +%%s) + $(cat '%s') ))\" "
           "+%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
           "echo \"{\\\"Version\\\": 1, \\\"AccessKeyId\\\": "
           "\\\"AK$(wc -l < '%s')\\\", \\\"SecretAccessKey\\\": "
           "\\\"s\\\", \\\"Expiration\\\": \\\"$exp\\\"}\"\n",
           runs, ttl, runs);
  put_script(s.script, script);
  put_file(ttl, "240\n");
  snprintf(cfgtext, sizeof(cfgtext),
           "[profile p]\nregion = us-east-1\ncredential_process = %s\n",
           s.script);
  put_file(s.config, cfgtext);
  memset(&cfg, 0, sizeof(cfg));
  cfg.profile = "p";
  cfg.endpoint = "http://127.0.0.1:9";
  ddb_error_clear(&e);
  if(!CHECK_MSG(ddb_client_new(&cfg, &c, &e) == DDB_OK, "client: %s",
                e.message)) {
    unlink(runs);
    unlink(ttl);
    sandbox_close(&s);
    return;
  }
  /* 51 requests, credentials 4 minutes from expiry: the one run */
  for(i = 0; i < 51; i++) {
    ddb_signer *g = NULL;
    ok &= ddb_signer_acquire(c, &g, &e) == DDB_OK;
    ddb_signer_release(c, g);
  }
  CHECK(ok);
  CHECK_INT(count_lines(runs), 1);
  /* expired: 8 threads at once, one refresh, all with the new set */
  expire_now(c);
  for(i = 0; i < 8; i++) {
    a[i].c = c;
    a[i].g = NULL;
    pthread_create(&tid[i], NULL, acquire_main, &a[i]);
  }
  for(i = 0; i < 8; i++)
    pthread_join(tid[i], NULL);
  CHECK_INT(count_lines(runs), 2);
  for(i = 0; i < 8; i++) {
    CHECK_INT(a[i].rc, DDB_OK);
    CHECK(a[i].g && a[i].g == a[0].g && a[i].g->expires > (int64_t)time(NULL));
    ddb_signer_release(c, a[i].g);
  }
  /* the process returns expired credentials: not used, an error */
  put_file(ttl, "-60\n");
  expire_now(c);
  {
    ddb_signer *g = NULL;
    CHECK_INT(ddb_signer_acquire(c, &g, &e), DDB_ERR_CONFIG);
    CHECK(g == NULL);
    CHECK_MSG(strncmp(e.message,
                      "the credentials from credential_process of profile "
                      "'p' expired at 20",
                      67) == 0 &&
                  strstr(e.message,
                         "Z and could not be refreshed: credential_process of "
                         "profile 'p' returned credentials that expired at "
                         "20") != NULL,
              "message: %s", e.message);
  }
  CHECK_INT(count_lines(runs), 3);
  ddb_client_free(c);
  unlink(runs);
  unlink(ttl);
  sandbox_close(&s);
}

/* ------------------------------------------------------------------------
** Secrets in memory
*/

/* The scan's buffer, and the patterns it looks for: static, so neither is
** in the heap or the anonymous mappings scanned (and matches inside them
** are skipped anyway). */
static unsigned char scan_buf[1 << 16];
static char pat_secret[64], pat_token[2100];

/* Write text to path with write(2): stdio's buffer would keep a copy. */
static int put_file_raw(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t n = strlen(text), done = 0;
  while(fd >= 0 && done < n) {
    ssize_t w = write(fd, text + done, n - done);
    if(w <= 0)
      break;
    done += (size_t)w;
  }
  if(fd >= 0)
    close(fd);
  return fd >= 0 && done == n ? 0 : -1;
}

/* How many copies of pat[0..n) the process's heap and anonymous mappings
** hold (read through /proc/self/mem, so unreadable pages are skipped), not
** counting pat itself and the scan's own buffer; -1 if it cannot look. */
static int memory_copies(const char *pat, size_t n) {
  FILE *maps = fopen("/proc/self/maps", "r");
  int mem = open("/proc/self/mem", O_RDONLY), found = 0;
  char line[512];
  if(!maps || mem < 0) {
    if(maps)
      fclose(maps);
    if(mem >= 0)
      close(mem);
    return -1;
  }
  while(fgets(line, sizeof(line), maps)) {
    unsigned long lo, hi;
    char perms[8], path[256] = "";
    if(sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms, path) <
       3)
      continue;
    if(perms[0] != 'r' || perms[1] != 'w' ||
       (path[0] && strcmp(path, "[heap]") != 0))
      continue;
    for(unsigned long at = lo; at < hi;) {
      size_t want = hi - at < sizeof(scan_buf) ? hi - at : sizeof(scan_buf);
      ssize_t got = pread(mem, scan_buf, want, (off_t)at);
      size_t i;
      if(got <= 0) {
        at += 4096; /* an unreadable page */
        continue;
      }
      for(i = 0; i + n <= (size_t)got; i++)
        if(scan_buf[i] == (unsigned char)pat[0] &&
           memcmp(scan_buf + i, pat, n) == 0) {
          unsigned long where = at + i;
          if((where >= (unsigned long)pat &&
              where < (unsigned long)pat + sizeof(pat_token)) ||
             (where >= (unsigned long)scan_buf &&
              where < (unsigned long)scan_buf + sizeof(scan_buf)))
            continue;
          found++;
          if(getenv("WIPE_DEBUG")) {
            size_t k0 = i >= 48 ? i - 48 : 0, k;
            char ctx[64];
            for(k = 0; k < 48 && k0 + k < i; k++)
              ctx[k] = scan_buf[k0 + k] >= 32 && scan_buf[k0 + k] < 127
                           ? (char)scan_buf[k0 + k]
                           : '.';
            ctx[k] = 0;
            tap_diag("copy at %lx (%s) after \"%s\"", where,
                     path[0] ? path : "anon", ctx);
          }
        }
      /* a copy across the end of this read is found by the next one */
      at += (size_t)got > n ? (size_t)got - n + 1 : (size_t)got;
    }
  }
  fclose(maps);
  close(mem);
  return found;
}

/* 1 (said) when the heap scans cannot run: AddressSanitizer's allocator
** and shadow are anonymous mappings of terabytes, which the scan through
** /proc/self/mem would read for hours.  The build without sanitizers
** (make test's first run) does the check. */
static int heap_scan_skipped(void) {
#if defined(__SANITIZE_ADDRESS__)
  tap_diag("skipped under AddressSanitizer (its mappings are terabytes)");
  return 1;
#else
  return 0;
#endif
}

/* pat_secret: prefix and 32 random hex digits (r: the 16 random bytes). */
static void secret_pattern(const char *prefix, unsigned char r[16]) {
  size_t n = strlen(prefix);
  int i;
  ddb_random_bytes(r, 16);
  snprintf(pat_secret, sizeof(pat_secret), "%s", prefix);
  for(i = 0; i < 16; i++)
    snprintf(pat_secret + n + 2 * i, 3, "%02x", r[i]);
}

/* cfg: a client of the fake server f (its URL in url[0..cap)), no
** retries. */
static void fake_config(const fake_http *f, ddb_config *cfg, char *url,
                        size_t cap) {
  snprintf(url, cap, "http://127.0.0.1:%d", f->port);
  memset(cfg, 0, sizeof(*cfg));
  cfg->region = "us-east-1";
  cfg->endpoint = url;
  cfg->max_retries = 0;
}

/* A client made from a credentials file with a unique secret and a
** 2,000-character session token, which sends one request: once it is
** freed, neither the secret nor the token is anywhere in the process's
** heap (the file read, the profile parsed, the settings, the signer and
** its signing key, the request's header list: all wiped). */
static void test_wipe(void) {
  sandbox s;
  fake_http f;
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_table_desc *desc = NULL;
  ddb_error e;
  char url[64], text[2400];
  unsigned char r[16];
  int i;
  if(heap_scan_skipped() || !CHECK(sandbox_open(&s) == 0))
    return;
  if(!CHECK(fake_start(&f, ROLE_JSON) == 0)) {
    sandbox_close(&s);
    return;
  }
  secret_pattern("WIPESECRET", r);
  memcpy(pat_token, "WIPETOKEN", 9);
  for(i = 9; i < 2000; i++)
    pat_token[i] = "0123456789abcdef"[(r[i % 16] + i) % 16];
  pat_token[2000] = 0;
  snprintf(text, sizeof(text),
           "[default]\naws_access_key_id = AKIDWIPE\n"
           "aws_secret_access_key = %s\naws_session_token = %s\n",
           pat_secret, pat_token);
  CHECK(put_file_raw(s.creds, text) == 0);
  ddb_wipe(text, sizeof(text));
  fake_config(&f, &cfg, url, sizeof(url));
  ddb_error_clear(&e);
  if(CHECK(ddb_client_new(&cfg, &c, &e) == DDB_OK)) {
    /* in use, the token is there (the scan sees it) */
    CHECK(memory_copies(pat_token, 2000) > 0);
    ddb_describe_table(c, "Wipe", &desc, &e); /* 404: an error, sent */
    CHECK(f.requests == 1);
    ddb_table_desc_free(desc);
    ddb_client_free(c);
  }
  fake_stop(&f);
  i = memory_copies(pat_secret, strlen(pat_secret));
  CHECK_MSG(i == 0, "the secret: %d copies after ddb_client_free", i);
  i = memory_copies(pat_token, 2000);
  CHECK_MSG(i == 0, "the session token: %d copies after ddb_client_free", i);
  sandbox_close(&s);
}

/* A client whose credentials come from a container endpoint (the fake
** server) with a unique secret key: once it is freed, the secret is
** nowhere in the heap.  libcurl read it into its
** receive buffer; the allocator of signer.c frees a DynamoDB answer's
** receive buffer without wiping it, never a credential fetch's. */
static void test_wipe_fetched(void) {
  sandbox s;
  fake_http f;
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error e;
  char url[96], *role;
  unsigned char r[16];
  int i;
  if(heap_scan_skipped() || !CHECK(sandbox_open(&s) == 0))
    return;
  secret_pattern("WIPEROLE", r);
  role = malloc(512);
  if(!CHECK(role != NULL)) {
    sandbox_close(&s);
    return;
  }
  snprintf(role, 512,
           "{\"AccessKeyId\":\"ASIAWIPE\",\"SecretAccessKey\":\"%s\","
           "\"Token\":\"t\",\"Expiration\":\"2030-01-02T03:04:05Z\"}",
           pat_secret);
  if(!CHECK(fake_start(&f, role) == 0)) {
    free(role);
    sandbox_close(&s);
    return;
  }
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/container", f.port);
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
  fake_config(&f, &cfg, url, sizeof(url));
  ddb_error_clear(&e);
  if(CHECK(ddb_client_new(&cfg, &c, &e) == DDB_OK)) {
    /* no request after the fetch: its blocks are freed as they were */
    CHECK_STR(c->s.cred_source, "container credentials");
    CHECK_INT(f.requests, 1);
    ddb_client_free(c);
  }
  fake_stop(&f);
  ddb_wipe(role, 512);
  free(role);
  i = memory_copies(pat_secret, strlen(pat_secret));
  CHECK_MSG(i == 0, "the fetched secret: %d copies after ddb_client_free", i);
  sandbox_close(&s);
}

/* A table that is not there: the C API's error names the table, the
** endpoint and the region (and what DynamoDB said). */
static void test_missing_table(void) {
  sandbox s;
  fake_http f;
  dyn_options opt;
  dyn_client *c = NULL;
  dyn_error e;
  char *json = NULL, url[64], want[512];
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  if(!CHECK(fake_start(&f, ROLE_JSON) == 0)) {
    sandbox_close(&s);
    return;
  }
  f.not_found = 1;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  snprintf(url, sizeof(url), "http://127.0.0.1:%d", f.port);
  dyn_options_init(&opt);
  opt.endpoint = url;
  opt.region = "eu-west-2";
  if(CHECK(dyn_client_new(&opt, &c, &e) == DYN_OK)) {
    CHECK(dyn_get_json(c, "NoSuchTable", "{\"PK\":\"a\"}", 0, &json, &e) ==
          DYN_ESERVICE);
    CHECK(json == NULL);
    snprintf(want, sizeof(want),
             "table 'NoSuchTable' not found at %s in region eu-west-2 "
             "(ResourceNotFoundException: Requested resource not found)",
             url);
    CHECK_STR(e.message, want);
    CHECK_STR(e.type, "ResourceNotFoundException");
    dyn_client_free(c);
  }
  fake_stop(&f);
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
    {"config: endpoint from the services section", test_services_endpoint},
    {"config: DynamoDB Streams' endpoint", test_streams_endpoint},
    {"config: CA bundle", test_ca_bundle},
    {"signer: short-lived credentials are fetched once, not per request; "
     "one refresh for 8 threads; expired ones never sign",
     test_refresh},
    {"api: a missing table's error names the table, endpoint and region",
     test_missing_table},
    {"creds: the secret and the session token are wiped when a client is "
     "freed (heap scan)",
     test_wipe},
    {"creds: a secret fetched from a container endpoint is wiped when the "
     "client is freed (heap scan)",
     test_wipe_fetched},
    {NULL, NULL}};
