/*
** test_cache_keys.c -- unit tests of the process-wide cache (cache/cache.c,
** cache/write.c): keys never shared (the key encoding is injective),
** entries kept apart by credentials, region and endpoint, the principals'
** overflow, write-through of an unknown outcome.  No network: clients
** point at a closed port.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cache/ddb_cache.h"
#include "../../cache/cache_int.h"
#include "../../cache/store.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Keys never shared: the key encoding is injective, and entries are kept
** apart by endpoint (canonical), region and credentials
*/

/* The encoding of the key attributes v[0..n) (names set) in b (reset
** first), through the item path and the attribute path, which must agree.
** Returns 0, or -1 when either fails. */
static int encode_key(ddb_buf *b, const ddb_av *v, int n) {
  static const char *const names[] = {"PK", "SK"};
  ddb_item *it = ddb_item_from_avs(v, n);
  ddb_buf other;
  int rc = -1;
  ddb_buf_reset(b);
  ddb_buf_init(&other, 4096);
  if(it && ddb_key_encode(it, names, n, b) == 0 &&
     ddb_key_encode_avs(v, n, &other) == 0 && other.len == b->len &&
     memcmp(other.p, b->p, b->len) == 0)
    rc = 0;
  ddb_buf_free(&other);
  ddb_item_unref(it);
  return rc;
}

/* A key attribute named name of type t whose text is s[0..n). */
static ddb_av keyav(const char *name, ddb_type t, const char *s, size_t n) {
  ddb_av a;
  memset(&a, 0, sizeof(a));
  a.type = t;
  a.text = s;
  a.n = (uint32_t)n;
  a.name = name;
  a.name_len = (uint32_t)strlen(name);
  return a;
}

