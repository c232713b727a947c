/*
** creds_sts.c -- credentials from AWS STS, as botocore fetches them:
**
**   AssumeRole                  role_arn with source_profile or
**                               credential_source: signed (SigV4, service
**                               "sts") with the source credentials;
**   AssumeRoleWithWebIdentity   web_identity_token_file (or
**                               AWS_WEB_IDENTITY_TOKEN_FILE) + role_arn:
**                               unsigned, the token read from its file at
**                               every call (Kubernetes rotates it).
**
** Both are STS's query protocol: a form-encoded POST of Action, Version
** 2011-06-15, RoleArn, RoleSessionName (and ExternalId, DurationSeconds
** when the profile sets them) to the endpoint creds.c resolved (the
** regional https://sts.<region>.amazonaws.com unless configured), the
** answer XML.  creds_http.c sends it (retries, CA bundle, interruptible).
**
** The caller (creds_fetch.c) hands AssumeRole its source credentials.
**
** Secrets: the source secret only signs; the web identity token goes only
** into the body, which is wiped; errors name the role, STS's code and
** message (control characters dropped, at most MSG_MAX bytes), never a
** key, a token or the body.
*/
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"
#include "sigv4.h"

#define STS_VERSION "2011-06-15"
#define FORM_TYPE   "application/x-www-form-urlencoded; charset=utf-8"
/* A web identity token file is read up to
** TOKEN_MAX bytes (STS takes at most 20,000 characters); STS's error
** message is quoted up to MSG_MAX bytes. */
#define TOKEN_MAX (64 * 1024)
#define MSG_MAX   300

/* ------------------------------------------------------------------------
** The answer
*/

/* The text of the first <tag>...</tag> in xml[0..n) after from (NULL:
** anywhere), entities decoded, malloc'ed into *out; 0, or -1 when absent
** (or out of memory: *out NULL either way). */
static int xml_text(const char *xml, size_t n, const char *from,
                    const char *tag, char **out) {
  char open[64], close[64];
  const char *p, *q, *end = xml + n;
  ddb_buf b;
  *out = NULL;
  snprintf(open, sizeof(open), "<%s>", tag);
  snprintf(close, sizeof(close), "</%s>", tag);
  p = from ? memmem(xml, n, from, strlen(from)) : xml;
  if(!p || (p = memmem(p, (size_t)(end - p), open, strlen(open))) == NULL)
    return -1;
  p += strlen(open);
  if((q = memmem(p, (size_t)(end - p), close, strlen(close))) == NULL)
    return -1;
  ddb_buf_init(&b, DDB_CREDS_OUT_MAX);
  while(p < q) {
    static const char *const ent[][2] = {
        {"&amp;", "&"},  {"&lt;", "<"},   {"&gt;", ">"},  {"&quot;", "\""},
        {"&apos;", "'"}, {"&#xD;", "\r"}, {"&#xA;", "\n"}};
    size_t i, k = 0;
    for(i = 0; *p == '&' && i < sizeof(ent) / sizeof(ent[0]); i++) {
      k = strlen(ent[i][0]);
      if((size_t)(q - p) >= k && memcmp(p, ent[i][0], k) == 0)
        break;
    }
    if(*p == '&' && i < sizeof(ent) / sizeof(ent[0])) {
      ddb_buf_adds(&b, ent[i][1]);
      p += k;
    } else
      ddb_buf_add(&b, p++, 1);
  }
  *out = b.failed ? NULL : ddb_buf_take(&b, NULL);
  if(!*out) {
    ddb_buf_free(&b);
    return -1;
  }
  return 0;
}

/* Drop control characters from s and cut it at MSG_MAX bytes (for a
** message quoted in an error). */
static void tame(char *s) {
  char *w = s;
  size_t n = 0;
  for(; *s && n < MSG_MAX; s++)
    if((unsigned char)*s >= 0x20 && *s != 0x7f) {
      *w++ = *s;
      n++;
    }
  *w = 0;
}

/* The credentials of STS's 200 answer xml[0..n) into *out; an answer
** without them is an error naming what. */
static ddb_result sts_answer(const char *xml, size_t n, const char *what,
                             ddb_creds *out, ddb_error *err) {
  char *when = NULL;
  ddb_result result = DDB_OK;
  if(xml_text(xml, n, "<Credentials>", "AccessKeyId", &out->access_key) ||
     xml_text(xml, n, "<Credentials>", "SecretAccessKey", &out->secret_key) ||
     xml_text(xml, n, "<Credentials>", "SessionToken", &out->session_token) ||
     xml_text(xml, n, "<Credentials>", "Expiration", &when) ||
     !*out->access_key || !*out->secret_key) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: STS answered without credentials", what);
    goto fail;
  }
  if(ddb_parse_iso8601(when, strlen(when), &out->expires))
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: STS answered an Expiration that is not a time",
                           what);

fail:
  free(when);
  if(result)
    ddb_creds_clear(out);
  return result;
}

