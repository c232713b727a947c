/*
** resp.c -- a small Redis client: RESP2 over a non-blocking TCP socket,
** or over TLS with OpenSSL (see resp.h for the interface): one
** connection's DNS, socket, TLS and deadlines, and the protocol spoken
** on it.  The URLs that name a Redis are parsed by redis_url.c.
**
** Why not hiredis.  Debian 12 ships libhiredis 0.14.1, which has no TLS
** (hiredis_ssl came with 1.0), and managed Redis services (ElastiCache,
** Memorystore, Azure Cache) want rediss:// and AUTH with a user (Redis 6
** ACL).  libcurl has no Redis.  The protocol the tier needs is small
** (AUTH, SELECT, GET, MGET, SET, a pipeline of them), and OpenSSL is
** already in the process through libcurl, so the client is these few
** hundred lines, and every read is bounded by this file's own rules:
**
**   - every call has a deadline (poll() on the socket; the TLS handshake
**     and every SSL_read/SSL_write are non-blocking, retried on
**     WANT_READ/WANT_WRITE until the deadline);
**   - a name is resolved with getaddrinfo_a and gai_suspend, so a slow
**     DNS is bounded too;
**   - a reply is read into at most DDBC_RESP_MAX_REPLY bytes and
**     DDBC_RESP_MAX_NODES values, lines at most DDBC_RESP_MAX_LINE; a
**     bulk length or array count over the bounds, a byte that is not
**     RESP, a missing CRLF: the call fails and the connection is
**     dropped (its remaining bytes are never read).
*/
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "resp.h"

/* Bytes read from the socket at a time. */
#define RESP_READ_CHUNK 16384

struct ddbc_resp {
  int fd;
  SSL *ssl; /* NULL: plain TCP */
  int pid;  /* getpid() at connect */
  char *in; /* bytes read, not yet parsed: in[pos..len) */
  size_t pos, len, cap;
};

double ddbc_resp_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Milliseconds left before deadline for poll(): at least 0, rounded
** up. */
static int ms_left(double deadline) {
  double left = deadline - ddbc_resp_clock();
  if(left <= 0)
    return 0;
  return left > 3600 ? 3600000 : (int)(left * 1000) + 1;
}

/* Wait until fd is ready for events, or deadline.  Returns DDBC_RESP_OK,
** TIMEOUT or FAILED. */
static int wait_fd(int fd, short events, double deadline) {
  for(;;) {
    struct pollfd pfd;
    int rc, ms = ms_left(deadline);
    if(ms == 0)
      return DDBC_RESP_TIMEOUT;
    pfd.fd = fd;
    pfd.events = events;
    pfd.revents = 0;
    rc = poll(&pfd, 1, ms);
    if(rc > 0)
      return DDBC_RESP_OK;
    if(rc == 0)
      return DDBC_RESP_TIMEOUT;
    if(errno != EINTR)
      return DDBC_RESP_FAILED;
  }
}

