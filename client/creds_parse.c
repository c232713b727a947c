/*
** creds_parse.c -- what the credential sources answer: the JSON of a
** credential_process (Version 1, SessionToken) or of a container or
** instance-metadata endpoint (Token, Code), its ISO 8601 Expiration, and
** the freeing (secrets wiped) of credentials and of their sources.  A leaf
** of creds.c, creds_process.c and creds_meta.c.
*/
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"
#include "sigv4.h"

/* Free c's strings (the secrets wiped first) and zero it. */
void ddb_creds_clear(ddb_creds *c) {
  free(c->access_key);
  ddb_wipe_free(c->secret_key);
  ddb_wipe_free(c->session_token);
  memset(c, 0, sizeof(*c));
}

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

/* Wipe every string value of the tree j (the secret and the token among
** them) before it is freed. */
static void json_wipe(cJSON *j) {
  for(; j; j = j->next) {
    if(j->valuestring)
      ddb_wipe(j->valuestring, strlen(j->valuestring));
    json_wipe(j->child);
  }
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
  json_wipe(j);
  cJSON_Delete(j);
  return result;
}

/* See ddb_client_int.h: t as ISO 8601 UTC ("2026-01-05T10:00:00Z"). */
void ddb_creds_time(int64_t t, char *buf, size_t cap) {
  time_t tt = (time_t)t;
  struct tm tm;
  if(!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(buf, cap, "%lld", (long long)t);
}