static void test_key_encoding_injective(void) {
  /* pairs of distinct keys (two attributes each, SK absent when sk is
  ** NULL) that must never encode alike */
  static const struct {
    ddb_type t1, t2;
    const char *pk1, *sk1;
    size_t npk1, nsk1;
    const char *pk2, *sk2;
    size_t npk2, nsk2;
  } v[] = {
      /* a partition/sort split with the separators inside a part */
      {DDB_S, DDB_S, "a",
       "b\x1eSK\x1fS\x1f"
       "c",
       1, 8,
       "a\x1eSK\x1fS\x1f"
       "b",
       "c", 8, 1},
      {DDB_S, DDB_S, "a|b", "c", 3, 1, "a", "b|c", 1, 3},
      {DDB_S, DDB_S, "a\x1e", "b", 2, 1, "a",
       "\x1e"
       "b",
       1, 2},
      {DDB_S, DDB_S, "a\x1f", "b", 2, 1, "a",
       "\x1f"
       "b",
       1, 2},
      /* NUL bytes are part of a value */
      {DDB_S, DDB_S, "a\0b", "c", 3, 1, "a", "b\0c", 1, 3},
      {DDB_S, DDB_S, "a\0", "b", 2, 1, "a", "\0b", 1, 2},
      {DDB_S, DDB_S, "a", "", 1, 0, "a\0", "", 2, 0},
      /* the same text as S, N and B */
      {DDB_S, DDB_S, "5", "x", 1, 1, "5", "x", 1, 1}, /* (equal: control) */
  };
  static const ddb_type types[] = {DDB_S, DDB_N, DDB_B};
  ddb_buf b1, b2;
  ddb_av k1[2], k2[2];
  size_t i, j, m;
  ddb_buf_init(&b1, 4096);
  ddb_buf_init(&b2, 4096);
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    int same = i == sizeof(v) / sizeof(v[0]) - 1;
    k1[0] = keyav("PK", v[i].t1, v[i].pk1, v[i].npk1);
    k1[1] = keyav("SK", v[i].t2, v[i].sk1, v[i].nsk1);
    k2[0] = keyav("PK", v[i].t1, v[i].pk2, v[i].npk2);
    k2[1] = keyav("SK", v[i].t2, v[i].sk2, v[i].nsk2);
    if(!CHECK(encode_key(&b1, k1, 2) == 0 && encode_key(&b2, k2, 2) == 0))
      continue;
    if(!CHECK_MSG((b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0) ==
                      same,
                  "pair %zu: %s", i,
                  same ? "equal keys encode apart"
                       : "distinct keys share "
                         "an encoding"))
      continue;
  }
  /* one text, three types: three keys (a partition key alone) */
  for(i = 0; i < 3; i++)
    for(j = i + 1; j < 3; j++) {
      k1[0] = keyav("PK", types[i], "5", 1);
      k2[0] = keyav("PK", types[j], "5", 1);
      CHECK(encode_key(&b1, k1, 1) == 0 && encode_key(&b2, k2, 1) == 0 &&
            (b1.len != b2.len || memcmp(b1.p, b2.p, b1.len) != 0));
    }
  /* a one-attribute key never encodes as a two-attribute one */
  k1[0] = keyav("PK", DDB_S, "a", 1);
  k1[1] = keyav("SK", DDB_S, "b", 1);
  CHECK(encode_key(&b1, k1, 2) == 0);
  for(m = 0; m < b1.len; m++) {
    /* no prefix of the 2-part encoding is a 1-part encoding of any PK:
    ** take the candidate PK text between the first and last bytes */
    k2[0] = keyav("PK", DDB_S, b1.p, m);
    CHECK(encode_key(&b2, k2, 1) == 0);
    if(!CHECK_MSG(b1.len != b2.len || memcmp(b1.p, b2.p, b1.len) != 0,
                  "PK of %zu bytes encodes as (PK, SK)", m))
      break;
  }
  /* numbers: every spelling of one value is one key, N "1e2" and "100"
  ** are one, and "1" then "e2" split differently is not */
  k1[0] = keyav("PK", DDB_N, "100", 3);
  k2[0] = keyav("PK", DDB_N, "1E+2", 4);
  CHECK(encode_key(&b1, k1, 1) == 0 && encode_key(&b2, k2, 1) == 0 &&
        b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0);
  k1[0] = keyav("PK", DDB_N, "1", 1);
  k1[1] = keyav("SK", DDB_N, "22", 2);
  k2[0] = keyav("PK", DDB_N, "12", 2);
  k2[1] = keyav("SK", DDB_N, "2", 1);
  CHECK(encode_key(&b1, k1, 2) == 0 && encode_key(&b2, k2, 2) == 0 &&
        (b1.len != b2.len || memcmp(b1.p, b2.p, b1.len) != 0));
  ddb_buf_free(&b1);
  ddb_buf_free(&b2);
}

/* Environment variables the principal tests set, saved and restored. */
static const char *const scope_env[] = {"AWS_PROFILE",
                                        "AWS_ACCESS_KEY_ID",
                                        "AWS_SECRET_ACCESS_KEY",
                                        "AWS_SESSION_TOKEN",
                                        "AWS_CONFIG_FILE",
                                        "AWS_SHARED_CREDENTIALS_FILE",
                                        "AWS_REGION",
                                        "AWS_DEFAULT_REGION",
                                        "AWS_ENDPOINT_URL",
                                        "AWS_ENDPOINT_URL_DYNAMODB"};
#define N_SCOPE_ENV (sizeof(scope_env) / sizeof(scope_env[0]))

/* A client of endpoint and region signing with (ak, sk, token), nothing
** read from files; NULL on failure.  The endpoint is never contacted. */
static ddb_client *scoped_client(const char *endpoint, const char *region,
                                 const char *ak, const char *sk,
                                 const char *token) {
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error err;
  memset(&cfg, 0, sizeof(cfg));
  cfg.endpoint = endpoint;
  cfg.region = region;
  cfg.max_retries = 0;
  setenv("AWS_ACCESS_KEY_ID", ak, 1);
  setenv("AWS_SECRET_ACCESS_KEY", sk, 1);
  if(token)
    setenv("AWS_SESSION_TOKEN", token, 1);
  else
    unsetenv("AWS_SESSION_TOKEN");
  ddb_error_clear(&err);
  if(ddb_client_new(&cfg, &c, &err))
    tap_diag("  ddb_client_new: %s", err.message);
  return c;
}

