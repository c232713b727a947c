/*
** creds.c -- the AWS credential chain, walked as the AWS SDKs walk it:
**
**   1. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
**      AWS_SESSION_TOKEN (skipped when the profile= option names a
**      profile: naming one means "use that profile");
**   2. the profile's keys in the shared credentials file, then in the
**      config file ([profile NAME] there; see config.c);
**   3. the profile's credential_process (run with /bin/sh -c, its stdout
**      read as the JSON of the SDKs' process protocol, Version 1);
**   4. container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on
**      http://169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI (https,
**      or http to a loopback or the ECS/EKS addresses), with the
**      Authorization header from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or
**      AWS_CONTAINER_AUTHORIZATION_TOKEN;
**   5. EC2 instance metadata, IMDSv2 only: a PUT for a session token, then
**      the role name, then its credentials; 1 s to connect and 2 s per
**      request, one attempt; skipped when AWS_EC2_METADATA_DISABLED=true;
**      AWS_EC2_METADATA_SERVICE_ENDPOINT replaces http://169.254.169.254.
**
** A source that is configured but fails (a credential_process that exits
** non-zero, a container endpoint that refuses) is an error naming it; an
** instance-metadata service that does not answer just ends the chain.
** When nothing is found the error lists what was tried.
**
** Sources 3 to 5 hand out temporary credentials with an expiry;
** ddb_creds_fetch() fetches them again (http.c calls it before they
** expire).  No secret ever goes into a message: errors name the source,
** the variable, the file, never a key, a token or a command line.
**
** Not resolved here (the error says what to do instead): role_arn /
** source_profile (AssumeRole), sso_* profiles and web identity tokens;
** `credential_process = aws configure export-credentials --profile NAME
** --format process` covers all of them.
*/
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ddb_client_int.h"
#include "sigv4.h"

extern char **environ;

/* The most read from a credential_process or a metadata endpoint. */
#define CREDS_OUT_MAX (64 * 1024)
/* stderr of a failing credential_process kept for the message. */
#define CREDS_ERR_MAX 4096
/* How long a credential_process may run. */
#define PROCESS_TIMEOUT_MS 30000
/* Container and instance metadata: connect, and a whole request. */
#define META_CONNECT_MS   1000
#define META_TIMEOUT_MS   2000
#define CONTAINER_HOST    "http://169.254.170.2"
#define IMDS_DEFAULT      "http://169.254.169.254"
#define IMDS_DEFAULT_IPV6 "http://[fd00:ec2::254]"
#define IMDS_TOKEN_TTL    "21600"
/* The list of what was tried, for the "no credentials" message. */
#define TRIED_MAX 400

