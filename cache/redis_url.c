/*
** redis_url.c -- one job: redis:// and rediss:// URLs, parsed into a
** ddbc_redis_url (resp.h), redacted for messages, and wiped.  The
** connection they name is made by resp.c; the tier that reads them from
** shared_cache= or DYNAMODB_SHARED_CACHE is redis_conn.c.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp.h"

/* Percent-decode s[0..n) into out[0..cap) (NUL-terminated).  Returns 0,
** or -1 when it does not fit or a %xx is bad. */
static int pct_decode(const char *s, size_t n, char *out, size_t cap) {
  size_t i, j = 0;
  for(i = 0; i < n; i++) {
    int c = (unsigned char)s[i];
    if(c == '%') {
      int hi, lo;
      if(i + 2 >= n)
        return -1;
      hi = ddb_hexval((unsigned char)s[i + 1]);
      lo = ddb_hexval((unsigned char)s[i + 2]);
      if(hi < 0 || lo < 0)
        return -1;
      c = hi * 16 + lo;
      i += 2;
    }
    if(j + 1 >= cap)
      return -1;
    out[j++] = (char)c;
  }
  out[j] = 0;
  return 0;
}

/* Parse s[0..n) as a decimal in [lo, hi] into *v.  Returns 0 or -1. */
static int parse_dec(const char *s, size_t n, long lo, long hi, int *v) {
  long x = 0;
  size_t i;
  if(n == 0 || n > 6)
    return -1;
  for(i = 0; i < n; i++) {
    if(s[i] < '0' || s[i] > '9')
      return -1;
    x = x * 10 + (s[i] - '0');
  }
  if(x < lo || x > hi)
    return -1;
  *v = (int)x;
  return 0;
}

/* Set why (a phrase) and return -1. */
static int url_bad(char *why, size_t cap, const char *phrase) {
  snprintf(why, cap, "%s", phrase);
  return -1;
}

/* The user[:password]@ of a URL whose authority is p[0..path) (the last
** '@' before the path ends it), decoded into out.  Returns 0 with *host
** where the host starts (p when there is none), or -1 with why set (the
** password wiped). */
static int url_auth(const char *p, const char *path, ddbc_redis_url *out,
                    const char **host, char *why, size_t cap) {
  const char *q, *auth_end = NULL, *colon, *user_end;
  *host = p;
  for(q = p; q < path; q++)
    if(*q == '@')
      auth_end = q;
  if(!auth_end)
    return 0;
  colon = memchr(p, ':', (size_t)(auth_end - p));
  user_end = colon ? colon : auth_end;
  if(pct_decode(p, (size_t)(user_end - p), out->user, sizeof(out->user)))
    return url_bad(why, cap, "bad user name (too long or a bad %xx)");
  if(colon) {
    if(pct_decode(colon + 1, (size_t)(auth_end - colon - 1), out->password,
                  sizeof(out->password))) {
      ddbc_redis_url_wipe(out);
      return url_bad(why, cap, "bad password (too long or a bad %xx)");
    }
    out->has_password = 1;
  }
  *host = auth_end + 1;
  return 0;
}

/* The host of a URL at host[0..path): [v6] or a name, into out->host,
** then :port.  Returns 0 with *port where the port's digits start (NULL
** when there is none), or -1 with why set. */
static int url_host(const char *host, const char *path, ddbc_redis_url *out,
                    const char **port, char *why, size_t cap) {
  const char *host_end;
  size_t n;
  *port = NULL;
  if(*host == '[') {
    const char *rb = memchr(host, ']', (size_t)(path - host));
    if(!rb)
      return url_bad(why, cap, "no ']' after an IPv6 address");
    n = (size_t)(rb - host - 1);
    if(n == 0 || n >= sizeof(out->host))
      return url_bad(why, cap, "bad IPv6 address");
    memcpy(out->host, host + 1, n);
    out->host[n] = 0;
    host_end = rb + 1;
    if(host_end < path && *host_end != ':')
      return url_bad(why, cap, "bad text after an IPv6 address");
    if(host_end < path)
      *port = host_end + 1;
  } else {
    const char *colon = memchr(host, ':', (size_t)(path - host));
    host_end = colon ? colon : path;
    n = (size_t)(host_end - host);
    if(n == 0)
      return url_bad(why, cap, "no host");
    if(n >= sizeof(out->host))
      return url_bad(why, cap, "host name too long");
    memcpy(out->host, host, n);
    out->host[n] = 0;
    if(strspn(out->host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789.-_") != n)
      return url_bad(why, cap, "bad host name");
    if(colon)
      *port = colon + 1;
  }
  return 0;
}

/* See resp.h: the scheme, the user and password, the host, the port, the
** database number. */
int ddbc_redis_url_parse(const char *url, ddbc_redis_url *out, char *why,
                         size_t cap) {
  const char *p, *host, *port, *path;

  memset(out, 0, sizeof(*out));
  out->port = 6379;
  if(strncmp(url, "redis://", 8) == 0)
    p = url + 8;
  else if(strncmp(url, "rediss://", 9) == 0) {
    p = url + 9;
    out->tls = 1;
  } else if(strstr(url, "://"))
    return url_bad(why, cap, "the scheme must be redis:// or rediss:// (TLS)");
  else
    return url_bad(why, cap,
                   "expected redis://[user[:password]@]host[:port][/db]");
  if(strpbrk(p, "?#"))
    return url_bad(why, cap, "a query or fragment is not supported");
  path = strchr(p, '/');
  if(!path)
    path = p + strlen(p);
  if(url_auth(p, path, out, &host, why, cap) ||
     url_host(host, path, out, &port, why, cap))
    return -1;
  if(port && parse_dec(port, (size_t)(path - port), 1, 65535, &out->port))
    return url_bad(why, cap, "bad port (expected 1 to 65535)");
  if(*path == '/' && path[1]) {
    if(parse_dec(path + 1, strlen(path + 1), 0, 9999, &out->db))
      return url_bad(why, cap, "bad database number (expected /0 to /9999)");
  }
  return 0;
}

void ddbc_redis_url_redact(const char *url, char *out, size_t cap) {
  const char *s = strstr(url, "://");
  const char *path, *at = NULL, *colon, *q;
  if(!cap)
    return;
  if(!s) {
    snprintf(out, cap, "%s", url);
    return;
  }
  s += 3;
  path = strchr(s, '/');
  if(!path)
    path = s + strlen(s);
  for(q = s; q < path; q++)
    if(*q == '@')
      at = q;
  colon = at ? memchr(s, ':', (size_t)(at - s)) : NULL;
  if(!colon) {
    snprintf(out, cap, "%s", url);
    return;
  }
  snprintf(out, cap, "%.*s:***%s", (int)(colon - url), url, at);
}

void ddbc_redis_url_wipe(ddbc_redis_url *u) {
  volatile char *p = u->password;
  size_t i;
  for(i = 0; i < sizeof(u->password); i++)
    p[i] = 0;
}