/* Does c's item cache answer for the key PK=pk of table T (no request)?
** On a hit *val (if given) is the item's attribute "v" (or "-" for a
** cached "no such item"). */
static int cached_for(ddb_client *c, const char *pk, char *val, size_t cap) {
  ddbc_policy pol = {.item_ttl = 300, .query_ttl = 300};
  ddb_av k = keyav("PK", DDB_S, pk, strlen(pk));
  ddb_item *it = NULL;
  int hit = ddbc_item_cached(c, "T", &k, 1, &pol, &it);
  if(hit && val) {
    const ddb_av *a = it ? ddb_item_get(it, "v") : NULL;
    snprintf(val, cap, "%s", a ? a->text : "-");
  }
  ddb_item_unref(it);
  return hit;
}

/* Write item {PK: pk, v: v} to table T through c (write-through: the
** cache then holds it for c). */
static void write_through(ddb_client *c, const char *pk, const char *v) {
  static char tname[] = "T", pkname[] = "PK";
  ddbc_policy pol = {.item_ttl = 300, .query_ttl = 300};
  ddb_index ix;
  ddb_table_desc d;
  ddb_av a[2];
  ddb_item *it;
  memset(&ix, 0, sizeof(ix));
  ix.pk.name = pkname;
  ix.pk.type = DDB_S;
  memset(&d, 0, sizeof(d));
  d.name = tname;
  d.n_indexes = 1;
  d.indexes = &ix;
  a[0] = keyav("PK", DDB_S, pk, strlen(pk));
  a[1] = keyav("v", DDB_S, v, strlen(v));
  it = ddb_item_from_avs(a, 2);
  if(CHECK(it != NULL))
    ddbc_note_write(c, &d, NULL, 1, it, it, &pol);
  ddb_item_unref(it);
}

static void test_principals_apart(void) {
  char *saved[N_SCOPE_ENV];
  char val[64];
  ddb_client *a, *a2, *b, *wrong, *tok1, *tok2, *west, *alias, *alias2,
      *https1, *https2, *other_port;
  size_t i;

  for(i = 0; i < N_SCOPE_ENV; i++) {
    const char *v = getenv(scope_env[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(scope_env[i]);
  }
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddbc_clear();
  a = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                    NULL);
  a2 = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                     NULL);
  b = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDB", "secretB",
                    NULL);
  wrong = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA",
                        "not-secretA", NULL);
  tok1 = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                       "token1");
  tok2 = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                       "token2");
  west = scoped_client("http://127.0.0.1:1", "us-west-2", "AKIDA", "secretA",
                       NULL);
  alias = scoped_client("http://LocalHost:1/", "us-east-1", "AKIDA", "secretA",
                        NULL);
  alias2 = scoped_client("http://localhost.:1//", "us-east-1", "AKIDA",
                         "secretA", NULL);
  https1 = scoped_client("https://DynamoDB.us-east-1.amazonaws.com:443/",
                         "us-east-1", "AKIDA", "secretA", NULL);
  https2 = scoped_client("https://dynamodb.us-east-1.amazonaws.com",
                         "us-east-1", "AKIDA", "secretA", NULL);
  other_port = scoped_client("http://127.0.0.1:2", "us-east-1", "AKIDA",
                             "secretA", NULL);
  if(!CHECK(a && a2 && b && wrong && tok1 && tok2 && west && alias && alias2 &&
            https1 && https2 && other_port))
    goto done;

  write_through(a, "x", "A's");
  CHECK(cached_for(a, "x", val, sizeof(val)) && strcmp(val, "A's") == 0);
  /* the same credentials, endpoint and region: one cache */
  CHECK(cached_for(a2, "x", val, sizeof(val)) && strcmp(val, "A's") == 0);
  /* another access key, another secret with the same key id, a session
  ** token, another region, another port: never A's entry */
  CHECK_MSG(!cached_for(b, "x", NULL, 0), "B read A's cached item");
  CHECK_MSG(!cached_for(wrong, "x", NULL, 0),
            "a wrong secret read the right one's cached item");
  CHECK_MSG(!cached_for(tok1, "x", NULL, 0),
            "credentials with a session token read those without");
  CHECK_MSG(!cached_for(west, "x", NULL, 0), "us-west-2 read us-east-1's");
  CHECK_MSG(!cached_for(other_port, "x", NULL, 0),
            "another port read the item");
  /* one server, however its URL is spelled: one cache */
  CHECK_MSG(cached_for(alias, "x", val, sizeof(val)),
            "http://LocalHost:1/ is not http://127.0.0.1:1");
  CHECK_MSG(cached_for(alias2, "x", val, sizeof(val)),
            "http://localhost.:1// is not http://127.0.0.1:1");
  write_through(https1, "y", "aws");
  CHECK_MSG(cached_for(https2, "y", val, sizeof(val)),
            "the default port 443, case and slash made two caches");

  /* B's own item, then a write through A: B's entry is dropped (A's
  ** write may have changed what B reads, on real AWS one table), never
  ** replaced by A's item */
  write_through(b, "z", "B's");
  CHECK(cached_for(b, "z", val, sizeof(val)) && strcmp(val, "B's") == 0);
  CHECK(!cached_for(tok1, "z", NULL, 0));
  write_through(tok2, "z", "tok2's");
  CHECK(cached_for(tok2, "z", val, sizeof(val)) && strcmp(val, "tok2's") == 0);
  CHECK_MSG(!cached_for(b, "z", NULL, 0),
            "B still reads its entry after tok2 wrote the item");
  write_through(b, "z", "B's");
  CHECK(cached_for(b, "z", val, sizeof(val)) && strcmp(val, "B's") == 0);
  write_through(a, "z", "A's");
  CHECK(cached_for(a, "z", val, sizeof(val)) && strcmp(val, "A's") == 0);
  CHECK_MSG(!cached_for(b, "z", NULL, 0),
            "B still reads its entry after A wrote the item");
  CHECK_MSG(!cached_for(tok2, "z", NULL, 0),
            "tok2 still reads its entry after A wrote the item");