/* The value of environment variable name, or NULL when unset or empty. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

/* A malloc'ed copy of s[0..n), NUL-terminated; NULL on out of memory. */
static char *dupn(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if(p) {
    if(n)
      memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

/* Free a string after overwriting it with zeros (for secrets). */
static void wipe_free(char *p) {
  if(p) {
    memset(p, 0, strlen(p));
    free(p);
  }
}

/* Free c's strings (the secrets wiped first) and zero it. */
void ddb_creds_clear(ddb_creds *c) {
  free(c->access_key);
  wipe_free(c->secret_key);
  wipe_free(c->session_token);
  memset(c, 0, sizeof(*c));
}

/* Free s's strings (the authorization token wiped) and zero it. */
void ddb_cred_source_free(ddb_cred_source *s) {
  free(s->what);
  free(s->command);
  free(s->url);
  wipe_free(s->auth);
  free(s->auth_file);
  memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------------
** Parsing
*/

/* Parse exactly n decimal digits at s into *v.  Returns 0 or -1. */
static int digits(const char *s, int n, int *v) {
  int i;
  *v = 0;
  for(i = 0; i < n; i++) {
    if(s[i] < '0' || s[i] > '9')
      return -1;
    *v = *v * 10 + (s[i] - '0');
  }
  return 0;
}

/* Days from 1970-01-01 to the proleptic Gregorian date y-m-d. */
static int64_t days_from_civil(int64_t y, int m, int d) {
  int64_t era, yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = y - era * 400;
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* See ddb_client_int.h: s[0..n) as ISO 8601 UTC into *out; 0 or -1. */
int ddb_parse_iso8601(const char *s, size_t n, int64_t *out) {
  int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
  size_t i = 19;
  if(n < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
     s[7] != '-' || digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
     digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) ||
     s[16] != ':' || digits(s + 17, 2, &sec))
    return -1;
  if(mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return -1;
  if(s[i] == '.') { /* fractions of a second: dropped */
    i++;
    if(i >= n || s[i] < '0' || s[i] > '9')
      return -1;
    while(i < n && s[i] >= '0' && s[i] <= '9')
      i++;
  }
  if(i < n && (s[i] == 'Z' || s[i] == 'z'))
    i++;
  else if(i < n && (s[i] == '+' || s[i] == '-')) {
    sign = s[i] == '-' ? -1 : 1;
    i++;
    if(i + 2 > n || digits(s + i, 2, &oh))
      return -1;
    i += 2;
    if(i < n && s[i] == ':')
      i++;
    if(i + 2 > n || digits(s + i, 2, &om))
      return -1;
    i += 2;
    if(oh > 23 || om > 59)
      return -1;
  } else
    return -1;
  if(i != n)
    return -1;
  *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
         sign * (oh * 3600 + om * 60);
  return 0;
}

/* The string member name of obj, or NULL when absent or not a non-empty
** string. */
static const char *json_str(const cJSON *obj, const char *name) {
  const char *v =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));
  return (v && *v) ? v : NULL;
}

/* See ddb_client_int.h: the credentials JSON text[0..n) into *out. */
ddb_result ddb_creds_from_json(const char *text, size_t n, int process,
                               const char *what, ddb_creds *out,
                               ddb_error *err) {
  cJSON *j = cJSON_ParseWithLength(text, n);
  const cJSON *ver;
  const char *ak, *sk, *tok, *exp, *code;
  ddb_result result = DDB_OK;

  memset(out, 0, sizeof(*out));
  if(!cJSON_IsObject(j)) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: the answer is not a JSON "
                           "object",
                           what);
    goto fail;
  }
  if(process) {
    ver = cJSON_GetObjectItemCaseSensitive(j, "Version");
    if(!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
      result = ddb_error_set(err, DDB_ERR_CONFIG,
                             "%s: unsupported Version (expected 1)", what);
      goto fail;
    }
  } else if((code = json_str(j, "Code")) != NULL &&
            strcmp(code, "Success") != 0) {
    result =
        ddb_error_set(err, DDB_ERR_CONFIG, "%s: Code is '%.60s'", what, code);
    goto fail;
  }
  ak = json_str(j, "AccessKeyId");
  sk = json_str(j, "SecretAccessKey");
  tok = json_str(j, process ? "SessionToken" : "Token");
  exp = json_str(j, "Expiration");
  if(!ak || !sk) {
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: the answer lacks %s",
                           what, ak ? "SecretAccessKey" : "AccessKeyId");
    goto fail;
  }
  if(exp && ddb_parse_iso8601(exp, strlen(exp), &out->expires)) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: Expiration '%.40s' is not an ISO 8601 time",
                           what, exp);
    goto fail;
  }
  if(exp && out->expires <= 0)
    out->expires = 1; /* "long expired", not "never" */
  out->access_key = ddb_strdup(ak);
  out->secret_key = ddb_strdup(sk);
  out->session_token = ddb_strdup(tok);
  if(!out->access_key || !out->secret_key || (tok && !out->session_token))
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");

fail:
  if(result)
    ddb_creds_clear(out);
  cJSON_Delete(j);
  return result;
}

/* ------------------------------------------------------------------------
** credential_process
*/

/* Milliseconds on the monotonic clock. */
static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read what is available on fd into b (at most its cap; the rest is read
** and dropped).  Returns 1 at end of file or on error, else 0. */
static int drain(int fd, ddb_buf *b) {
  char chunk[4096];
  ssize_t got = read(fd, chunk, sizeof(chunk));
  if(got < 0)
    return errno == EINTR || errno == EAGAIN ? 0 : 1;
  if(got == 0)
    return 1;
  if(!b->failed)
    ddb_buf_add(b, chunk, (size_t)got);
  return 0;
}

