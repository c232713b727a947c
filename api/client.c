/*
** client.c -- dyn_client (options, table schemas), errors, statistics.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

const char *dyn_version(void) {
  return DYN_VERSION;
}

const char *dyn_code_name(dyn_code code) {
  switch(code) {
  case DYN_OK: return "DYN_OK";
  case DYN_ENOMEM: return "DYN_ENOMEM";
  case DYN_ECONFIG: return "DYN_ECONFIG";
  case DYN_ENETWORK: return "DYN_ENETWORK";
  case DYN_ESERVICE: return "DYN_ESERVICE";
  case DYN_EPARSE: return "DYN_EPARSE";
  case DYN_EINPUT: return "DYN_EINPUT";
  case DYN_ECONDITION: return "DYN_ECONDITION";
  case DYN_ETYPE: return "DYN_ETYPE";
  case DYN_EMISUSE: return "DYN_EMISUSE";
  }
  return "DYN_E?";
}

void dyn_free(void *p) {
  free(p);
}

/* ------------------------------------------------------------------------
** Errors
*/
static void copy_str(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if(n >= cap)
    n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = 0;
}

dyn_code dyni_error(dyn_error *err, const ddb_error *e) {
  dyn_code code;
  switch(e->code) {
  case DDB_OK: code = DYN_OK; break;
  case DDB_ERR_NOMEM: code = DYN_ENOMEM; break;
  case DDB_ERR_CONFIG: code = DYN_ECONFIG; break;
  case DDB_ERR_NETWORK: code = DYN_ENETWORK; break;
  case DDB_ERR_SERVICE: code = DYN_ESERVICE; break;
  case DDB_ERR_PARSE: code = DYN_EPARSE; break;
  case DDB_ERR_INPUT: code = DYN_EINPUT; break;
  case DDB_ERR_CANCELLED: code = DYN_ENETWORK; break; /* no hook is set */
  default: code = DYN_ESERVICE; break;
  }
  /* a failed condition is the caller's business, not DynamoDB's trouble */
  if(code == DYN_ESERVICE &&
     (strcmp(e->type, "ConditionalCheckFailedException") == 0 ||
      (strcmp(e->type, "TransactionCanceledException") == 0 &&
       strstr(e->message, "ConditionalCheckFailed"))))
    code = DYN_ECONDITION;
  if(err) {
    err->code = code;
    err->http_status = e->http_status;
    err->retries = e->retries;
    copy_str(err->type, sizeof(err->type), e->type);
    copy_str(err->message, sizeof(err->message),
             e->message[0] ? e->message : dyn_code_name(code));
  }
  return code;
}

dyn_code dyni_fail(dyn_error *err, dyn_code code, const char *fmt, ...) {
  va_list ap;
  if(!err)
    return code;
  memset(err, 0, sizeof(*err));
  err->code = code;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof(err->message), fmt, ap);
  va_end(ap);
  return code;
}

/* See api_int.h. */
dyn_code dyni_enter(dyn_client *c, int flags, int allowed, const char *fn,
                    dyn_error *err) {
  if(err)
    memset(err, 0, sizeof(*err));
  if(!c)
    return dyni_fail(err, DYN_EMISUSE, "%s: client is NULL", fn);
  if(flags & ~allowed)
    return dyni_fail(err, DYN_EMISUSE, "%s: unknown flags 0x%x", fn,
                     (unsigned)(flags & ~allowed));
  if((flags & DYN_IF_EXISTS) && (flags & DYN_IF_NOT_EXISTS))
    return dyni_fail(err, DYN_EMISUSE,
                     "%s: DYN_IF_EXISTS and DYN_IF_NOT_EXISTS together", fn);
  return DYN_OK;
}

/* ------------------------------------------------------------------------
** The client
*/
/* See dyndb.h. */
void dyn_options_init(dyn_options *o) {
  if(!o)
    return;
  memset(o, 0, sizeof(*o));
  o->max_retries = DYN_DEFAULT;
  o->item_ttl = DYN_DEFAULT;
  o->query_ttl = DYN_DEFAULT;
}

