/*
** sso_token.c -- the access token of an IAM Identity Center (SSO)
** profile, as botocore gets it (utils.py SSOTokenLoader, tokens.py
** SSOTokenProvider):
**
**   where:   $HOME/.aws/sso/cache/<sha1 hex>.json, the SHA-1 of the
**            sso_session's name (sso_session profiles) or of the start URL
**            (legacy profiles); `aws sso login` writes it.  A file that is
**            not there (not a regular file) means "not logged in".
**   legacy:  accessToken and expiresAt are read; a token that has expired
**            is an error (run aws sso login).  Never refreshed.
**   session: the same keys; a token that expires within REFRESH_WINDOW is
**            refreshed first when the file also holds refreshToken,
**            clientId, clientSecret and a registrationExpiresAt still
**            ahead: SSO OIDC CreateToken, POST <oidc>/token with
**            {"grantType":"refresh_token", clientId, clientSecret,
**            refreshToken}, answered {accessToken, expiresIn,
**            refreshToken?}.  The new token is written back as botocore
**            writes it: the keys startUrl, region, accessToken, expiresAt,
**            clientId, clientSecret, registrationExpiresAt and refreshToken
**            (only when the answer had one), in Python's json.dumps layout,
**            through a temporary file (mode 0600) renamed over the old one.
**            An error answer from OIDC keeps the cached token (botocore
**            catches ClientError); a token that has expired then is an
**            error naming why it was not refreshed.  As in botocore, a
**            refresh that cannot reach OIDC, or a 200 answer without
**            accessToken or expiresIn, is an error.  A write that fails is
**            not (the fresh token is used; botocore would raise), so a
**            read-only home still works.
**
** Every token, secret and the file's text are wiped once used; no error
** quotes one.
*/
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sso_int.h"

/* botocore's SSOTokenProvider._REFRESH_WINDOW: refresh a token that
** expires in less than this many seconds. */
#define REFRESH_WINDOW (15 * 60)
/* The largest cache file read. */
#define TOKEN_FILE_MAX DDB_CREDS_OUT_MAX

/* See sso_int.h. */
char *ddb_sso_cache_file(const char *key) {
  static const char hex[] = "0123456789abcdef";
  unsigned char md[EVP_MAX_MD_SIZE];
  char name[2 * 20 + 1];
  const char *home = ddb_env("HOME");
  size_t n = 0, i;
  ddb_buf b;
  if(!home || !EVP_Q_digest(NULL, "SHA1", NULL, key, strlen(key), md, &n) ||
     n != 20)
    return NULL;
  for(i = 0; i < n; i++) {
    name[2 * i] = hex[md[i] >> 4];
    name[2 * i + 1] = hex[md[i] & 15];
  }
  name[2 * n] = 0;
  ddb_buf_init(&b, 8192);
  ddb_buf_addf(&b, "%s/.aws/sso/cache/%s.json", home, name);
  return ddb_buf_take(&b, NULL);
}

/* See sso_int.h: wipe every string of j, then free it. */
void ddb_sso_json_free(cJSON *j) {
  cJSON *c;
  for(c = j; c; c = c->next) {
    if(c->valuestring)
      ddb_wipe(c->valuestring, strlen(c->valuestring));
    if(c->child)
      ddb_sso_json_free(c->child);
    c->child = NULL;
  }
  cJSON_Delete(j);
}