/* Run command with /bin/sh -c, stdin from /dev/null, and collect its stdout
** into out and stderr into errb, within PROCESS_TIMEOUT_MS.  *status is
** its wait status (-1 when unknown).  Returns DDB_OK or an error naming
** what. */
static ddb_result run_process(const char *command, const char *what,
                              ddb_buf *out, ddb_buf *errb, int *status,
                              ddb_error *err) {
  int outp[2] = {-1, -1}, errp[2] = {-1, -1}, open_fds = 2, rc;
  posix_spawn_file_actions_t fa;
  int fa_ok = 0;
  pid_t pid = -1;
  char *argv[4];
  int64_t deadline = mono_ms() + PROCESS_TIMEOUT_MS;
  ddb_result result = DDB_OK;

  *status = -1;
  if(pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: cannot create a pipe: %s",
                           what, strerror(errno));
    goto fail;
  }
  if(posix_spawn_file_actions_init(&fa)) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  fa_ok = 1;
  if(posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
     posix_spawn_file_actions_adddup2(&fa, outp[1], 1) ||
     posix_spawn_file_actions_adddup2(&fa, errp[1], 2)) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  argv[0] = (char *)"sh";
  argv[1] = (char *)"-c";
  argv[2] = (char *)command;
  argv[3] = NULL;
  rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
  if(rc) {
    pid = -1;
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: cannot start: %s", what,
                           strerror(rc));
    goto fail;
  }
  close(outp[1]);
  close(errp[1]);
  outp[1] = errp[1] = -1;
  while(open_fds > 0) {
    struct pollfd pf[2];
    int np = 0, i;
    int64_t left = deadline - mono_ms();
    if(left <= 0) {
      kill(pid, SIGKILL);
      result =
          ddb_error_set(err, DDB_ERR_CONFIG, "%s: did not finish within %d s",
                        what, PROCESS_TIMEOUT_MS / 1000);
      break;
    }
    if(outp[0] >= 0) {
      pf[np].fd = outp[0];
      pf[np++].events = POLLIN;
    }
    if(errp[0] >= 0) {
      pf[np].fd = errp[0];
      pf[np++].events = POLLIN;
    }
    rc = poll(pf, (nfds_t)np, (int)left);
    if(rc < 0 && errno != EINTR) {
      kill(pid, SIGKILL);
      result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: poll: %s", what,
                             strerror(errno));
      break;
    }
    for(i = 0; rc > 0 && i < np; i++) {
      int *fd;
      if(!pf[i].revents)
        continue;
      fd = pf[i].fd == outp[0] ? &outp[0] : &errp[0];
      if(drain(*fd, fd == &outp[0] ? out : errb)) {
        close(*fd);
        *fd = -1;
        open_fds--;
      }
    }
  }
  for(;;) {
    int st;
    pid_t w = waitpid(pid, &st, 0);
    if(w == pid) {
      *status = st;
      break;
    }
    if(w < 0 && errno == EINTR)
      continue;
    break; /* ECHILD: SIGCHLD is ignored; the status is unknown */
  }
  pid = -1;

fail:
  if(fa_ok)
    posix_spawn_file_actions_destroy(&fa);
  if(outp[0] >= 0)
    close(outp[0]);
  if(outp[1] >= 0)
    close(outp[1]);
  if(errp[0] >= 0)
    close(errp[0]);
  if(errp[1] >= 0)
    close(errp[1]);
  return result;
}