/* Option value v of dyn_options as client/ takes it (ddb_option_ttl,
** ddb_option_retries): DYN_DEFAULT is DDB_OPT_DEFAULT, DYN_OFF is 0. */
static double api_option(double v) {
  return v == DYN_DEFAULT ? DDB_OPT_DEFAULT : v == DYN_OFF ? 0 : v;
}

/* item_ttl or query_ttl v (named name) into *out, checked by client/.
** Returns DYN_OK, or DYN_EINPUT with err set. */
static dyn_code ttl_option(double v, const char *name, double *out,
                           dyn_error *err) {
  if(ddb_option_ttl(api_option(v), out))
    return dyni_fail(err, DYN_EINPUT,
                     "%s: %.15g is out of range (seconds from 0 to %d, or "
                     "DYN_DEFAULT)",
                     name, v, DDB_MAX_TTL);
  return DYN_OK;
}

/* fork(): every live client is on client/live.c's list (the one list of
** the process, the client layer's clients and request log on it too),
** whose pthread_atfork handlers take each one's lock before the fork and
** release it after, in the parent and the child alike, so the child never
** finds a table list half changed or locked by a thread it does not have.
** c->lock is a leaf: nothing else is taken while it is held. */
static void client_fork_lock(void *obj) {
  dyn_client *c = obj;
  pthread_mutex_lock(&c->lock);
}

static void client_fork_unlock(void *obj) {
  dyn_client *c = obj;
  pthread_mutex_unlock(&c->lock);
}

static const ddb_live_ops client_live_ops = {
    DDB_LIVE_API_CLIENT, client_fork_lock, client_fork_unlock, NULL};

/* Phase 1 of dyn_client_new: the options that need no client, checked,
** and max_retries into cfg.  Returns DYN_OK, or DYN_EINPUT with err set. */
static dyn_code check_options(const dyn_options *opt, ddb_config *cfg,
                              dyn_error *err) {
  if(opt->timeout < 0 || opt->connect_timeout < 0)
    return dyni_fail(err, DYN_EINPUT, "timeouts must not be negative");
  if((opt->timeout > 0 && opt->timeout < 0.001) ||
     (opt->connect_timeout > 0 && opt->connect_timeout < 0.001))
    /* curl counts milliseconds, and its 0 means no timeout at all */
    return dyni_fail(err, DYN_EINPUT,
                     "timeouts below 0.001 seconds are not possible");
  if(opt->shared_cache_timeout < 0)
    return dyni_fail(err, DYN_EINPUT,
                     "shared_cache_timeout must not be negative");
  if(opt->shared_lease_wait > 1)
    return dyni_fail(err, DYN_EINPUT,
                     "shared_lease_wait must be at most 1 second");
  if(opt->coherence != DYN_COHERENCE_TTL &&
     opt->coherence != DYN_COHERENCE_STREAMS)
    return dyni_fail(err, DYN_EINPUT,
                     "coherence: %d is neither DYN_COHERENCE_TTL nor "
                     "DYN_COHERENCE_STREAMS",
                     opt->coherence);
  if(ddb_option_retries(api_option(opt->max_retries), &cfg->max_retries))
    return dyni_fail(err, DYN_EINPUT,
                     "max_retries: %d is out of range (0 to %d, or "
                     "DYN_DEFAULT)",
                     opt->max_retries, DDB_MAX_RETRIES);
  return DYN_OK;
}

/* Phase 2: the cache's policy of c from opt (TTLs, coherence, lease wait;
** the shared tier is opened later).  Returns DYN_OK, or DYN_EINPUT. */
static dyn_code policy_options(const dyn_options *opt, dyn_client *c,
                               dyn_error *err) {
  dyn_code result;
  result = ttl_option(opt->item_ttl, "item_ttl", &c->pol.item_ttl, err);
  if(!result)
    result = ttl_option(opt->query_ttl, "query_ttl", &c->pol.query_ttl, err);
  if(!result)
    result =
        ttl_option(opt->max_staleness == DYN_DEFAULT ? 0 : opt->max_staleness,
                   "max_staleness", &c->pol.max_staleness, err);
  c->coherence = opt->coherence;
  c->pol.lease_wait = opt->shared_lease_wait > 0   ? opt->shared_lease_wait
                      : opt->shared_lease_wait < 0 ? 0
                                                   : ddbc_lease_wait_default();
  return result;
}