/* Read the cache file path into *out (a cJSON tree).  Returns 1, 0 when
** it is not a regular file (botocore: "does not exist"), -1 when it
** cannot be read or is not a JSON object (err names what and path). */
static int cache_read(const char *path, const char *what, cJSON **out,
                      ddb_error *err) {
  struct stat st;
  char *text = NULL;
  size_t len = 0;
  ssize_t r;
  int fd, e = 0;
  *out = NULL;
  if(stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return 0;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  text = fd >= 0 ? malloc(TOKEN_FILE_MAX + 1) : NULL;
  while(text && len <= TOKEN_FILE_MAX &&
        (r = read(fd, text + len, TOKEN_FILE_MAX + 1 - len)) != 0) {
    if(r < 0 && errno == EINTR)
      continue;
    if(r < 0) {
      e = errno;
      break;
    }
    len += (size_t)r;
  }
  if(fd < 0 || !text)
    e = fd < 0 ? errno : ENOMEM;
  if(fd >= 0)
    close(fd);
  if(!e && len <= TOKEN_FILE_MAX)
    *out = cJSON_ParseWithLength(text, len);
  if(text) {
    ddb_wipe(text, len);
    free(text);
  }
  if(*out && cJSON_IsObject(*out))
    return 1;
  ddb_sso_json_free(*out);
  *out = NULL;
  ddb_error_set(err, DDB_ERR_CONFIG,
                "%s: the SSO token cache file '%.200s' %s: run aws sso login",
                what, path,
                e                      ? strerror(e)
                : len > TOKEN_FILE_MAX ? "is too large"
                                       : "is not a JSON object");
  return -1;
}

/* A time of the cache file (an ISO 8601 string, as botocore's
** dateutil.parser reads the ones the aws CLI writes: "...Z", "+00:00",
** or the older CLI's "...UTC") into *t.  Returns 0, or -1 when v is no
** such string. */
static int cache_time(const cJSON *v, int64_t *t) {
  char buf[64];
  const char *s = cJSON_GetStringValue(v);
  size_t n;
  if(!s || (n = strlen(s)) >= sizeof(buf) - 1)
    return -1;
  memcpy(buf, s, n + 1);
  if(n > 3 && strcmp(buf + n - 3, "UTC") == 0) {
    n -= 3;
    while(n > 0 && buf[n - 1] == ' ')
      n--;
    buf[n++] = 'Z';
    buf[n] = 0;
  }
  return ddb_parse_iso8601(buf, n, t);
}

/* Append s as Python's json.dumps writes a str (ensure_ascii): '"' and
** '\\' escaped, \n \r \t \b \f by name, other characters below ' ' or
** above '~' as \uXXXX (lower-case hex; UTF-16 surrogate pairs past
** U+FFFF; a byte that is no UTF-8 as U+FFFD). */
static void py_json_str(ddb_buf *b, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  ddb_buf_addc(b, '"');
  while(*p) {
    unsigned c = *p++, need = 0, i;
    if(c == '"' || c == '\\') {
      ddb_buf_addc(b, '\\');
      ddb_buf_addc(b, (char)c);
      continue;
    }
    if(c >= ' ' && c <= '~') {
      ddb_buf_addc(b, (char)c);
      continue;
    }
    if(c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
      ddb_buf_addc(b, '\\');
      ddb_buf_addc(b, c == '\n'   ? 'n'
                      : c == '\r' ? 'r'
                      : c == '\t' ? 't'
                      : c == '\b' ? 'b'
                                  : 'f');
      continue;
    }
    if(c >= 0xc2 && c <= 0xf4) {
      need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
      c &= need == 3 ? 0x07 : need == 2 ? 0x0f : 0x1f;
      for(i = 0; i < need && (p[i] & 0xc0) == 0x80; i++)
        c = (c << 6) | (p[i] & 0x3f);
      if(i < need || c > 0x10ffff || (need == 2 && c < 0x800) ||
         (need == 3 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff))
        c = 0xfffd;
      else
        p += need;
    } else if(c >= 0x80)
      c = 0xfffd;
    if(c >= 0x10000) {
      c -= 0x10000;
      ddb_buf_addf(b, "\\u%04x\\u%04x", 0xd800 + (c >> 10),
                   0xdc00 + (c & 0x3ff));
    } else
      ddb_buf_addf(b, "\\u%04x", c);
  }
  ddb_buf_addc(b, '"');
}

/* Write text[0..n) to path as botocore's JSONFileCache does: a temporary
** file in the same folder (mkstemp: mode 0600), fsync'ed, renamed over
** path.  Returns 0, or -1 (nothing left behind). */
static int cache_write(const char *path, const char *text, size_t n) {
  const char *slash = strrchr(path, '/');
  ddb_buf tmpl;
  size_t done = 0;
  int fd, rc = -1;
  ssize_t w;
  if(!slash)
    return -1;
  ddb_buf_init(&tmpl, 8192);
  ddb_buf_add(&tmpl, path, (size_t)(slash - path));
  ddb_buf_adds(&tmpl, "/tmpXXXXXX.tmp");
  if(tmpl.failed || (fd = mkostemps(tmpl.p, 4, O_CLOEXEC)) < 0) {
    ddb_buf_free(&tmpl);
    return -1;
  }
  while(done < n && ((w = write(fd, text + done, n - done)) > 0 ||
                     (w < 0 && errno == EINTR)))
    if(w > 0)
      done += (size_t)w;
  if(done == n && fsync(fd) == 0)
    rc = 0;
  if(close(fd) != 0)
    rc = -1;
  if(rc == 0 && rename(tmpl.p, path) != 0)
    rc = -1;
  if(rc != 0)
    unlink(tmpl.p);
  ddb_buf_free(&tmpl);
  return rc;
}

/* See sso_int.h: "Type: message" of an error answer. */
void ddb_sso_error_text(const char *body, size_t n, char *out, size_t cap) {
  static const char *const types[] = {"__type", "code", "error"};
  static const char *const msgs[] = {"message", "Message",
                                     "error_description"};
  cJSON *j = cJSON_ParseWithLength(body ? body : "", body ? n : 0);
  const char *type = NULL, *msg = NULL, *hash;
  size_t i, tn = 0;
  for(i = 0; i < 3 && !type; i++)
    type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, types[i]));
  for(i = 0; i < 3 && !msg; i++)
    msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, msgs[i]));
  if(type) {
    if((hash = strrchr(type, '#')) != NULL) /* "namespace#Type" */
      type = hash + 1;
    tn = strcspn(type, ":"); /* "Type:http://internal.amazon.com/..." */
    if(tn > 80)
      tn = 80;
  }
  snprintf(out, cap, "%.*s%s%.200s", (int)tn, type ? type : "",
           type && msg ? ": " : "", msg ? msg : "");
  cJSON_Delete(j);
}