/* Fetch credentials by running src->command. */
static ddb_result process_fetch(const ddb_cred_source *src, ddb_creds *out,
                                ddb_error *err) {
  ddb_buf o, e;
  int status = -1;
  ddb_result result;
  ddb_buf_init(&o, CREDS_OUT_MAX);
  ddb_buf_init(&e, CREDS_ERR_MAX);
  result = run_process(src->command, src->what, &o, &e, &status, err);
  if(result)
    goto fail;
  if(status != -1 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    /* its first line of stderr says why (a process that prints secrets
    ** to stderr on failure is not expected) */
    size_t n = 0;
    while(n < e.len && n < 200 && e.p[n] != '\n' && e.p[n] != '\r')
      n++;
    if(WIFEXITED(status))
      result = ddb_error_set(
          err, DDB_ERR_CONFIG, "%s failed (exit status %d)%s%.*s", src->what,
          WEXITSTATUS(status), n ? ": " : "", (int)n, n ? e.p : "");
    else
      result = ddb_error_set(err, DDB_ERR_CONFIG, "%s killed by signal %d",
                             src->what, WTERMSIG(status));
    goto fail;
  }
  if(o.failed) {
    result =
        ddb_error_set(err, DDB_ERR_CONFIG, "%s: output larger than %d bytes",
                      src->what, CREDS_OUT_MAX);
    goto fail;
  }
  result = ddb_creds_from_json(o.p ? o.p : "", o.len, 1, src->what, out, err);

fail:
  if(o.p)
    memset(o.p, 0, o.len);
  ddb_buf_free(&o);
  ddb_buf_free(&e);
  return result;
}

/* ------------------------------------------------------------------------
** Container and instance metadata (HTTP)
*/

/* curl write callback: append to the ddb_buf ud, stop past its cap. */
static size_t on_meta_body(char *p, size_t size, size_t n, void *ud) {
  return ddb_buf_add(ud, p, size * n) ? 0 : size * n;
}

/* One request to a metadata endpoint: method ("GET" or "PUT") on url with
** the headers hdrs, short timeouts, no proxy, no redirects.  out gets the
** body and *status the HTTP status.  Errors name what and the URL. */
static ddb_result meta_request(const char *method, const char *url,
                               struct curl_slist *hdrs, const char *what,
                               ddb_buf *out, long *status, ddb_error *err) {
  CURL *h = curl_easy_init();
  CURLcode cc;
  *status = 0;
  if(!h)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  ddb_buf_reset(out);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)META_CONNECT_MS);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)META_TIMEOUT_MS);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CREDS_OUT_MAX);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_meta_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
  if(strcmp(method, "PUT") == 0) {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
  }
  cc = curl_easy_perform(h);
  if(cc == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  curl_easy_cleanup(h);
  if(cc != CURLE_OK)
    return ddb_error_set(err, DDB_ERR_CONFIG, "%s (%.200s): %s", what, url,
                         out->failed ? "answer too large"
                                     : curl_easy_strerror(cc));
  if(*status != 200)
    return ddb_error_set(err, DDB_ERR_CONFIG, "%s (%.200s): HTTP %ld", what,
                         url, *status);
  return DDB_OK;
}

/* Read the Authorization value for a container endpoint from the file
** path (trimmed).  Returns a malloc'ed string or NULL (err set). */
static char *read_token_file(const char *path, const char *what,
                             ddb_error *err) {
  FILE *f = fopen(path, "r");
  char buf[CREDS_ERR_MAX];
  size_t n;
  if(!f) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "%s: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '%.200s': %s",
                  what, path, strerror(errno));
    return NULL;
  }
  n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  while(n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
                  buf[n - 1] == ' ' || buf[n - 1] == '\t'))
    n--;
  buf[n] = 0;
  if(!n || strchr(buf, '\n') || strchr(buf, '\r')) {
    memset(buf, 0, sizeof(buf));
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "%s: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '%.200s' does "
                  "not hold one token",
                  what, path);
    return NULL;
  }
  {
    char *p = dupn(buf, n);
    memset(buf, 0, sizeof(buf));
    if(!p)
      ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return p;
  }
}