/* The error of STS's answer (status, body xml[0..n)): its Code and
** Message, or the status when the body has none. */
static ddb_result sts_refusal(const char *xml, size_t n, long status,
                              const char *what, ddb_error *err) {
  char *code = NULL, *msg = NULL;
  ddb_result result;
  xml_text(xml, n, "<Error>", "Code", &code);
  xml_text(xml, n, "<Error>", "Message", &msg);
  if(code)
    tame(code);
  if(msg)
    tame(msg);
  result = ddb_error_set(
      err, DDB_ERR_CONFIG, "%s: STS answered HTTP %ld%s%s%s%s", what, status,
      code ? ": " : "", code ? code : "", msg ? ": " : "", msg ? msg : "");
  free(code);
  free(msg);
  return result;
}

/* ------------------------------------------------------------------------
** The request
*/

/* Append "&name=value" (value percent-encoded) to the form b. */
static void form_add(ddb_buf *b, const char *name, const char *value) {
  char *v = curl_easy_escape(NULL, value, 0);
  if(!v) {
    b->failed = 1;
    return;
  }
  ddb_buf_addf(b, "&%s=", name);
  ddb_buf_adds(b, v);
  ddb_wipe(v, strlen(v));
  curl_free(v);
}

/* The common part of the form: Action, Version, RoleArn, RoleSessionName
** (botocore-session-<Unix time> when the profile names none). */
static void form_start(ddb_buf *b, const char *action,
                       const ddb_cred_source *src) {
  char name[64];
  ddb_buf_addf(b, "Action=%s&Version=%s", action, STS_VERSION);
  form_add(b, "RoleArn", src->role_arn);
  if(!src->session_name)
    snprintf(name, sizeof(name), "botocore-session-%lld",
             (long long)time(NULL));
  form_add(b, "RoleSessionName", src->session_name ? src->session_name : name);
}

/* The SigV4 headers of the form body[0..n) to ep, signed with signer's
** credentials for STS in region: lines "Name: value" into hdr[0..4)
** (each malloc'ed; the rest NULL).  Returns 0, or -1 on a failure. */
static int sign_form(const ddb_creds *signer, const char *region,
                     const ddb_endpoint *ep, const char *body, size_t n,
                     char *hdr[5]) {
  char date[DDB_SIGV4_DATE_LEN], auth[DDB_SIGV4_AUTH_MAX];
  ddb_sigv4_header h[4];
  ddb_sigv4 *s;
  size_t nh = 0;
  int rc;
  ddb_buf b;
  if(ddb_sigv4_amz_date(time(NULL), date))
    return -1;
  s = ddb_sigv4_new(signer->access_key, signer->secret_key,
                    signer->session_token);
  if(!s)
    return -1;
  h[nh].name = "content-type";
  h[nh++].value = FORM_TYPE;
  h[nh].name = "host";
  h[nh++].value = ep->host;
  h[nh].name = "x-amz-date";
  h[nh++].value = date;
  if(ddb_sigv4_token(s)) {
    h[nh].name = "x-amz-security-token";
    h[nh++].value = ddb_sigv4_token(s);
  }
  rc = ddb_sigv4_sign(s, region, "sts", date, "POST", ep->sign_path, "", h, nh,
                      body, n, auth, sizeof(auth));
  if(rc == 0) {
    ddb_buf_init(&b, 64 * 1024);
    ddb_buf_addf(&b, "Host: %s", ep->host);
    hdr[1] = ddb_buf_take(&b, NULL);
    ddb_buf_init(&b, 64 * 1024);
    ddb_buf_addf(&b, "X-Amz-Date: %s", date);
    hdr[2] = ddb_buf_take(&b, NULL);
    ddb_buf_init(&b, 64 * 1024);
    ddb_buf_addf(&b, "Authorization: %s", auth);
    hdr[3] = ddb_buf_take(&b, NULL);
    if(ddb_sigv4_token(s)) {
      ddb_buf_init(&b, 64 * 1024);
      ddb_buf_addf(&b, "X-Amz-Security-Token: %s", ddb_sigv4_token(s));
      hdr[4] = ddb_buf_take(&b, NULL);
    }
    if(!hdr[1] || !hdr[2] || !hdr[3] || (ddb_sigv4_token(s) && !hdr[4]))
      rc = -1;
  }
  ddb_sigv4_free(s);
  return rc ? -1 : 0;
}