/* ------------------------------------------------------------------------
** TLS
*/
void *ddbc_resp_tls_new(const char *ca_file, char *why, size_t cap) {
  SSL_CTX *ctx;
  OPENSSL_init_ssl(0, NULL);
  ctx = SSL_CTX_new(TLS_client_method());
  if(!ctx) {
    snprintf(why, cap, "cannot set up TLS");
    return NULL;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  if(SSL_CTX_set_default_verify_paths(ctx) != 1 ||
     (ca_file && SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1)) {
    snprintf(why, cap, "cannot load the CA certificates%s%.200s",
             ca_file ? " of " : "", ca_file ? ca_file : "");
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
  }
  return ctx;
}

void ddbc_resp_tls_free(void *tls) {
  SSL_CTX_free(tls);
}

/* Run the TLS handshake of r with u's host until deadline. */
static int tls_start(ddbc_resp *r, const ddbc_redis_url *u, void *tls,
                     double deadline, char *why, size_t cap) {
  unsigned char ip[16];
  int is_ip = inet_pton(AF_INET, u->host, ip) == 1 ||
              inet_pton(AF_INET6, u->host, ip) == 1;
  r->ssl = SSL_new(tls);
  if(!r->ssl || SSL_set_fd(r->ssl, r->fd) != 1) {
    snprintf(why, cap, "cannot set up TLS");
    return DDBC_RESP_FAILED;
  }
  /* the certificate must name the host (or its address) */
  if(is_ip) {
    X509_VERIFY_PARAM *vp = SSL_get0_param(r->ssl);
    X509_VERIFY_PARAM_set1_ip_asc(vp, u->host);
  } else {
    SSL_set_tlsext_host_name(r->ssl, u->host);
    SSL_set1_host(r->ssl, u->host);
  }
  for(;;) {
    int rc = SSL_connect(r->ssl), e, w;
    if(rc == 1)
      return DDBC_RESP_OK;
    e = SSL_get_error(r->ssl, rc);
    if(e == SSL_ERROR_WANT_READ)
      w = wait_fd(r->fd, POLLIN, deadline);
    else if(e == SSL_ERROR_WANT_WRITE)
      w = wait_fd(r->fd, POLLOUT, deadline);
    else {
      long v = SSL_get_verify_result(r->ssl);
      if(v != X509_V_OK)
        snprintf(why, cap, "TLS: certificate not trusted (%s)",
                 X509_verify_cert_error_string(v));
      else
        snprintf(why, cap, "TLS handshake failed");
      ERR_clear_error();
      return DDBC_RESP_FAILED;
    }
    if(w) {
      snprintf(why, cap, "%s",
               w == DDBC_RESP_TIMEOUT ? "TLS handshake timed out"
                                      : "TLS handshake failed");
      return w;
    }
  }
}

/* ------------------------------------------------------------------------
** Connecting
*/

/* u's host as an IPv4 or IPv6 literal into *ss (with u's port) and *sl.
** Returns 1, or 0 when the host is a name. */
static int resolve_literal(const ddbc_redis_url *u,
                           struct sockaddr_storage *ss, socklen_t *sl) {
  struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
  if(inet_pton(AF_INET, u->host, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons((unsigned short)u->port);
    *sl = sizeof(*v4);
    return 1;
  }
  if(inet_pton(AF_INET6, u->host, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((unsigned short)u->port);
    *sl = sizeof(*v6);
    return 1;
  }
  return 0;
}

/* Wait for the asynchronous lookup req until it ends or deadline passes
** (signals and spurious wake-ups waited through).  Returns its
** gai_error(): EAI_INPROGRESS when it is still running. */
static int lookup_wait(struct gaicb *req, double deadline) {
  struct timespec ts;
  double left;
  int rc;
  for(;;) {
    const struct gaicb *const list[1] = {req};
    left = deadline - ddbc_resp_clock();
    if(left <= 0)
      break;
    ts.tv_sec = (time_t)left;
    ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
    rc = gai_suspend(list, 1, &ts);
    if(rc == 0 || rc == EAI_ALLDONE || gai_error(req) != EAI_INPROGRESS)
      break;
    if(rc != EAI_INTR && rc != EAI_AGAIN)
      break;
  }
  return gai_error(req);
}

/* One asynchronous lookup: the request and everything it points to (the
** hints, the host name), in one block, so that a lookup that can be
** neither finished nor cancelled in time is leaked whole, never left
** reading freed or returned memory. */
typedef struct lookup {
  struct gaicb req;
  struct addrinfo hints;
  char host[]; /* u->host, copied */
} lookup;

/* Resolve u's host into *ss (the first address) before deadline: a
** literal at once, a name by glibc's asynchronous lookup.  Returns
** DDBC_RESP_OK, or DDBC_RESP_TIMEOUT or DDBC_RESP_FAILED with why set. */
static int resolve(const ddbc_redis_url *u, struct sockaddr_storage *ss,
                   socklen_t *sl, double deadline, char *why, size_t cap) {
  struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
  size_t nhost = strlen(u->host);
  struct gaicb *req;
  lookup *lk;
  int rc;

  memset(ss, 0, sizeof(*ss));
  if(resolve_literal(u, ss, sl))
    return DDBC_RESP_OK;
  /* a name: glibc's asynchronous lookup, waited for until the deadline */
  lk = calloc(1, sizeof(*lk) + nhost + 1);
  if(!lk) {
    snprintf(why, cap, "out of memory");
    return DDBC_RESP_FAILED;
  }
  memcpy(lk->host, u->host, nhost + 1);
  lk->hints.ai_family = AF_UNSPEC;
  lk->hints.ai_socktype = SOCK_STREAM;
  req = &lk->req;
  req->ar_name = lk->host;
  req->ar_request = &lk->hints;
  if(getaddrinfo_a(GAI_NOWAIT, &req, 1, NULL)) {
    free(lk);
    snprintf(why, cap, "cannot resolve '%.200s'", u->host);
    return DDBC_RESP_FAILED;
  }
  rc = lookup_wait(req, deadline);
  if(rc == EAI_INPROGRESS) {
    /* still running: it owns lk (the request, its hints and name) until
    ** it ends, so cancel it; if it cannot be cancelled, leak lk rather
    ** than let it read or write freed memory */
    snprintf(why, cap, "resolving '%.200s' timed out", u->host);
    if(gai_cancel(req) == EAI_CANCELED)
      free(lk);
    return DDBC_RESP_TIMEOUT;
  }
  if(rc != 0 || !req->ar_result) {
    snprintf(why, cap, "cannot resolve '%.200s'", u->host);
    if(req->ar_result)
      freeaddrinfo(req->ar_result);
    free(lk);
    return DDBC_RESP_FAILED;
  }
  memcpy(ss, req->ar_result->ai_addr, req->ar_result->ai_addrlen);
  *sl = req->ar_result->ai_addrlen;
  if(ss->ss_family == AF_INET)
    v4->sin_port = htons((unsigned short)u->port);
  else
    v6->sin6_port = htons((unsigned short)u->port);
  freeaddrinfo(req->ar_result);
  free(lk);
  return DDBC_RESP_OK;
}

/* Check a reply of AUTH or SELECT: +OK.  Returns DDBC_RESP_OK or
** FAILED with why. */
static int expect_ok(const ddbc_resp_reply *rp, const char *what, char *why,
                     size_t cap) {
  const ddbc_resp_node *n = &rp->node[0];
  if(n->type == DDBC_RESP_STATUS && n->len == 2 &&
     memcmp(n->str, "OK", 2) == 0)
    return DDBC_RESP_OK;
  if(n->type == DDBC_RESP_ERROR)
    snprintf(why, cap, "%s refused: %.120s", what, n->str);
  else
    snprintf(why, cap, "%s: unexpected answer", what);
  return DDBC_RESP_FAILED;
}

/* AUTH and SELECT as u says, pipelined. */
static int handshake(ddbc_resp *r, const ddbc_redis_url *u, double deadline,
                     char *why, size_t cap) {
  ddbc_resp_reply rp[2];
  ddb_buf b;
  int n = 0, rc, i;
  char db[16];

  memset(rp, 0, sizeof(rp));
  ddb_buf_init(&b, 4096);
  if(u->has_password) {
    ddbc_resp_cmd(&b, u->user[0] ? 3 : 2);
    ddbc_resp_args(&b, "AUTH");
    if(u->user[0])
      ddbc_resp_args(&b, u->user);
    ddbc_resp_args(&b, u->password);
    n++;
  }
  if(u->db) {
    snprintf(db, sizeof(db), "%d", u->db);
    ddbc_resp_cmd(&b, 2);
    ddbc_resp_args(&b, "SELECT");
    ddbc_resp_args(&b, db);
    n++;
  }
  rc = DDBC_RESP_OK;
  if(n > 0)
    rc = ddbc_resp_call(r, b.p, b.len, rp, n, 1, deadline, why, cap);
  i = 0;
  if(rc == DDBC_RESP_OK && u->has_password)
    rc = expect_ok(&rp[i++], "AUTH", why, cap);
  if(rc == DDBC_RESP_OK && u->db)
    rc = expect_ok(&rp[i], "SELECT", why, cap);
  for(i = 0; i < n; i++)
    ddbc_resp_reply_free(&rp[i]);
  if(b.p)
    OPENSSL_cleanse(b.p, b.len); /* the password */
  ddb_buf_free(&b);
  return rc;
}

int ddbc_resp_connect(const ddbc_redis_url *u, void *tls, double deadline,
                      ddbc_resp **out, char *why, size_t cap) {
  struct sockaddr_storage ss;
  socklen_t sl = 0;
  ddbc_resp *r;
  int rc, one = 1, err = 0;
  socklen_t el = sizeof(err);

  *out = NULL;
  rc = resolve(u, &ss, &sl, deadline, why, cap);
  if(rc)
    return rc;
  r = calloc(1, sizeof(*r));
  if(!r) {
    snprintf(why, cap, "out of memory");
    return DDBC_RESP_FAILED;
  }
  r->pid = (int)getpid();
  r->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if(r->fd < 0) {
    snprintf(why, cap, "socket: %s", strerror(errno));
    rc = DDBC_RESP_FAILED;
    goto fail;
  }
  setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if(connect(r->fd, (struct sockaddr *)&ss, sl) != 0) {
    if(errno != EINPROGRESS) {
      snprintf(why, cap, "connect: %s", strerror(errno));
      rc = DDBC_RESP_FAILED;
      goto fail;
    }
    rc = wait_fd(r->fd, POLLOUT, deadline);
    if(rc == DDBC_RESP_TIMEOUT) {
      snprintf(why, cap, "connect timed out");
      goto fail;
    }
    if(rc || getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &err, &el) || err) {
      snprintf(why, cap, "connect: %s", strerror(err ? err : errno));
      rc = DDBC_RESP_FAILED;
      goto fail;
    }
  }
  if(u->tls) {
    rc = tls_start(r, u, tls, deadline, why, cap);
    if(rc)
      goto fail;
  }
  rc = handshake(r, u, deadline, why, cap);
  if(rc)
    goto fail;
  *out = r;
  return DDBC_RESP_OK;

fail:
  ddbc_resp_close(r, 0);
  return rc;
}

void ddbc_resp_close(ddbc_resp *r, int in_child) {
  if(!r)
    return;
  if(r->ssl) {
    /* a close_notify (one non-blocking try) only from the process that
    ** made the session; SSL_free itself sends nothing */
    if(!in_child)
      SSL_shutdown(r->ssl);
    SSL_free(r->ssl);
    ERR_clear_error();
  }
  if(r->fd >= 0)
    close(r->fd);
  free(r->in);
  free(r);
}

int ddbc_resp_pid(const ddbc_resp *r) {
  return r->pid;
}

/* ------------------------------------------------------------------------
** Commands
*/
void ddbc_resp_cmd(ddb_buf *b, int argc) {
  ddb_buf_addf(b, "*%d\r\n", argc);
}

void ddbc_resp_arg(ddb_buf *b, const void *p, size_t n) {
  ddb_buf_addf(b, "$%zu\r\n", n);
  ddb_buf_add(b, p, n);
  ddb_buf_add(b, "\r\n", 2);
}

/* Write p[0..n) before deadline. */
static int send_all(ddbc_resp *r, const char *p, size_t n, double deadline) {
  while(n > 0) {
    ssize_t k;
    int w;
    if(r->ssl) {
      size_t done = 0;
      int rc = SSL_write_ex(r->ssl, p, n, &done);
      if(rc == 1) {
        p += done;
        n -= done;
        continue;
      }
      rc = SSL_get_error(r->ssl, rc);
      ERR_clear_error();
      if(rc == SSL_ERROR_WANT_WRITE)
        w = wait_fd(r->fd, POLLOUT, deadline);
      else if(rc == SSL_ERROR_WANT_READ)
        w = wait_fd(r->fd, POLLIN, deadline);
      else
        return DDBC_RESP_FAILED;
      if(w)
        return w;
      continue;
    }
    k = send(r->fd, p, n, MSG_NOSIGNAL);
    if(k > 0) {
      p += k;
      n -= (size_t)k;
      continue;
    }
    if(k < 0 && errno == EINTR)
      continue;
    if(k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      w = wait_fd(r->fd, POLLOUT, deadline);
      if(w)
        return w;
      continue;
    }
    return DDBC_RESP_FAILED;
  }
  return DDBC_RESP_OK;
}

/* Read more bytes into r->in (at least one) before deadline, keeping
** at most limit bytes unparsed.  Returns DDBC_RESP_OK, TIMEOUT or
** FAILED (closed, error, or the limit reached). */
static int fill(ddbc_resp *r, size_t limit, double deadline) {
  if(r->pos > 0 && r->pos == r->len)
    r->pos = r->len = 0;
  if(r->pos > 0 && r->cap - r->len < RESP_READ_CHUNK) {
    memmove(r->in, r->in + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
  }
  if(r->len - r->pos >= limit)
    return DDBC_RESP_FAILED;
  if(r->cap - r->len < RESP_READ_CHUNK) {
    size_t ncap = r->cap ? r->cap * 2 : RESP_READ_CHUNK * 2;
    char *x;
    if(ncap > limit + RESP_READ_CHUNK * 2)
      ncap = limit + RESP_READ_CHUNK * 2;
    if(ncap <= r->len)
      return DDBC_RESP_FAILED;
    x = realloc(r->in, ncap);
    if(!x)
      return DDBC_RESP_FAILED;
    r->in = x;
    r->cap = ncap;
  }
  for(;;) {
    size_t room = r->cap - r->len;
    int w;
    if(r->ssl) {
      size_t got = 0;
      int rc = SSL_read_ex(r->ssl, r->in + r->len, room, &got);
      if(rc == 1) {
        r->len += got;
        return DDBC_RESP_OK;
      }
      rc = SSL_get_error(r->ssl, rc);
      ERR_clear_error();
      if(rc == SSL_ERROR_WANT_READ)
        w = wait_fd(r->fd, POLLIN, deadline);
      else if(rc == SSL_ERROR_WANT_WRITE)
        w = wait_fd(r->fd, POLLOUT, deadline);
      else
        return DDBC_RESP_FAILED;
    } else {
      ssize_t k = recv(r->fd, r->in + r->len, room, 0);
      if(k > 0) {
        r->len += (size_t)k;
        return DDBC_RESP_OK;
      }
      if(k == 0)
        return DDBC_RESP_FAILED; /* closed */
      if(errno == EINTR)
        continue;
      if(errno != EAGAIN && errno != EWOULDBLOCK)
        return DDBC_RESP_FAILED;
      w = wait_fd(r->fd, POLLIN, deadline);
    }
    if(w)
      return w;
  }
}

/* The next line of r (without its CRLF) in *line, *n, read before
** deadline; at most DDBC_RESP_MAX_LINE bytes. */
static int read_line(ddbc_resp *r, const char **line, size_t *n,
                     double deadline) {
  size_t scanned = 0;
  for(;;) {
    char *base = r->in + r->pos;
    size_t avail = r->len - r->pos;
    char *cr =
        avail > scanned ? memchr(base + scanned, '\r', avail - scanned) : NULL;
    if(cr && (size_t)(cr - base) + 1 < avail) {
      if(cr[1] != '\n')
        return DDBC_RESP_FAILED;
      *line = base;
      *n = (size_t)(cr - base);
      r->pos += *n + 2;
      return DDBC_RESP_OK;
    }
    if(avail > DDBC_RESP_MAX_LINE)
      return DDBC_RESP_FAILED;
    scanned = cr ? (size_t)(cr - base) : avail;
    {
      int rc = fill(r, DDBC_RESP_MAX_LINE + 2, deadline);
      if(rc)
        return rc;
    }
  }
}

/* Parse a RESP integer s[0..n) (optional '-', 1 to 18 digits). */
static int parse_ll(const char *s, size_t n, long long *v) {
  long long x = 0;
  size_t i = 0;
  int neg = 0;
  if(n > 0 && s[0] == '-') {
    neg = 1;
    i = 1;
  }
  if(n == i || n - i > 18)
    return -1;
  for(; i < n; i++) {
    if(s[i] < '0' || s[i] > '9')
      return -1;
    x = x * 10 + (s[i] - '0');
  }
  *v = neg ? -x : x;
  return 0;
}

/* Append a node to rp (at most max_nodes); its string s[0..n) copied
** into rp->text (offsets fixed up by read_reply at the end). */
static int add_node(ddbc_resp_reply *rp, int max_nodes, int type,
                    long long integer, const char *s, size_t n) {
  ddbc_resp_node *x;
  if(rp->n_node >= max_nodes)
    return -1;
  x = realloc(rp->node, (size_t)(rp->n_node + 1) * sizeof(*x));
  if(!x)
    return -1;
  rp->node = x;
  x = &rp->node[rp->n_node++];
  x->type = type;
  x->integer = integer;
  x->len = n;
  x->str = NULL;
  x->off = rp->text.len; /* str is set when the reply is whole */
  if(ddb_buf_add(&rp->text, s ? s : "", n) || ddb_buf_addc(&rp->text, 0))
    return -1;
  return 0;
}

/* Read one value (and, for an array, its elements, at most depth levels
** down) into rp. */
static int read_value(ddbc_resp *r, ddbc_resp_reply *rp, int max_nodes,
                      int depth, double deadline) {
  const char *line;
  size_t n;
  long long v, i;
  int rc = read_line(r, &line, &n, deadline);
  if(rc)
    return rc;
  if(n == 0)
    return DDBC_RESP_FAILED;
  switch(line[0]) {
  case '+':
  case '-':
    return add_node(rp, max_nodes, line[0], 0, line + 1, n - 1)
               ? DDBC_RESP_FAILED
               : DDBC_RESP_OK;
  case ':':
    if(parse_ll(line + 1, n - 1, &v))
      return DDBC_RESP_FAILED;
    return add_node(rp, max_nodes, DDBC_RESP_INT, v, NULL, 0)
               ? DDBC_RESP_FAILED
               : DDBC_RESP_OK;
  case '$':
    if(parse_ll(line + 1, n - 1, &v) || v < -1)
      return DDBC_RESP_FAILED;
    if(v == -1)
      return add_node(rp, max_nodes, DDBC_RESP_NIL, 0, NULL, 0)
                 ? DDBC_RESP_FAILED
                 : DDBC_RESP_OK;
    if(v > (long long)DDBC_RESP_MAX_BULK ||
       (unsigned long long)v + rp->text.len > DDBC_RESP_MAX_REPLY)
      return DDBC_RESP_FAILED; /* over the bound: never read */
    while(r->len - r->pos < (size_t)v + 2) {
      rc = fill(r, (size_t)v + 2, deadline);
      if(rc)
        return rc;
    }
    if(r->in[r->pos + (size_t)v] != '\r' ||
       r->in[r->pos + (size_t)v + 1] != '\n')
      return DDBC_RESP_FAILED;
    rc = add_node(rp, max_nodes, DDBC_RESP_BULK, 0, r->in + r->pos, (size_t)v)
             ? DDBC_RESP_FAILED
             : DDBC_RESP_OK;
    r->pos += (size_t)v + 2;
    return rc;
  case '*':
    if(parse_ll(line + 1, n - 1, &v) || v < -1 || v > max_nodes)
      return DDBC_RESP_FAILED;
    if(v == -1)
      return add_node(rp, max_nodes, DDBC_RESP_NIL, 0, NULL, 0)
                 ? DDBC_RESP_FAILED
                 : DDBC_RESP_OK;
    if(depth <= 0 || add_node(rp, max_nodes, DDBC_RESP_ARRAY, v, NULL, 0))
      return DDBC_RESP_FAILED;
    for(i = 0; i < v; i++) {
      rc = read_value(r, rp, max_nodes, depth - 1, deadline);
      if(rc)
        return rc;
    }
    return DDBC_RESP_OK;
  default: return DDBC_RESP_FAILED; /* not RESP */
  }
}

void ddbc_resp_reply_free(ddbc_resp_reply *r) {
  free(r->node);
  ddb_buf_free(&r->text);
  memset(r, 0, sizeof(*r));
}

int ddbc_resp_call(ddbc_resp *r, const char *cmds, size_t len,
                   ddbc_resp_reply *out, int n, int max_nodes, double deadline,
                   char *why, size_t cap) {
  int i, k, rc;
  if(max_nodes > DDBC_RESP_MAX_NODES)
    max_nodes = DDBC_RESP_MAX_NODES;
  for(i = 0; i < n; i++) {
    memset(&out[i], 0, sizeof(out[i]));
    ddb_buf_init(&out[i].text, DDBC_RESP_MAX_REPLY + DDBC_RESP_MAX_NODES);
  }
  rc = send_all(r, cmds, len, deadline);
  for(i = 0; i < n && rc == DDBC_RESP_OK; i++) {
    rc = read_value(r, &out[i], max_nodes + 1, DDBC_RESP_MAX_DEPTH, deadline);
    if(rc == DDBC_RESP_OK && out[i].n_node == 0)
      rc = DDBC_RESP_FAILED;
    if(rc == DDBC_RESP_OK)
      for(k = 0; k < out[i].n_node; k++) /* offsets to pointers */
        out[i].node[k].str = out[i].text.p + out[i].node[k].off;
  }
  if(rc == DDBC_RESP_TIMEOUT)
    snprintf(why, cap, "timed out");
  else if(rc)
    snprintf(why, cap, "connection failed or answer not RESP");
  return rc;
}