/* Fetch credentials from the container endpoint of src. */
static ddb_result container_fetch(const ddb_cred_source *src, ddb_creds *out,
                                  ddb_error *err) {
  ddb_buf body, hdr;
  struct curl_slist *hdrs = NULL;
  char *token = NULL;
  long status;
  ddb_result result = DDB_OK;

  ddb_buf_init(&body, CREDS_OUT_MAX);
  ddb_buf_init(&hdr, CREDS_ERR_MAX + 32);
  if(src->auth_file) {
    token = read_token_file(src->auth_file, src->what, err);
    if(!token) {
      result = err ? err->code : DDB_ERR_CONFIG;
      goto fail;
    }
  }
  if(token || src->auth) {
    ddb_buf_adds(&hdr, "Authorization: ");
    ddb_buf_adds(&hdr, token ? token : src->auth);
    if(hdr.failed || !(hdrs = curl_slist_append(NULL, hdr.p))) {
      result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
      goto fail;
    }
  }
  result = meta_request("GET", src->url, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  result = ddb_creds_from_json(body.p ? body.p : "", body.len, 0, src->what,
                               out, err);

fail:
  if(hdrs) {
    memset(hdrs->data, 0, strlen(hdrs->data));
    curl_slist_free_all(hdrs);
  }
  if(hdr.p)
    memset(hdr.p, 0, hdr.len);
  if(body.p)
    memset(body.p, 0, body.len);
  ddb_buf_free(&hdr);
  ddb_buf_free(&body);
  wipe_free(token);
  return result;
}

/* Is the role name r one IMDS can hand out (no '/', no dot segments)? */
static int role_ok(const char *r, size_t n) {
  size_t i;
  if(n == 0 || n > 128 || (r[0] == '.'))
    return 0;
  for(i = 0; i < n; i++) {
    char c = r[i];
    if(!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || strchr("+=,.@_-", c)))
      return 0;
  }
  return 1;
}