done:
  ddb_client_free(a);
  ddb_client_free(a2);
  ddb_client_free(b);
  ddb_client_free(wrong);
  ddb_client_free(tok1);
  ddb_client_free(tok2);
  ddb_client_free(west);
  ddb_client_free(alias);
  ddb_client_free(alias2);
  ddb_client_free(https1);
  ddb_client_free(https2);
  ddb_client_free(other_port);
  ddbc_clear();
  for(i = 0; i < N_SCOPE_ENV; i++) {
    if(saved[i])
      setenv(scope_env[i], saved[i], 1);
    else
      unsetenv(scope_env[i]);
    free(saved[i]);
  }
}

/* Write-through (cache/write.c): a write whose outcome is unknown (here the
** endpoint refuses the connection: not a failed condition) may have been
** applied, so each of the five calls drops the item's cached entry. */
static void test_write_unknown_drops(void) {
  static char tname[] = "T", pkname[] = "PK";
  static const char *const key_names[] = {"PK"};
  static const char *const remove[] = {"v"};
  ddbc_policy pol = {.item_ttl = 300, .query_ttl = 300};
  char *saved[N_SCOPE_ENV];
  char val[64];
  ddb_index ix;
  ddb_table_desc d;
  ddb_av a[2];
  ddb_item *it = NULL, *out = NULL;
  ddb_client *c;
  ddb_write w;
  ddb_error err;
  size_t i;
  int k;

  for(i = 0; i < N_SCOPE_ENV; i++) {
    const char *v = getenv(scope_env[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(scope_env[i]);
  }
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddbc_clear();
  memset(&ix, 0, sizeof(ix));
  ix.pk.name = pkname;
  ix.pk.type = DDB_S;
  memset(&d, 0, sizeof(d));
  d.name = tname;
  d.n_indexes = 1;
  d.indexes = &ix;
  a[0] = keyav("PK", DDB_S, "x", 1);
  a[1] = keyav("v", DDB_S, "new", 3);
  c = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDW", "sW", NULL);
  it = ddb_item_from_avs(a, 2);
  if(!CHECK(c && it))
    goto done;
  for(k = 0; k < 5; k++) {
    ddb_result r = DDB_OK;
    write_through(c, "x", "old");
    if(!CHECK(cached_for(c, "x", val, sizeof(val)) && strcmp(val, "old") == 0))
      break;
    memset(&w, 0, sizeof(w));
    w.kind = DDB_WRITE_PUT;
    w.item = it;
    ddb_error_clear(&err);
    switch(k) {
    case 0:
      r = ddbc_put_item(c, &d, it, key_names, 1, DDB_COND_NONE, NULL, &pol,
                        &out, &err);
      break;
    case 1:
      r = ddbc_delete_item(c, &d, it, key_names, 1, DDB_COND_NONE, NULL, &pol,
                           &out, &err);
      break;
    case 2:
      r = ddbc_update_item(c, &d, it, key_names, 1, NULL, remove, 1,
                           DDB_COND_EXISTS, it, &pol, &out, &err);
      break;
    case 3:
      r = ddbc_transact_write(c, &d, &w, 1, key_names, 1, NULL, &pol, &err);
      break;
    default:
      r = ddbc_batch_write(c, &d, &w, 1, key_names, 1, &pol, NULL, &err);
      break;
    }
    CHECK_MSG(r != DDB_OK && out == NULL, "write %d did not fail", k);
    CHECK_MSG(!cached_for(c, "x", NULL, 0),
              "write %d of unknown outcome left the cached item", k);
    ddb_item_unref(out);
    out = NULL;
  }

done:
  ddb_item_unref(it);
  ddb_client_free(c);
  ddbc_clear();
  for(i = 0; i < N_SCOPE_ENV; i++) {
    if(saved[i])
      setenv(scope_env[i], saved[i], 1);
    else
      unsetenv(scope_env[i]);
    free(saved[i]);
  }
}

/* Past DDBC_MAX_PRINCIPALS (256) principals seen, the cache forgets
** everything once, and then remembers principals again. */
static void test_principals_overflow(void) {
  char *saved[N_SCOPE_ENV];
  char ak[32], val[64];
  ddb_client *a, *b, *c;
  size_t i;
  int k, kept = 1;

  for(i = 0; i < N_SCOPE_ENV; i++) {
    const char *v = getenv(scope_env[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(scope_env[i]);
  }
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddbc_clear();
  a = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "sA", NULL);
  b = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDB", "sB", NULL);
  if(!CHECK(a && b))
    goto done;
  write_through(a, "x", "A's");
  write_through(b, "y", "B's");
  /* 254 more principals: 256 in all, every entry kept */
  for(k = 0; k < 254; k++) {
    snprintf(ak, sizeof(ak), "AKID%03d", k);
    c = scoped_client("http://127.0.0.1:1", "us-east-1", ak, "s", NULL);
    if(!c)
      break;
    write_through(c, "w", ak);
    kept &= cached_for(c, "w", NULL, 0) == 1;
    ddb_client_free(c);
  }
  CHECK_MSG(kept, "a principal's own write was not cached");
  CHECK(cached_for(a, "x", val, sizeof(val)) && strcmp(val, "A's") == 0);
  CHECK(cached_for(b, "y", val, sizeof(val)) && strcmp(val, "B's") == 0);
  /* the 257th: everything is forgotten, then it is remembered */
  c = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDC", "sC", NULL);
  if(!CHECK(c != NULL))
    goto done;
  write_through(c, "x", "C's");
  CHECK_MSG(!cached_for(a, "x", NULL, 0), "A's entry survived the reset");
  CHECK_MSG(!cached_for(b, "y", NULL, 0), "B's entry survived the reset");
  CHECK(cached_for(c, "x", val, sizeof(val)) && strcmp(val, "C's") == 0);
  /* A is remembered again: C's write drops A's new entry */
  write_through(a, "x", "A's again");
  CHECK(cached_for(a, "x", val, sizeof(val)) && strcmp(val, "A's again") == 0);
  write_through(c, "x", "C's again");
  CHECK_MSG(!cached_for(a, "x", NULL, 0),
            "after the reset, A's entry survived C's write");
  ddb_client_free(c);

done:
  ddb_client_free(a);
  ddb_client_free(b);
  ddbc_clear();
  for(i = 0; i < N_SCOPE_ENV; i++) {
    if(saved[i])
      setenv(scope_env[i], saved[i], 1);
    else
      unsetenv(scope_env[i]);
    free(saved[i]);
  }
}

/* ddbc_note_writes (one call's writes, one hold of the store's lock, each
** tag moved once) leaves what ddbc_note_write of each would: the writer's
** entries written through (a deleted item as "no such item"), another
** principal's entries of those items dropped, the others untouched. */
static void test_note_writes_batch(void) {
  static char tname[] = "T", pkname[] = "PK";
  ddbc_policy pol = {.item_ttl = 300, .query_ttl = 300};
  char *saved[N_SCOPE_ENV];
  char val[64];
  ddb_index ix;
  ddb_table_desc d;
  ddb_av a[2];
  ddb_item *it[3] = {NULL, NULL, NULL};
  ddbc_write_note w[3];
  ddb_client *ca, *cb;
  size_t i;

  for(i = 0; i < N_SCOPE_ENV; i++) {
    const char *v = getenv(scope_env[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(scope_env[i]);
  }
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddbc_clear();
  memset(&ix, 0, sizeof(ix));
  ix.pk.name = pkname;
  ix.pk.type = DDB_S;
  memset(&d, 0, sizeof(d));
  d.name = tname;
  d.n_indexes = 1;
  d.indexes = &ix;
  ca = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDNA", "sA", NULL);
  cb = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDNB", "sB", NULL);
  a[0] = keyav("PK", DDB_S, "p", 1);
  a[1] = keyav("v", DDB_S, "1", 1);
  it[0] = ddb_item_from_avs(a, 2);
  a[0] = keyav("PK", DDB_S, "q", 1);
  a[1] = keyav("v", DDB_S, "2", 1);
  it[1] = ddb_item_from_avs(a, 2);
  a[0] = keyav("PK", DDB_S, "r", 1);
  it[2] = ddb_item_from_avs(a, 1);
  if(!CHECK(ca && cb && it[0] && it[1] && it[2]))
    goto done;
  write_through(cb, "p", "B's");
  write_through(cb, "s", "B's");
  write_through(ca, "r", "old");
  memset(w, 0, sizeof(w));
  for(i = 0; i < 3; i++) {
    w[i].key = it[i];
    w[i].old_known = i < 2;
    w[i].new_item = i < 2 ? it[i] : NULL; /* r: deleted */
  }
  ddbc_note_writes(ca, &d, w, 3, &pol);
  CHECK_MSG(cached_for(ca, "p", val, sizeof(val)) && strcmp(val, "1") == 0,
            "the writer's p is not written through");
  CHECK_MSG(cached_for(ca, "q", val, sizeof(val)) && strcmp(val, "2") == 0,
            "the writer's q is not written through");
  CHECK_MSG(cached_for(ca, "r", val, sizeof(val)) && strcmp(val, "-") == 0,
            "the deleted r is not cached as no such item");
  CHECK_MSG(!cached_for(cb, "p", NULL, 0),
            "another principal still reads its p after the write");
  CHECK_MSG(cached_for(cb, "s", val, sizeof(val)) && strcmp(val, "B's") == 0,
            "an item the call did not write was dropped");

done:
  for(i = 0; i < 3; i++)
    ddb_item_unref(it[i]);
  ddb_client_free(ca);
  ddb_client_free(cb);
  ddbc_clear();
  for(i = 0; i < N_SCOPE_ENV; i++) {
    if(saved[i])
      setenv(scope_env[i], saved[i], 1);
    else
      unsetenv(scope_env[i]);
    free(saved[i]);
  }
}

const tap_test tap_cache_keys_tests[] = {
    {"cache: distinct keys never share an encoding (separators, NUL, types)",
     test_key_encoding_injective},
    {"cache: entries apart by credentials and region, one per server",
     test_principals_apart},
    {"cache: past 256 principals the cache forgets everything once",
     test_principals_overflow},
    {"cache: a write-through of unknown outcome drops the cached item",
     test_write_unknown_drops},
    {"cache: one call's writes noted together leave what each noted alone "
     "would",
     test_note_writes_batch},
    {NULL, NULL}};