/* t (Unix seconds) as botocore writes a time into the cache
** ("%Y-%m-%dT%H:%M:%SZ") into buf[0..cap), cap >= 21. */
static void utc_time(int64_t t, char *buf, size_t cap) {
  time_t tt = (time_t)t;
  struct tm tm;
  if(!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(buf, cap, "%lld", (long long)t);
}

/* The string member name of obj, or NULL when absent or not a string. */
static const char *member_str(const cJSON *obj, const char *name) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));
}

/* What a refresh brings: the new token (malloc'ed, wiped when freed). */
typedef struct fresh_token {
  char *access;
  char *refresh; /* NULL: the answer had none */
  int64_t expires;
} fresh_token;

static void fresh_free(fresh_token *f) {
  ddb_wipe_free(f->access);
  ddb_wipe_free(f->refresh);
  memset(f, 0, sizeof(*f));
}

/* Send CreateToken (grant refresh_token) with the registration and the
** refresh token of tok to s's OIDC endpoint.  Returns 1 with *f filled,
** 0 when OIDC answered an error (why says which), -1 on an error botocore
** raises too (err set). */
static int create_token(const ddb_sso_source *s, const char *what,
                        const cJSON *tok, const char *ca_bundle,
                        ddb_cancel_fn stop, void *stop_ud, int64_t now,
                        fresh_token *f, char *why, size_t whycap,
                        ddb_error *err) {
  static const char *const hdrs[] = {"Content-Type: application/json", NULL};
  const char *keys[3] = {"clientId", "clientSecret", "refreshToken"};
  ddb_buf body, out, url;
  char call[512];
  ddb_creds_req req;
  cJSON *ans = NULL;
  const cJSON *in;
  long status = 0;
  int i, rc = -1;

  ddb_buf_init(&body, DDB_CREDS_OUT_MAX);
  ddb_buf_reserve(&body, DDB_CREDS_OUT_MAX); /* no realloc: no copy left */
  ddb_buf_init(&out, DDB_CREDS_OUT_MAX);
  ddb_buf_reserve(&out, DDB_CREDS_OUT_MAX);
  ddb_buf_init(&url, 4096);
  ddb_buf_adds(&body, "{\"grantType\":\"refresh_token\"");
  for(i = 0; i < 3; i++) {
    const char *v = member_str(tok, keys[i]);
    ddb_buf_addf(&body, ",\"%s\":", keys[i]);
    ddb_buf_json_str(&body, v, strlen(v)); /* strings: checked before */
  }
  ddb_buf_addc(&body, '}');
  ddb_buf_addf(&url, "%s/token", s->oidc);
  if(body.failed || url.failed) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  memset(&req, 0, sizeof(req));
  snprintf(call, sizeof(call), "%s: SSO OIDC CreateToken", what);
  req.what = call;
  req.method = "POST";
  req.url = url.p;
  req.headers = hdrs;
  req.body = body.p;
  req.body_len = body.len;
  req.ca_bundle = ca_bundle;
  req.stop = stop;
  req.stop_ud = stop_ud;
  if(ddb_creds_http(&req, &out, &status, err))
    goto fail;
  if(status < 200 || status > 299) {
    char detail[200];
    ddb_sso_error_text(out.p, out.len, detail, sizeof(detail));
    snprintf(why, whycap, "SSO OIDC CreateToken answered %ld%s%s", status,
             *detail ? " " : "", detail);
    rc = 0;
    goto fail;
  }
  ans = cJSON_ParseWithLength(out.p ? out.p : "", out.len);
  in = cJSON_GetObjectItemCaseSensitive(ans, "expiresIn");
  /* a number a time can hold (botocore's timedelta overflows past it) */
  if(!member_str(ans, "accessToken") || !cJSON_IsNumber(in) ||
     !(fabs(in->valuedouble) < 1e12)) {
    ddb_error_set(
        err, DDB_ERR_CONFIG,
        "%s: SSO OIDC CreateToken (%.200s) answered no usable %s", what, url.p,
        member_str(ans, "accessToken") ? "expiresIn" : "accessToken");
    goto fail;
  }
  f->access = ddb_strdup(member_str(ans, "accessToken"));
  f->refresh = ddb_strdup(member_str(ans, "refreshToken"));
  f->expires = now + (int64_t)floor(in->valuedouble);
  if(!f->access || (member_str(ans, "refreshToken") && !f->refresh)) {
    fresh_free(f);
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  rc = 1;

fail:
  ddb_sso_json_free(ans);
  ddb_wipe(body.p, body.len);
  ddb_wipe(out.p, out.len);
  ddb_buf_free(&body);
  ddb_buf_free(&out);
  ddb_buf_free(&url);
  return rc;
}

/* Write the refreshed token f of s back to its cache file, with the
** registration of the old token tok, in botocore's keys and layout
** (json.dumps of the dict its _attempt_create_token builds).  A write
** that fails is ignored (see the top of the file). */
static void cache_save(const ddb_sso_source *s, const cJSON *tok,
                       const fresh_token *f) {
  char when[32];
  ddb_buf b;
  utc_time(f->expires, when, sizeof(when));
  ddb_buf_init(&b, DDB_CREDS_OUT_MAX);
  ddb_buf_reserve(&b, DDB_CREDS_OUT_MAX);
  ddb_buf_adds(&b, "{\"startUrl\": ");
  py_json_str(&b, s->start_url);
  ddb_buf_adds(&b, ", \"region\": ");
  py_json_str(&b, s->region);
  ddb_buf_adds(&b, ", \"accessToken\": ");
  py_json_str(&b, f->access);
  ddb_buf_adds(&b, ", \"expiresAt\": ");
  py_json_str(&b, when);
  ddb_buf_adds(&b, ", \"clientId\": ");
  py_json_str(&b, member_str(tok, "clientId"));
  ddb_buf_adds(&b, ", \"clientSecret\": ");
  py_json_str(&b, member_str(tok, "clientSecret"));
  ddb_buf_adds(&b, ", \"registrationExpiresAt\": ");
  py_json_str(&b, member_str(tok, "registrationExpiresAt"));
  if(f->refresh) {
    ddb_buf_adds(&b, ", \"refreshToken\": ");
    py_json_str(&b, f->refresh);
  }
  ddb_buf_addc(&b, '}');
  if(!b.failed)
    cache_write(s->cache_file, b.p, b.len);
  ddb_wipe(b.p, b.len);
  ddb_buf_free(&b);
}

/* botocore's _refresh_access_token for the cached token tok of an
** sso_session profile: 1 refreshed (*f filled, the file written again), 0
** not (why says why), -1 an error. */
static int refresh(const ddb_sso_source *s, const char *what, const cJSON *tok,
                   const char *ca_bundle, ddb_cancel_fn stop, void *stop_ud,
                   int64_t now, fresh_token *f, char *why, size_t whycap,
                   ddb_error *err) {
  static const char *const keys[] = {"refreshToken", "clientId",
                                     "clientSecret", "registrationExpiresAt"};
  int64_t reg;
  size_t i;
  int rc;
  for(i = 0; i < 4; i++)
    if(!cJSON_GetObjectItemCaseSensitive(tok, keys[i])) {
      snprintf(why, whycap, "the cache file has no %s", keys[i]);
      return 0;
    }
  for(i = 0; i < 4; i++)
    if(!member_str(tok, keys[i]) ||
       (i == 3 &&
        cache_time(cJSON_GetObjectItemCaseSensitive(tok, keys[i]), &reg))) {
      ddb_error_set(err, DDB_ERR_CONFIG,
                    "%s: %s in the SSO token cache file '%.200s' is not %s: "
                    "run aws sso login --profile %.100s",
                    what, keys[i], s->cache_file,
                    i == 3 ? "an ISO 8601 time" : "a string", s->profile);
      return -1;
    }
  if(reg <= now) {
    char when[32];
    utc_time(reg, when, sizeof(when));
    snprintf(why, whycap, "its client registration expired at %s", when);
    return 0;
  }
  if(!s->oidc) {
    ddb_error_set(err, DDB_ERR_CONFIG, "%s: %s", what,
                  s->oidc_error ? s->oidc_error : "no SSO OIDC endpoint");
    return -1;
  }
  rc = create_token(s, what, tok, ca_bundle, stop, stop_ud, now, f, why,
                    whycap, err);
  if(rc == 1)
    cache_save(s, tok, f);
  return rc;
}

/* See sso_int.h. */
ddb_result ddb_sso_token(const ddb_sso_source *s, const char *what,
                         const char *ca_bundle, ddb_cancel_fn stop,
                         void *stop_ud, int64_t now, char **token,
                         ddb_error *err) {
  const char *key = s->session ? s->session : s->start_url;
  char why[300] = "", when[32];
  fresh_token f;
  int64_t exp;
  cJSON *tok = NULL;
  ddb_error e;
  int rc;

  *token = NULL;
  memset(&f, 0, sizeof(f));
  ddb_error_clear(&e);
  if(!s->cache_file)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "%s: HOME is not set, so the SSO token cache "
                         "(~/.aws/sso/cache) cannot be found",
                         what);
  rc = cache_read(s->cache_file, what, &tok, &e);
  if(rc == 0)
    return ddb_error_set(
        err, DDB_ERR_CONFIG,
        "%s: no SSO token for '%.200s' in the cache ('%.200s' "
        "does not exist): run aws sso login --profile %.100s",
        what, key, s->cache_file, s->profile);
  if(rc < 0)
    goto fail;
  rc = -1;
  if(!cJSON_GetObjectItemCaseSensitive(tok, "accessToken") ||
     !cJSON_GetObjectItemCaseSensitive(tok, "expiresAt") ||
     !member_str(tok, "accessToken") ||
     cache_time(cJSON_GetObjectItemCaseSensitive(tok, "expiresAt"), &exp)) {
    ddb_error_set(&e, DDB_ERR_CONFIG,
                  "%s: the SSO token cache file '%.200s' has no valid "
                  "accessToken and expiresAt: run aws sso login --profile "
                  "%.100s",
                  what, s->cache_file, s->profile);
    goto fail;
  }
  if(s->session && exp - now < REFRESH_WINDOW) {
    int r = refresh(s, what, tok, ca_bundle, stop, stop_ud, now, &f, why,
                    sizeof(why), &e);
    if(r < 0)
      goto fail;
    if(r == 1)
      exp = f.expires;
  }
  if(exp <= now) {
    utc_time(exp, when, sizeof(when));
    ddb_error_set(&e, DDB_ERR_CONFIG,
                  "%s: the SSO token expired at %s%s%.300s%s: run aws sso "
                  "login --profile %.100s",
                  what, when, *why ? " and was not refreshed (" : "", why,
                  *why ? ")" : "", s->profile);
    goto fail;
  }
  *token = f.access ? f.access : ddb_strdup(member_str(tok, "accessToken"));
  f.access = NULL;
  if(*token)
    rc = 0;
  else
    ddb_error_set(&e, DDB_ERR_NOMEM, "out of memory");

fail:
  fresh_free(&f);
  ddb_sso_json_free(tok);
  if(rc == 0)
    return DDB_OK;
  if(err)
    *err = e;
  return e.code ? e.code : DDB_ERR_CONFIG;
}