/* Fetch credentials from EC2 instance metadata (IMDSv2) at src->url. */
static ddb_result imds_fetch(const ddb_cred_source *src, ddb_creds *out,
                             ddb_error *err) {
  ddb_buf body, line;
  struct curl_slist *hdrs = NULL;
  long status;
  size_t n;
  ddb_result result;

  ddb_buf_init(&body, CREDS_OUT_MAX);
  ddb_buf_init(&line, 1024);
  /* 1. a session token */
  hdrs = curl_slist_append(
      NULL, "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL);
  ddb_buf_addf(&line, "%s/latest/api/token", src->url);
  if(!hdrs || line.failed) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  result = meta_request("PUT", line.p, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  curl_slist_free_all(hdrs);
  hdrs = NULL;
  n = body.len;
  while(n > 0 && (body.p[n - 1] == '\n' || body.p[n - 1] == '\r'))
    n--;
  ddb_buf_reset(&line);
  ddb_buf_adds(&line, "X-aws-ec2-metadata-token: ");
  if(n == 0 || memchr(body.p, '\n', n) || memchr(body.p, '\r', n) ||
     ddb_buf_add(&line, body.p, n)) {
    result =
        ddb_error_set(err, DDB_ERR_CONFIG, "%s: bad session token", src->what);
    goto fail;
  }
  hdrs = curl_slist_append(NULL, line.p);
  memset(line.p, 0, line.len);
  if(!hdrs) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  /* 2. the role name (the first line) */
  ddb_buf_reset(&line);
  ddb_buf_addf(&line, "%s/latest/meta-data/iam/security-credentials/",
               src->url);
  result = meta_request("GET", line.p, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  n = 0;
  while(n < body.len && body.p[n] != '\n' && body.p[n] != '\r')
    n++;
  if(!role_ok(body.p ? body.p : "", n)) {
    result =
        ddb_error_set(err, DDB_ERR_CONFIG,
                      "%s: no IAM role attached to the instance", src->what);
    goto fail;
  }
  ddb_buf_add(&line, body.p, n);
  if(line.failed) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  /* 3. its credentials */
  result = meta_request("GET", line.p, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  result = ddb_creds_from_json(body.p ? body.p : "", body.len, 0, src->what,
                               out, err);

fail:
  if(hdrs) {
    memset(hdrs->data, 0, strlen(hdrs->data));
    curl_slist_free_all(hdrs);
  }
  if(body.p)
    memset(body.p, 0, body.len);
  ddb_buf_free(&body);
  ddb_buf_free(&line);
  return result;
}

/* See ddb_client_int.h: fresh credentials from src into *out. */
ddb_result ddb_creds_fetch(const ddb_cred_source *src, ddb_creds *out,
                           ddb_error *err) {
  memset(out, 0, sizeof(*out));
  switch(src->kind) {
  case DDB_CRED_PROCESS: return process_fetch(src, out, err);
  case DDB_CRED_CONTAINER: return container_fetch(src, out, err);
  case DDB_CRED_IMDS: return imds_fetch(src, out, err);
  default:
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "credentials from %s cannot be refreshed",
                         src->what ? src->what : "this source");
  }
}

/* ------------------------------------------------------------------------
** The chain
*/

/* Is host[0..n) one a container endpoint may be reached on over plain
** http: a loopback, or the ECS/EKS link-local addresses? */
static int container_host_ok(const char *host, size_t n) {
  static const char *const ok[] = {"localhost", "[::1]", "169.254.170.2",
                                   "169.254.170.23", "[fd00:ec2::23]"};
  size_t i;
  for(i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
    if(strlen(ok[i]) == n && strncasecmp(host, ok[i], n) == 0)
      return 1;
  return n > 4 && strncmp(host, "127.", 4) == 0 &&
         strspn(host, "0123456789.") == n;
}

/* Check AWS_CONTAINER_CREDENTIALS_FULL_URI url.  Returns 0 or -1. */
static int container_url_ok(const char *url) {
  const char *host, *end;
  if(strncmp(url, "https://", 8) == 0)
    return 0;
  if(strncmp(url, "http://", 7) != 0)
    return -1;
  host = url + 7;
  if(*host == '[')
    end = strchr(host, ']') ? strchr(host, ']') + 1 : NULL;
  else
    end = host + strcspn(host, ":/?#");
  if(!end)
    return -1;
  return container_host_ok(host, (size_t)(end - host)) ? 0 : -1;
}

/* Append "; " (unless first) and the printf-style text to the list of
** what was tried. */
static void tried_add(ddb_buf *t, const char *fmt, const char *arg) {
  if(t->len)
    ddb_buf_adds(t, "; ");
  ddb_buf_addf(t, fmt, arg);
}

/* Look for the container endpoint: fills src and returns 1 when one is
** configured, 0 when not, -1 on a bad setting (err set). */
static int container_source(ddb_cred_source *src, ddb_error *err) {
  const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  const char *tok = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
  const char *tok_file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  ddb_buf u;
  if(!rel && !full)
    return 0;
  ddb_buf_init(&u, 4096);
  if(rel) {
    ddb_buf_adds(&u, CONTAINER_HOST);
    if(rel[0] != '/')
      ddb_buf_addc(&u, '/');
    ddb_buf_adds(&u, rel);
  } else {
    if(container_url_ok(full)) {
      ddb_error_set(err, DDB_ERR_CONFIG,
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI '%.200s': must be "
                    "https, or http to a loopback address or the ECS/EKS "
                    "credentials address",
                    full);
      ddb_buf_free(&u);
      return -1;
    }
    ddb_buf_adds(&u, full);
  }
  src->kind = DDB_CRED_CONTAINER;
  src->url = ddb_buf_take(&u, NULL);
  src->what = ddb_strdup("container credentials");
  if(tok_file)
    src->auth_file = ddb_strdup(tok_file);
  else if(tok)
    src->auth = ddb_strdup(tok);
  if(!src->url || !src->what || (tok_file && !src->auth_file) ||
     (!tok_file && tok && !src->auth)) {
    ddb_buf_free(&u);
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  ddb_buf_free(&u);
  return 1;
}

/* The instance metadata endpoint (malloc'ed), without a trailing '/'. */
static char *imds_endpoint(void) {
  const char *v = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  const char *mode = env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
  size_t n;
  if(!v)
    v = (mode && strcasecmp(mode, "IPv6") == 0) ? IMDS_DEFAULT_IPV6
                                                : IMDS_DEFAULT;
  n = strlen(v);
  while(n > 0 && v[n - 1] == '/')
    n--;
  return dupn(v, n);
}

/* Step 1, the environment: 1 found (out, what set), 0 not. */
static int step_env(ddb_creds *out, char **what) {
  if(!env("AWS_ACCESS_KEY_ID") || !env("AWS_SECRET_ACCESS_KEY"))
    return 0;
  out->access_key = ddb_strdup(env("AWS_ACCESS_KEY_ID"));
  out->secret_key = ddb_strdup(env("AWS_SECRET_ACCESS_KEY"));
  out->session_token = ddb_strdup(env("AWS_SESSION_TOKEN"));
  *what = ddb_strdup("environment");
  return 1;
}

/* Step 2, the profile's keys in the shared files: 1 found, 0 not. */
static int step_files(const char *profile, ddb_creds *out, char **what) {
  char *ak = ddb_profile_get(profile, "aws_access_key_id", 1);
  char *sk = ddb_profile_get(profile, "aws_secret_access_key", 1);
  ddb_buf name;
  if(!ak || !*ak || !sk || !*sk) {
    free(ak);
    wipe_free(sk);
    return 0;
  }
  out->access_key = ak;
  out->secret_key = sk;
  out->session_token = ddb_profile_get(profile, "aws_session_token", 1);
  ddb_buf_init(&name, 512);
  ddb_buf_addf(&name, "profile '%.200s'", profile);
  *what = ddb_buf_take(&name, NULL);
  return 1;
}

/* Step 3, the profile's credential_process: 1 found (src set too), 0 none
** configured, -1 error (err set). */
static int step_process(const char *profile, ddb_cred_source *src,
                        ddb_creds *out, char **what, ddb_error *err) {
  char *process = ddb_profile_get(profile, "credential_process", 1);
  ddb_buf name;
  if(!process || !*process) {
    free(process);
    return 0;
  }
  src->kind = DDB_CRED_PROCESS;
  src->command = process;
  ddb_buf_init(&name, 512);
  ddb_buf_addf(&name, "credential_process of profile '%.200s'", profile);
  src->what = ddb_buf_take(&name, NULL);
  if(!src->what) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  if(ddb_creds_fetch(src, out, err))
    return -1;
  *what = ddb_strdup(src->what);
  return 1;
}

/* A profile that needs what the SDKs do and this extension does not
** (AssumeRole, SSO): -1 with err saying what to do instead, else 0. */
static int step_unsupported(const char *profile, ddb_error *err) {
  static const char *const keys[] = {
      "role_arn", "sso_session", "sso_start_url", "web_identity_token_file"};
  size_t i;
  for(i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    char *v = ddb_profile_get(profile, keys[i], 0);
    int set = v && *v;
    free(v);
    if(set) {
      ddb_error_set(err, DDB_ERR_CONFIG,
                    "profile '%.100s' uses %s, which this extension does not "
                    "resolve: add credential_process = aws configure "
                    "export-credentials --profile %.100s --format process",
                    profile, keys[i], profile);
      return -1;
    }
  }
  return 0;
}

/* Step 4, container credentials: 1 found, 0 not configured, -1 error. */
static int step_container(ddb_cred_source *src, ddb_creds *out, char **what,
                          ddb_error *err) {
  int rc = container_source(src, err);
  if(rc <= 0)
    return rc;
  if(ddb_creds_fetch(src, out, err))
    return -1;
  *what = ddb_strdup(src->what);
  return 1;
}

/* Step 5, instance metadata: 1 found, 0 not (why added to tried), -1 out
** of memory. */
static int step_imds(ddb_cred_source *src, ddb_creds *out, char **what,
                     ddb_buf *tried, ddb_error *err) {
  const char *v = env("AWS_EC2_METADATA_DISABLED");
  ddb_error e;
  if(v && strcasecmp(v, "true") == 0) {
    tried_add(tried, "%s",
              "instance metadata (AWS_EC2_METADATA_DISABLED=true)");
    return 0;
  }
  ddb_error_clear(&e);
  src->kind = DDB_CRED_IMDS;
  src->url = imds_endpoint();
  src->what = ddb_strdup("instance metadata (IMDSv2)");
  if(!src->url || !src->what) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  if(ddb_creds_fetch(src, out, &e) == DDB_OK) {
    *what = ddb_strdup(src->what);
    return 1;
  }
  tried_add(tried, "%s", e.message);
  ddb_cred_source_free(src);
  return 0;
}

/* See ddb_client_int.h: walk the chain; on failure the error lists what
** was tried, or names the configured source that failed. */
ddb_result ddb_creds_chain(const char *profile, int given,
                           ddb_cred_source *src, ddb_creds *out, char **what,
                           ddb_error *err) {
  ddb_buf tried;
  ddb_error e;
  ddb_result result = DDB_OK;
  int rc = 0;

  memset(src, 0, sizeof(*src));
  memset(out, 0, sizeof(*out));
  *what = NULL;
  ddb_error_clear(&e);
  ddb_buf_init(&tried, TRIED_MAX);
  if(!given && (rc = step_env(out, what)) == 0)
    tried_add(&tried, "%s", "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
  if(rc == 0 && (rc = step_files(profile, out, what)) == 0)
    tried_add(&tried, "the shared credentials and config files (profile '%s')",
              profile);
  if(rc == 0)
    rc = step_process(profile, src, out, what, &e);
  if(rc == 0)
    rc = step_unsupported(profile, &e);
  if(rc == 0 && (rc = step_container(src, out, what, &e)) == 0)
    tried_add(&tried, "%s",
              "container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/"
              "FULL_URI not set)");
  if(rc == 0)
    rc = step_imds(src, out, what, &tried, &e);
  if(rc < 0) {
    result = e.code ? e.code : DDB_ERR_CONFIG;
    if(err)
      ddb_error_set(err, result, "%s", e.message);
    goto fail;
  }
  if(rc == 0) {
    result = ddb_error_set(err, DDB_ERR_CONFIG, "no credentials: tried %s",
                           tried.failed ? "the whole chain" : tried.p);
    goto fail;
  }
  if(!out->access_key || !out->secret_key || !*what) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if(src->kind == DDB_CRED_STATIC)
    ddb_cred_source_free(src);

fail:
  if(result) {
    ddb_creds_clear(out);
    ddb_cred_source_free(src);
    free(*what);
    *what = NULL;
  }
  ddb_buf_free(&tried);
  return result;
}

/* ------------------------------------------------------------------------
** Principals (see ddb_client_int.h)
*/

static unsigned char scope_key[DDB_SHA256_LEN];
static pthread_once_t scope_once = PTHREAD_ONCE_INIT;

/* Draw the process's key for scope ids. */
static void scope_key_init(void) {
  ddb_random_bytes(scope_key, sizeof(scope_key));
}

void ddb_scope_hash(char letter, const char *const *p, const size_t *n,
                    int n_parts, unsigned char *out) {
  unsigned char mac[DDB_SHA256_LEN];
  ddb_hmac_sha256_ctx m;
  int i;
  pthread_once(&scope_once, scope_key_init);
  ddb_hmac_sha256_init(&m, scope_key, sizeof(scope_key));
  ddb_hmac_sha256_update(&m, &letter, 1);
  for(i = 0; i < n_parts; i++) {
    unsigned char len[8];
    uint64_t v = n[i];
    int k;
    for(k = 0; k < 8; k++, v >>= 8)
      len[k] = (unsigned char)(v & 0xff);
    ddb_hmac_sha256_update(&m, len, sizeof(len));
    ddb_hmac_sha256_update(&m, p[i], n[i]);
  }
  ddb_hmac_sha256_final(&m, mac);
  memcpy(out, mac, DDB_SCOPE_ID_LEN);
  ddb_wipe(mac, sizeof(mac));
}

ddb_principal *ddb_principal_new(const char *access_key,
                                 const char *secret_key, const char *token) {
  const char *parts[3];
  size_t lens[3];
  ddb_principal *pr = malloc(sizeof(*pr));
  if(!pr)
    return NULL;
  parts[0] = access_key ? access_key : "";
  parts[1] = secret_key ? secret_key : "";
  parts[2] = token ? token : "";
  lens[0] = strlen(parts[0]);
  lens[1] = strlen(parts[1]);
  lens[2] = strlen(parts[2]);
  pr->next = NULL;
  ddb_scope_hash('U', parts, lens, 3, pr->id);
  return pr;
}