dyn_code dyn_client_new(const dyn_options *opt, dyn_client **out,
                        dyn_error *err) {
  dyn_options none;
  dyn_client *c = NULL;
  ddb_config cfg;
  ddb_error e;
  dyn_code result;

  if(err)
    memset(err, 0, sizeof(*err));
  if(!out)
    return dyni_fail(err, DYN_EMISUSE, "dyn_client_new: out is NULL");
  *out = NULL;
  if(!opt) {
    dyn_options_init(&none);
    opt = &none;
  }
  memset(&cfg, 0, sizeof(cfg));
  result = check_options(opt, &cfg, err);
  if(result)
    return result;
  c = calloc(1, sizeof(*c));
  if(!c)
    return dyni_fail(err, DYN_ENOMEM, "out of memory");
  pthread_mutex_init(&c->lock, NULL);
  ddb_live_add(&c->live, &client_live_ops, c);
  result = policy_options(opt, c, err);
  if(result)
    goto fail;
  cfg.region = c->strs[0] = opt->region ? ddb_strdup(opt->region) : NULL;
  cfg.endpoint = c->strs[1] = opt->endpoint ? ddb_strdup(opt->endpoint) : NULL;
  cfg.profile = c->strs[2] = opt->profile ? ddb_strdup(opt->profile) : NULL;
  cfg.ca_bundle = c->strs[3] =
      opt->ca_bundle ? ddb_strdup(opt->ca_bundle) : NULL;
  if((opt->region && !cfg.region) || (opt->endpoint && !cfg.endpoint) ||
     (opt->profile && !cfg.profile) || (opt->ca_bundle && !cfg.ca_bundle)) {
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");
    goto fail;
  }
  cfg.timeout = opt->timeout;
  cfg.connect_timeout = opt->connect_timeout;
  ddb_error_clear(&e);
  if(ddbc_shared_open(opt->shared_cache, opt->shared_cache_timeout,
                      &c->pol.shared, &e)) {
    result = dyni_error(err, &e);
    goto fail;
  }
  if(ddb_client_new(&cfg, &c->ddb, &e)) {
    result = dyni_error(err, &e);
    goto fail;
  }
  c->cfg = cfg;
  *out = c;
  return DYN_OK;

fail:
  dyn_client_free(c);
  return result;
}

