/*
** resp.h -- a small Redis client (RESP2 over TCP, or over TLS with
** OpenSSL) for the shared cache tier (redis_conn.c), and the redis://
** URLs that name a Redis (redis_url.c).  Internal to cache/.
**
** Every call is bounded: it takes a deadline (CLOCK_MONOTONIC seconds,
** ddbc_resp_clock) and gives up at it, and every reply is read into
** bounded memory (DDBC_RESP_MAX_REPLY bytes, DDBC_RESP_MAX_NODES values):
** a larger or malformed reply is an error that leaves the connection
** unusable (the caller closes it), never a crash and never unbounded
** memory.  A connection is used by one thread at a time.
*/
#ifndef DDBC_RESP_H
#define DDBC_RESP_H

#include <stddef.h>

#include "../client/ddb_client.h"

/* The longest reply read (an MGET of many values), and the most values
** in one reply. */
#define DDBC_RESP_MAX_REPLY (64u * 1024 * 1024)
#define DDBC_RESP_MAX_NODES 1024
/* The longest bulk string read (a value of shared.c, with room). */
#define DDBC_RESP_MAX_BULK (4u * 1024 * 1024 + 4096)
/* The most levels of nested arrays in a reply (XREAD's: streams, a
** stream, its entries, an entry, its fields). */
#define DDBC_RESP_MAX_DEPTH 5
/* The longest line of a reply (a status, an error, a length). */
#define DDBC_RESP_MAX_LINE 4096

/* A parsed redis:// or rediss:// URL:
**   redis[s]://[[USER][:PASSWORD]@]HOST[:PORT][/DB]
** HOST a name, an IPv4 address or [an IPv6 address]; PORT 1..65535
** (default 6379); DB 0..15 by default of Redis, any 0..9999 accepted
** here; USER and PASSWORD percent-decoded (Redis 6 ACL: AUTH user
** password; a password alone: AUTH password). */
typedef struct ddbc_redis_url {
  int tls; /* rediss:// */
  char host[256];
  int port;
  int db;
  char user[256];
  char password[512]; /* wiped by ddbc_redis_url_wipe */
  int has_password;
} ddbc_redis_url;

/* Parse url into *out.  Returns 0, or -1 with why (a lower-case phrase,
** NUL-terminated in why[0..cap)) naming what is wrong; a password is
** never quoted. */
int ddbc_redis_url_parse(const char *url, ddbc_redis_url *out, char *why,
                         size_t cap);
/* url with any password replaced by "***", for messages (always
** NUL-terminated, cut to cap). */
void ddbc_redis_url_redact(const char *url, char *out, size_t cap);
/* Wipe the password of u. */
void ddbc_redis_url_wipe(ddbc_redis_url *u);

/* CLOCK_MONOTONIC in seconds (deadlines are on this clock). */
double ddbc_resp_clock(void);

/* A reply: one value or an array of them (nested arrays are read and
** counted, their values flattened in order).  str/len point into the
** reply's own storage, valid until ddbc_resp_reply_free. */
enum {
  DDBC_RESP_STATUS = '+',
  DDBC_RESP_ERROR = '-',
  DDBC_RESP_INT = ':',
  DDBC_RESP_BULK = '$',
  DDBC_RESP_ARRAY = '*',
  DDBC_RESP_NIL = 'n' /* a nil bulk or a nil array */
};
typedef struct ddbc_resp_node {
  int type;
  long long integer; /* INT; ARRAY: its element count */
  const char *str;   /* STATUS, ERROR, BULK (NUL-terminated) */
  size_t len;
  size_t off; /* of str in the reply's text (internal) */
} ddbc_resp_node;
typedef struct ddbc_resp_reply {
  ddbc_resp_node *node; /* node[0] the reply; an array's elements follow */
  int n_node;
  ddb_buf text; /* the strings */
} ddbc_resp_reply;
void ddbc_resp_reply_free(ddbc_resp_reply *r);

/* Why a call failed: the connection is then unusable (close it). */
enum {
  DDBC_RESP_OK = 0,
  DDBC_RESP_TIMEOUT = 1, /* the deadline passed */
  DDBC_RESP_FAILED = 2   /* refused, closed, TLS, AUTH, or a reply that
                            is not RESP or over the bounds */
};

typedef struct ddbc_resp ddbc_resp;
/* TLS settings shared by the connections of one tier: an SSL_CTX that
** verifies the server's certificate against the system's CAs, and
** ca_file's when not NULL.  Returns NULL (why set) on failure. */
void *ddbc_resp_tls_new(const char *ca_file, char *why, size_t cap);
void ddbc_resp_tls_free(void *tls);

/* Connect to u (TLS with tls, an SSL_CTX from ddbc_resp_tls_new, when
** u->tls), then AUTH and SELECT as u says, all before deadline.  Returns
** DDBC_RESP_OK with *out (ddbc_resp_close), or TIMEOUT/FAILED with why
** set and *out NULL. */
int ddbc_resp_connect(const ddbc_redis_url *u, void *tls, double deadline,
                      ddbc_resp **out, char *why, size_t cap);
/* Close r (NULL is fine).  in_child: r was inherited through fork(), so
** its TLS session is the parent's: the socket is closed without a TLS
** close_notify, which would end the parent's session. */
void ddbc_resp_close(ddbc_resp *r, int in_child);
/* The process that opened r. */
int ddbc_resp_pid(const ddbc_resp *r);

/* Commands are built into a ddb_buf: ddbc_resp_cmd(b, argc) starts one
** of argc arguments, ddbc_resp_arg appends each (any bytes).  Several may
** follow one another (a pipeline). */
void ddbc_resp_cmd(ddb_buf *b, int argc);
void ddbc_resp_arg(ddb_buf *b, const void *p, size_t n);
static inline void ddbc_resp_args(ddb_buf *b, const char *s) {
  ddbc_resp_arg(b, s, strlen(s));
}

/* Send cmds[0..len) and read n replies into out[0..n) (each then freed
** by the caller with ddbc_resp_reply_free, also on failure), all before
** deadline; max_nodes bounds each reply's values (at most
** DDBC_RESP_MAX_NODES).  Returns DDBC_RESP_OK, TIMEOUT or FAILED (why
** set). */
int ddbc_resp_call(ddbc_resp *r, const char *cmds, size_t len,
                   ddbc_resp_reply *out, int n, int max_nodes, double deadline,
                   char *why, size_t cap);

#endif