/* POST the form body[0..n) to src's STS endpoint (signed with signer's
** credentials, unless NULL) and read the credentials of the answer into
** *out.  what names the call in errors. */
static ddb_result sts_call(const ddb_cred_source *src, const char *what,
                           const ddb_buf *form, const ddb_creds *signer,
                           ddb_cancel_fn stop, void *stop_ud, ddb_creds *out,
                           ddb_error *err) {
  char *hdr[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  ddb_creds_req req;
  ddb_endpoint ep;
  ddb_result result;
  ddb_buf body;
  long status = 0;
  int i;

  memset(&ep, 0, sizeof(ep));
  ddb_buf_init(&body, DDB_CREDS_OUT_MAX);
  result = ddb_endpoint_parse(src->url, " (STS)", &ep, err);
  if(result)
    goto fail;
  hdr[0] = ddb_strdup("Content-Type: " FORM_TYPE);
  if(!hdr[0] || (signer && sign_form(signer, src->region, &ep, form->p,
                                     form->len, hdr))) {
    result = ddb_error_set(err, DDB_ERR_NOMEM,
                           "%s: cannot sign the STS request", what);
    goto fail;
  }
  memset(&req, 0, sizeof(req));
  req.what = what;
  req.method = "POST";
  req.url = ep.url;
  req.headers = (const char *const *)hdr;
  req.body = form->p;
  req.body_len = form->len;
  req.ca_bundle = src->ca_bundle;
  req.stop = stop;
  req.stop_ud = stop_ud;
  result = ddb_creds_http(&req, &body, &status, err);
  if(result)
    goto fail;
  if(status != 200)
    result = sts_refusal(body.p ? body.p : "", body.len, status, what, err);
  else
    result = sts_answer(body.p ? body.p : "", body.len, what, out, err);

fail:
  for(i = 0; i < 6; i++)
    ddb_wipe_free(hdr[i]);
  if(body.p)
    ddb_wipe(body.p, body.len);
  ddb_buf_free(&body);
  ddb_endpoint_free(&ep);
  return result;
}

/* ------------------------------------------------------------------------
** The two calls
*/

/* See ddb_client_int.h: AssumeRole. */
ddb_result ddb_creds_role_fetch(const ddb_cred_source *src,
                                const ddb_creds *signer, ddb_cancel_fn stop,
                                void *stop_ud, ddb_creds *out,
                                ddb_error *err) {
  char what[400], num[24];
  ddb_result result;
  ddb_buf form;
  snprintf(what, sizeof(what), "assume-role of %.300s", src->role_arn);
  ddb_buf_init(&form, TOKEN_MAX);
  form_start(&form, "AssumeRole", src);
  if(src->external_id)
    form_add(&form, "ExternalId", src->external_id);
  if(src->duration) {
    snprintf(num, sizeof(num), "%d", src->duration);
    form_add(&form, "DurationSeconds", num);
  }
  if(form.failed)
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  else
    result = sts_call(src, what, &form, signer, stop, stop_ud, out, err);
  ddb_buf_free(&form);
  return result;
}

/* Read the web identity token file path into *out (malloc'ed, as it is:
** botocore sends the file's bytes unchanged). */
static ddb_result read_token(const char *path, const char *what, char **out,
                             ddb_error *err) {
  ddb_buf b;
  char chunk[4096];
  size_t n;
  FILE *f = fopen(path, "rb");
  *out = NULL;
  if(!f)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "%s: cannot read the web identity token file "
                         "'%.200s': %s",
                         what, path, strerror(errno));
  ddb_buf_init(&b, TOKEN_MAX);
  if(ddb_buf_reserve(&b, TOKEN_MAX)) /* no realloc: no copy left behind */
    b.failed = 1;
  while(!b.failed && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
    ddb_buf_add(&b, chunk, n);
  ddb_wipe(chunk, sizeof(chunk));
  fclose(f);
  if(b.failed || !b.len) {
    if(b.p)
      ddb_wipe(b.p, b.len);
    ddb_buf_free(&b);
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "%s: the web identity token file '%.200s' is %s",
                         what, path, b.len ? "larger than 64 KiB" : "empty");
  }
  *out = ddb_buf_take(&b, NULL);
  return *out ? DDB_OK : ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
}

/* See ddb_client_int.h: AssumeRoleWithWebIdentity. */
ddb_result ddb_creds_web_identity_fetch(const ddb_cred_source *src,
                                        ddb_cancel_fn stop, void *stop_ud,
                                        ddb_creds *out, ddb_error *err) {
  char what[400], *token = NULL;
  ddb_result result;
  ddb_buf form;
  snprintf(what, sizeof(what), "web identity of %.300s", src->role_arn);
  result = read_token(src->token_file, what, &token, err);
  if(result)
    return result;
  ddb_buf_init(&form, 4 * TOKEN_MAX);
  /* room for all at once: a realloc would leave a copy of the token */
  if(ddb_buf_reserve(&form, 3 * strlen(token) + 4096))
    form.failed = 1;
  form_start(&form, "AssumeRoleWithWebIdentity", src);
  form_add(&form, "WebIdentityToken", token);
  ddb_wipe_free(token);
  if(form.failed)
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  else
    result = sts_call(src, what, &form, NULL, stop, stop_ud, out, err);
  if(form.p)
    ddb_wipe(form.p, form.len);
  ddb_buf_free(&form);
  return result;
}