void dyn_client_free(dyn_client *c) {
  dyn_table *t, *next;
  int i;
  if(!c)
    return;
  ddb_live_remove(&c->live);
  for(t = c->tables; t; t = next) {
    next = t->next;
    dyni_table_unref(t);
  }
  ddb_client_free(c->ddb);
  for(i = 0; i < 4; i++)
    free(c->strs[i]);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

const char *dyn_client_endpoint(const dyn_client *c) {
  return c && c->ddb ? ddb_client_endpoint(c->ddb) : NULL;
}

const char *dyn_client_region(const dyn_client *c) {
  return c && c->ddb ? ddb_client_region(c->ddb) : NULL;
}

const char *dyn_client_credential_source(const dyn_client *c) {
  return c && c->ddb ? ddb_client_credential_source(c->ddb) : NULL;
}

ddbc_policy dyni_policy(const dyn_client *c, const dyn_table *t, int flags) {
  ddbc_policy p = c->pol;
  p.consistent = (flags & DYN_CONSISTENT) != 0;
  p.reader = t ? t->reader : NULL;
  return p;
}

/* ------------------------------------------------------------------------
** Tables: the key schema of every table a client touched, refreshed every
** DYN_TABLE_TTL seconds (DescribeTable answers are also shared by every
** client for as long by cache/).
*/
void dyni_table_unref(dyn_table *t) {
  if(t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    ddbc_reader_detach(t->reader); /* the last one stops its thread */
    ddb_table_desc_free(t->desc);
    free(t);
  }
}

dyn_code dyni_table_get(dyn_client *c, const char *table, dyn_table **out,
                        dyn_error *err) {
  dyn_table *t, **pp;
  ddb_table_desc *desc = NULL;
  ddb_error e;
  double now = ddbc_now();

  *out = NULL;
  if(!table || !*table)
    return dyni_fail(err, DYN_EMISUSE, "no table name");
  if(ddb_arn_is(table)) {
    /* a table's ARN (another account's table): called by its ARN, in its
    ** region, which must be the client's (a client has one region) */
    ddb_arn a;
    const char *region = ddb_client_region(c->ddb);
    ddb_error_clear(&e);
    if(ddb_arn_parse(table, 0, &a, &e))
      return dyni_error(err, &e);
    if(!region || strcmp(region, a.region) != 0)
      return dyni_fail(err, DYN_ECONFIG,
                       "table '%s' is in region '%s' (its ARN) but the "
                       "client's region is '%s': use a client of region %s",
                       table, a.region, region ? region : "", a.region);
  }
  pthread_mutex_lock(&c->lock);
  for(t = c->tables; t; t = t->next)
    if(t->expires > now && strcmp(t->desc->name, table) == 0) {
      __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
      *out = t;
      break;
    }
  pthread_mutex_unlock(&c->lock);
  if(*out)
    return DYN_OK;

  ddb_error_clear(&e);
  if(ddbc_describe_table(c->ddb, table, &desc, &e))
    return dyni_error(err, &e);
  if(!desc->indexes || desc->n_indexes < 1 || !desc->indexes[0].pk.name) {
    ddb_table_desc_free(desc);
    return dyni_fail(err, DYN_EPARSE, "table '%s': no key schema", table);
  }
  t = calloc(1, sizeof(*t));
  if(!t) {
    ddb_table_desc_free(desc);
    return dyni_fail(err, DYN_ENOMEM, "out of memory");
  }
  t->desc = desc;
  /* coherence=streams: the table's reader (no stream: this call's error) */
  if(c->coherence == DYN_COHERENCE_STREAMS &&
     ddbc_reader_attach(&c->cfg, c->ddb, table, &t->reader, &e)) {
    ddb_table_desc_free(desc);
    free(t);
    return dyni_error(err, &e);
  }
  ddbc_reader_share(t->reader, c->pol.shared); /* one reader per fleet */
  t->key_names[0] = desc->indexes[0].pk.name;
  t->key_names[1] = desc->indexes[0].sk.name;
  t->n_key = t->key_names[1] ? 2 : 1;
  t->expires = now + DYN_TABLE_TTL;
  t->refs = 2; /* the list's and the caller's */
  pthread_mutex_lock(&c->lock);
  /* drop the entries of this table (expired, or a concurrent refresh) */
  for(pp = &c->tables; *pp;) {
    dyn_table *x = *pp;
    if(strcmp(x->desc->name, desc->name) == 0) {
      *pp = x->next;
      dyni_table_unref(x);
      continue;
    }
    pp = &x->next;
  }
  t->next = c->tables;
  c->tables = t;
  pthread_mutex_unlock(&c->lock);
  *out = t;
  return DYN_OK;
}

dyn_code dyni_key(const dyn_table *t, const ddb_item *src, const char *what,
                  ddb_item **key, dyn_error *err) {
  const ddb_av *attrs[2];
  const ddb_keyattr *ka[2];
  int i;

  if(key)
    *key = NULL;
  if(!src)
    return dyni_fail(err, DYN_EMISUSE, "%s is NULL", what);
  ka[0] = &t->desc->indexes[0].pk;
  ka[1] = &t->desc->indexes[0].sk;
  for(i = 0; i < t->n_key; i++) {
    const ddb_av *a = ddb_item_get(src, ka[i]->name);
    if(!a)
      return dyni_fail(err, DYN_EINPUT,
                       "%s: missing key attribute '%s' of table '%s'", what,
                       ka[i]->name, t->desc->name);
    if(a->type != ka[i]->type)
      return dyni_fail(
          err, DYN_EINPUT, "%s: key attribute '%s' must be %s, not %s", what,
          ka[i]->name, ddb_type_name(ka[i]->type), ddb_type_name(a->type));
    if(a->n == 0)
      return dyni_fail(err, DYN_EINPUT, "%s: key attribute '%s' is empty",
                       what, ka[i]->name);
    if(a->type == DDB_N && !ddb_number_fits(a->text, a->n))
      return dyni_fail(err, DYN_EINPUT,
                       "%s: key attribute '%s' is not a DynamoDB number", what,
                       ka[i]->name);
    if(a->type == DDB_B && !ddb_base64_ok(a->text, a->n))
      return dyni_fail(err, DYN_EINPUT, "%s: key attribute '%s' is not base64",
                       what, ka[i]->name);
    attrs[i] = a;
  }
  if(!key)
    return DYN_OK;
  if(src->root.n == (uint32_t)t->n_key) {
    *key = ddb_item_ref((ddb_item *)src);
    return DYN_OK;
  }
  *key = ddb_item_from_attrs(attrs, t->n_key);
  return *key ? DYN_OK : dyni_fail(err, DYN_ENOMEM, "out of memory");
}

/* ------------------------------------------------------------------------
** Cache and statistics
*/
static const ddb_op op_map[DYN_OP_COUNT] = {
    DDB_OP_GET_ITEM,      DDB_OP_BATCH_GET_ITEM,   DDB_OP_QUERY,
    DDB_OP_SCAN,          DDB_OP_PUT_ITEM,         DDB_OP_UPDATE_ITEM,
    DDB_OP_DELETE_ITEM,   DDB_OP_BATCH_WRITE_ITEM, DDB_OP_TRANSACT_WRITE_ITEMS,
    DDB_OP_DESCRIBE_TABLE};

void dyn_stats_get(dyn_stats *out) {
  ddbc_stats cs;
  ddb_stats rs;
  int i;
  if(!out)
    return;
  memset(out, 0, sizeof(*out));
  ddbc_stats_get(&cs);
  ddb_stats_get(&rs);
  out->item_hits = cs.item_hits;
  out->item_misses = cs.item_misses;
  out->query_hits = cs.query_hits;
  out->query_misses = cs.query_misses;
  out->evictions = cs.evictions;
  out->expirations = cs.expirations;
  out->stale = cs.stale;
  out->entries = cs.entries;
  out->bytes = cs.bytes;
  out->bytes_max = cs.bytes_max;
  out->requests = rs.requests;
  for(i = 0; i < DYN_OP_COUNT; i++)
    out->op_requests[i] = rs.op_requests[op_map[i]];
  out->retries = rs.retries;
  out->throttles = rs.throttles;
  out->consumed_rcu = rs.consumed_rcu;
  out->consumed_wcu = rs.consumed_wcu;
  out->shared_hits = cs.shared_hits;
  out->shared_misses = cs.shared_misses;
  out->shared_fills = cs.shared_fills;
  out->shared_auth_failures = cs.shared_auth_failures;
  out->shared_timeouts = cs.shared_timeouts;
  out->shared_errors = cs.shared_errors;
  out->shared_skipped = cs.shared_skipped;
  out->shared_down = cs.shared_down;
  out->shared_lease_wins = cs.shared_lease_wins;
  out->shared_lease_waits = cs.shared_lease_waits;
  out->shared_lease_stale = cs.shared_lease_stale;
  out->shared_lease_fallbacks = cs.shared_lease_fallbacks;
}

const char *dyn_op_name(dyn_op op) {
  if((int)op < 0 || op >= DYN_OP_COUNT)
    return "";
  return ddb_op_name(op_map[op]);
}

size_t dyn_cache_set_budget(size_t bytes) {
  return ddbc_set_budget(bytes);
}

void dyn_cache_clear(void) {
  ddbc_clear();
}
