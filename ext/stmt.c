/*
** stmt.c -- what each SQL statement cost: the connection's meter, the
** statement boundaries that tell one statement's cost from the next,
** dynamodb_last(), and the line an interactive shell prints after a
** costly statement.
**
**    SELECT count(*) FROM shop WHERE SK LIKE 'ORDER#%';
**    SELECT dynamodb_last();
**      -- {"stmt":7,"sql":"SELECT count(*) FROM shop ...",
**      --  "requests":{"Scan":8},"requests_total":8,...}
**
** Every connection that loads the extension gets one dd_conn (the client
** data of the module, freed with it).  The clients of its tables charge
** its meter (ddb_meter, client/meter.c) with every request, and the cache
** with every answer it gives from memory, from whatever thread; the
** meter's counters only grow.  SQLite's trace hook tells statements
** apart: SQLITE_TRACE_STMT when one starts running pushes a frame holding
** a copy of the meter, SQLITE_TRACE_PROFILE when it ends pops it, and the
** statement's cost is what the meter gained in between (kept for
** dynamodb_last(); on a terminal, a costly one gets its line).  Frames
** stack: a statement that starts while another is unfinished (a second
** cursor of a Python program stepped in between, SQL a user's function
** runs) is a statement of its own, and the one below goes on when it
** ends, its cost including the one above.  SQL the extension runs itself
** (dd_internal_sql: the stored description, dynamodb_refresh), and a
** trigger's program (the same statement), are part of the statement that
** runs them.
**
** The trace hook is one per connection: loading the extension replaces a
** hook set before, and a program that sets its own afterwards (the
** shell's .trace, Python's set_trace_callback) replaces this one.  Then a
** statement is what runs from a first open cursor of the connection's
** tables (or a write's xBegin) to the next: the meter (and so
** max_requests) still counts each apart, dynamodb_last() shows the one
** running or last run, and no line is printed.
**
** A write's lines are here too: the progress line of a write cut into
** calls that are not atomic together, and the hint that single-row
** statements in a row would go faster in one transaction (the progress
** line of a read is cursor.c's).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* A statement over this many requests gets its line whatever its time. */
#define DD_LINE_REQUESTS 100
/* An answer from the cache this old (seconds) is worth a line too. */
#define DD_LINE_CACHE_AGE 60.0
/* The longest SQL text a summary keeps (bytes). */
#define DD_SQL_MAX 1000

/* Statements running at once, at the most, that are counted apart (a
** deeper one counts with the one below). */
#define DD_MAX_FRAMES 16

/* A running statement. */
typedef struct dd_frame {
  sqlite3_stmt *pStmt;  /* NULL: started by a cursor, no trace hook */
  uint64_t id;          /* its stmt id */
  ddb_meter start;      /* the meter when it started */
  int64_t below_oldest; /* the frame below's oldest age so far */
  double t0;            /* when it started (ddbc_now) */
  int bUsed;            /* a table of the extension was used */
  int bQuiet;           /* one of them has progress=off */
} dd_frame;

struct dd_conn {
  sqlite3 *db;
  ddb_meter meter; /* every request and cache answer since the connection
                      loaded the extension */
  dd_frame aFrame[DD_MAX_FRAMES];
  int nFrame;          /* running statements (the top one is charged) */
  int nDeeper;         /* statements started above a full stack */
  int nOpen;           /* open cursors of the connection's tables */
  char *zLast;         /* the last statement's summary (JSON), or NULL;
                   sqlite3_free() */
  dd_txn_reg *pTxnReg; /* the open write transactions of the connection's
                          tables (txn.c), or NULL */
};

/* Statement ids, process-wide (the log's stmt). */
static uint64_t dd_stmt_seq;

/* ------------------------------------------------------------------------
** Seconds before a progress line (and a statement's line)
*/

/* See dd_ext.h: DD_PROGRESS_AFTER, or $DYNAMODB_PROGRESS_AFTER (read
** once). */
double dd_progress_after(void) {
  static double after = -1;
  if(after < 0) {
    const char *z = getenv("DYNAMODB_PROGRESS_AFTER");
    double d;
    after = z && dd_number(z, &d) == 0 ? d : DD_PROGRESS_AFTER;
  }
  return after;
}

/* ------------------------------------------------------------------------
** The summary of a statement
*/

/* Append an age of s seconds as people say it ("12 s", "4 min", "2 h"). */
static void dd_age_text(sqlite3_str *s, double age) {
  if(age < 60)
    sqlite3_str_appendf(s, "%d s", (int)age);
  else if(age < 3600)
    sqlite3_str_appendf(s, "%d min", (int)(age / 60));
  else
    sqlite3_str_appendf(s, "%d h", (int)(age / 3600));
}

/* See dd_ext.h: by count, most first (ties in the order of ddb_op). */
int dd_meter_ops(const ddb_meter *m, sqlite3_str *s) {
  int done[DDB_OP_COUNT], i, n = 0;
  memset(done, 0, sizeof(done));
  for(;;) {
    int best = -1;
    for(i = 0; i < DDB_OP_COUNT; i++)
      if(!done[i] && m->requests[i] &&
         (best < 0 || m->requests[i] > m->requests[best]))
        best = i;
    if(best < 0)
      return n;
    done[best] = 1;
    sqlite3_str_appendf(s, "%s%s", n++ ? ", " : "", ddb_op_name(best));
    if(m->requests[best] > 1)
      sqlite3_str_appendf(s, " x%llu", (unsigned long long)m->requests[best]);
  }
}

/* The requests of m, all operations. */
static uint64_t dd_meter_total(const ddb_meter *m) {
  uint64_t n = 0;
  int i;
  for(i = 0; i < DDB_OP_COUNT; i++)
    n += m->requests[i];
  return n;
}

/* coherence=streams: the process's stream readers now, appended to s as
** dynamodb_last()'s "streams" member (bJson: ,"streams":[{"table":..,
** "state":"following"|"fallback-ttl","why":..,"lag_s":..}]) or as the
** line's "; stream of t: fallback-ttl (why)" for each reader not
** following.  Nothing when there is no reader. */
#define DD_READERS_SHOWN 8
static void dd_streams_append(sqlite3_str *s, int bJson) {
  ddbc_reader_info a[DD_READERS_SHOWN];
  int i, n = ddbc_readers_info(a, DD_READERS_SHOWN);
  if(n > DD_READERS_SHOWN) /* the first ones shown; stats count them all */
    n = DD_READERS_SHOWN;
  ddb_buf b;
  ddb_buf_init(&b, 4096);
  if(n && bJson)
    sqlite3_str_appendall(s, ",\"streams\":[");
  for(i = 0; i < n; i++) {
    if(!bJson) {
      if(!a[i].following)
        sqlite3_str_appendf(s, "; stream of %s: fallback-ttl (%s)", a[i].table,
                            a[i].why);
      continue;
    }
    ddb_buf_reset(&b);
    ddb_buf_adds(&b, i ? ",{\"table\":" : "{\"table\":");
    ddb_buf_json_str(&b, a[i].table, strlen(a[i].table));
    ddb_buf_adds(&b, a[i].following ? ",\"state\":\"following\",\"why\":"
                                    : ",\"state\":\"fallback-ttl\",\"why\":");
    ddb_buf_json_str(&b, a[i].why, strlen(a[i].why));
    if(!b.failed)
      sqlite3_str_append(s, b.p, (int)b.len);
    if(a[i].following)
      sqlite3_str_appendf(s, ",\"lag_s\":%.3f}", a[i].lag);
    else
      sqlite3_str_appendall(s, ",\"lag_s\":null}");
  }
  if(n && bJson)
    sqlite3_str_appendall(s, "]");
  ddb_buf_free(&b);
}

/* The summary of m (a statement of zSql that ran t seconds) as
** dynamodb_last() returns it: a new string (sqlite3_free), NULL when out
** of memory. */
static char *dd_summary_json(const ddb_meter *m, const char *zSql, double t) {
  sqlite3_str *s = sqlite3_str_new(0);
  int i, n = 0;
  sqlite3_str_appendf(s,
                      "{\"stmt\":%llu,\"sql\":", (unsigned long long)m->stmt);
  if(zSql) {
    ddb_buf b;
    size_t len = strlen(zSql);
    ddb_buf_init(&b, 4 * DD_SQL_MAX + 16);
    ddb_buf_json_str(&b, zSql, len > DD_SQL_MAX ? DD_SQL_MAX : len);
    sqlite3_str_appendall(s, b.p && !b.failed ? b.p : "null");
    ddb_buf_free(&b);
  } else {
    sqlite3_str_appendall(s, "null");
  }
  sqlite3_str_appendall(s, ",\"requests\":{");
  for(i = 0; i < DDB_OP_COUNT; i++)
    if(m->requests[i])
      sqlite3_str_appendf(s, "%s\"%s\":%llu", n++ ? "," : "",
                          ddb_op_name((ddb_op)i),
                          (unsigned long long)m->requests[i]);
  sqlite3_str_appendf(
      s,
      "},\"requests_total\":%llu,\"retries\":%llu,\"throttled\":%llu,"
      "\"items_read\":%llu,\"items_returned\":%llu,\"rcu\":%.10g,"
      "\"wcu\":%.10g,\"cache_hits\":%llu,\"cache_misses\":%llu,"
      "\"cached_age_s\":",
      (unsigned long long)dd_meter_total(m), (unsigned long long)m->retries,
      (unsigned long long)m->throttles, (unsigned long long)m->items_read,
      (unsigned long long)m->items_returned, m->rcu_u / 1e6, m->wcu_u / 1e6,
      (unsigned long long)m->hits, (unsigned long long)m->misses);
  if(m->oldest_ms >= 0)
    sqlite3_str_appendf(s, "%.3f", m->oldest_ms / 1000.0);
  else
    sqlite3_str_appendall(s, "null");
  sqlite3_str_appendf(s, ",\"seconds\":%.3f,\"paced_s\":%.3f,\"split\":%s", t,
                      m->paced_us / 1e6, m->split ? "true" : "false");
  dd_streams_append(s, 1);
  sqlite3_str_appendall(s, "}");
  return sqlite3_str_finish(s);
}

/* The line a statement of m that ran t seconds gets on a terminal, e.g.
** "dynamodb: Query x1051, GetItem x3, 525.5 RCU, 26.3 s", or "dynamodb:
** answered from the cache, 4 min old".  A new string (sqlite3_free), or
** NULL when out of memory. */
static char *dd_summary_line(const ddb_meter *m, double t) {
  sqlite3_str *s = sqlite3_str_new(0);
  uint64_t n = dd_meter_total(m);
  sqlite3_str_appendall(s, DD_PREFIX);
  if(n == 0 && m->hits) {
    sqlite3_str_appendall(s, "answered from the cache, ");
    dd_age_text(s, m->oldest_ms / 1000.0);
    sqlite3_str_appendall(s, " old");
    dd_streams_append(s, 0);
    return sqlite3_str_finish(s);
  }
  dd_meter_ops(m, s);
  if(m->rcu_u)
    sqlite3_str_appendf(s, ", %.1f RCU", m->rcu_u / 1e6);
  if(m->wcu_u)
    sqlite3_str_appendf(s, ", %.1f WCU", m->wcu_u / 1e6);
  sqlite3_str_appendf(s, ", %.1f s", t);
  if(m->paced)
    sqlite3_str_appendf(s, ", %.1f s of it waiting for max_rcu/max_wcu",
                        m->paced_us / 1e6);
  if(m->hits) {
    sqlite3_str_appendf(s, "; %llu answer%s from the cache, up to ",
                        (unsigned long long)m->hits, m->hits == 1 ? "" : "s");
    dd_age_text(s, m->oldest_ms / 1000.0);
    sqlite3_str_appendall(s, " old");
  }
  dd_streams_append(s, 0);
  return sqlite3_str_finish(s);
}

/* Does a statement of m that ran t seconds get its line: over
** dd_progress_after() seconds, over DD_LINE_REQUESTS requests, or an
** answer from the cache DD_LINE_CACHE_AGE old (or dd_progress_after(),
** when that is set lower)? */
static int dd_line_due(const ddb_meter *m, double t) {
  double after = dd_progress_after();
  double old = after < DD_LINE_CACHE_AGE ? after : DD_LINE_CACHE_AGE;
  return t >= after || dd_meter_total(m) > DD_LINE_REQUESTS ||
         (m->hits && m->oldest_ms >= old * 1000);
}

/* ------------------------------------------------------------------------
** Statement boundaries
*/

/* *out = what the meter gained since frame f started (f's cost so far;
** the oldest age is the meter's own, which the frame reset). */
static void dd_frame_cost(dd_conn *c, const dd_frame *f, ddb_meter *out) {
  uint64_t *q = (uint64_t *)out;
  const uint64_t *a = (const uint64_t *)&f->start;
  size_t i;
  ddb_meter_read(&c->meter, out);
  for(i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
    q[i] -= a[i];
  out->stmt = f->id;
  out->oldest_ms = __atomic_load_n(&c->meter.oldest_ms, __ATOMIC_RELAXED);
}

/* Make frame f the one the meter charges: its id for the log, its start
** for max_requests. */
static void dd_frame_charge(dd_conn *c, const dd_frame *f) {
  __atomic_store_n(&c->meter.stmt, f ? f->id : 0, __ATOMIC_RELAXED);
  __atomic_store_n(&c->meter.base, f ? f->start.sent : c->meter.sent,
                   __ATOMIC_RELAXED);
}

/* A statement starts (pStmt: NULL when a cursor started it): a new frame
** on top, the next id's. */
static void dd_stmt_begin(dd_conn *c, sqlite3_stmt *pStmt) {
  dd_frame *f;
  if(c->nFrame == DD_MAX_FRAMES) {
    c->nDeeper++;
    return;
  }
  f = &c->aFrame[c->nFrame++];
  memset(f, 0, sizeof(*f));
  f->pStmt = pStmt;
  f->id = __atomic_add_fetch(&dd_stmt_seq, 1, __ATOMIC_RELAXED);
  f->below_oldest =
      __atomic_exchange_n(&c->meter.oldest_ms, -1, __ATOMIC_RELAXED);
  ddb_meter_read(&c->meter, &f->start);
  f->t0 = ddbc_now();
  dd_frame_charge(c, f);
}

/* The top statement (of zSql) ends: keep its summary if it used the
** extension, print its line when it is due on a terminal (bLine), and let
** the one below go on (its cost includes this one's). */
static void dd_stmt_end(dd_conn *c, const char *zSql, int bLine) {
  dd_frame *f = &c->aFrame[c->nFrame - 1];
  ddb_meter m;
  double t = ddbc_now() - f->t0;
  int64_t cur;
  char *z;
  dd_frame_cost(c, f, &m);
  if(f->bUsed || dd_meter_total(&m) || m.hits || m.misses) {
    z = dd_summary_json(&m, zSql, t);
    if(z) {
      sqlite3_free(c->zLast);
      c->zLast = z;
    }
    if(bLine && !f->bQuiet && dd_line_due(&m, t) && isatty(2)) {
      z = dd_summary_line(&m, t);
      if(z)
        fprintf(stderr, "%s\n", z);
      sqlite3_free(z);
    }
  }
  /* the frame below: its oldest answer is the older of its own and this
  ** one's; it used what this one used */
  cur = __atomic_load_n(&c->meter.oldest_ms, __ATOMIC_RELAXED);
  if(f->below_oldest > cur)
    __atomic_store_n(&c->meter.oldest_ms, f->below_oldest, __ATOMIC_RELAXED);
  c->nFrame--;
  if(c->nFrame > 0) {
    c->aFrame[c->nFrame - 1].bUsed |= f->bUsed;
    c->aFrame[c->nFrame - 1].bQuiet |= f->bQuiet;
  }
  dd_frame_charge(c, c->nFrame > 0 ? &c->aFrame[c->nFrame - 1] : NULL);
}

/* SQLite's trace hook (see above). */
static int dd_trace(unsigned mask, void *pCtx, void *pStmt, void *x) {
  dd_conn *c = pCtx;
  dd_frame *top = c->nFrame > 0 ? &c->aFrame[c->nFrame - 1] : NULL;
  (void)x;
  if(dd_internal_sql > 0)
    return 0; /* the extension's own SQL: the running statement's */
  if(mask == SQLITE_TRACE_STMT) {
    /* a trigger's program of the running statement is the same one */
    if(top && top->pStmt == pStmt)
      return 0;
    /* without the hook before, a cursor started the frame: not a real
    ** statement's, it ends here */
    while(c->nFrame > 0 && !c->aFrame[c->nFrame - 1].pStmt)
      dd_stmt_end(c, NULL, 0);
    dd_stmt_begin(c, pStmt);
  } else if(mask == SQLITE_TRACE_PROFILE) {
    int i;
    if(c->nDeeper > 0) {
      c->nDeeper--;
      return 0;
    }
    /* the statement that ends, and any started above it that never ended
    ** (a statement finalized before it finished ends here too) */
    for(i = c->nFrame - 1; i >= 0 && c->aFrame[i].pStmt != pStmt; i--)
      ;
    if(i < 0)
      return 0;
    while(c->nFrame - 1 > i)
      dd_stmt_end(c, NULL, 0);
    dd_stmt_end(c, sqlite3_sql(pStmt), 1);
  }
  return 0;
}

/* Without the trace hook (no statement frame, or a cursor's), start a
** statement at the first cursor (or write) of the connection's tables,
** ending the one a cursor started before. */
static void dd_stmt_implicit(dd_conn *c) {
  if(c->nOpen > 0 || (c->nFrame > 0 && c->aFrame[c->nFrame - 1].pStmt))
    return;
  if(c->nFrame > 0)
    dd_stmt_end(c, NULL, 0);
  dd_stmt_begin(c, NULL);
}

/* See dd_ext.h. */
void dd_stmt_cursor(dd_vtab *p, int delta) {
  dd_conn *c = p->pConn;
  if(!c)
    return;
  if(delta > 0) {
    dd_stmt_implicit(c);
    dd_stmt_touch(c, p->bProgress);
  }
  c->nOpen += delta;
}

/* See dd_ext.h. */
void dd_stmt_write(dd_vtab *p) {
  if(!p->pConn)
    return;
  dd_stmt_implicit(p->pConn);
  dd_stmt_touch(p->pConn, p->bProgress);
}

/* See dd_ext.h. */
void dd_stmt_touch(dd_conn *c, int bProgress) {
  dd_frame *f;
  if(!c || c->nFrame == 0)
    return;
  f = &c->aFrame[c->nFrame - 1];
  f->bUsed = 1;
  if(!bProgress)
    f->bQuiet = 1;
}

/* See dd_ext.h. */
sqlite3_stmt *dd_stmt_running(dd_conn *c) {
  return c && c->nFrame > 0 ? c->aFrame[c->nFrame - 1].pStmt : NULL;
}

/* See dd_ext.h. */
void dd_stmt_split(dd_vtab *p) {
  if(p->pConn)
    ddb_meter_add(&p->pConn->meter.split, 1);
}

/* See dd_ext.h. */
ddb_meter *dd_conn_meter(dd_conn *c) {
  return c ? &c->meter : NULL;
}

/* See dd_ext.h. */
int dd_conn_waiting(dd_conn *c) {
  return c && __atomic_load_n(&c->meter.waiting, __ATOMIC_RELAXED) > 0;
}

/* See dd_ext.h. */
double dd_conn_paced(dd_conn *c) {
  const dd_frame *f;
  if(!c || c->nFrame == 0)
    return 0;
  f = &c->aFrame[c->nFrame - 1];
  return (__atomic_load_n(&c->meter.paced_us, __ATOMIC_RELAXED) -
          f->start.paced_us) /
         1e6;
}

/* See dd_ext.h. */
int dd_conn_ops(dd_conn *c, sqlite3_str *s) {
  ddb_meter m;
  if(!c || c->nFrame == 0)
    return 0;
  dd_frame_cost(c, &c->aFrame[c->nFrame - 1], &m);
  return dd_meter_ops(&m, s);
}

/* ------------------------------------------------------------------------
** dynamodb_last()
*/

/* dynamodb_last(): the summary of the last statement of this connection
** that used the extension, as JSON (see dd_summary_json), or NULL before
** any.  Without the trace hook, the statement running or last run. */
static void dd_last_func(sqlite3_context *ctx, int argc,
                         sqlite3_value **argv) {
  dd_conn *c = sqlite3_user_data(ctx);
  (void)argc;
  (void)argv;
  if(c->nFrame > 0 && !c->aFrame[c->nFrame - 1].pStmt) {
    /* no trace hook: the statement a cursor started, so far */
    const dd_frame *f = &c->aFrame[c->nFrame - 1];
    ddb_meter m;
    char *z;
    dd_frame_cost(c, f, &m);
    z = dd_summary_json(&m, NULL, ddbc_now() - f->t0);
    if(!z) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    sqlite3_result_text(ctx, z, -1, sqlite3_free);
    return;
  }
  if(c->zLast)
    sqlite3_result_text(ctx, c->zLast, -1, SQLITE_TRANSIENT);
}

/* ------------------------------------------------------------------------
** The connection
*/

/* See dd_ext.h. */
dd_conn *dd_conn_new(sqlite3 *db) {
  dd_conn *c = sqlite3_malloc(sizeof(*c));
  if(!c)
    return NULL;
  memset(c, 0, sizeof(*c));
  c->db = db;
  ddb_meter_reset(&c->meter, 0);
  return c;
}

/* See dd_ext.h. */
void dd_conn_free(void *pConn) {
  dd_conn *c = pConn;
  if(!c)
    return;
  sqlite3_free(c->zLast);
  sqlite3_free(c->pTxnReg); /* NULL: txn.c freed it at the last end */
  sqlite3_free(c);
}

/* See dd_ext.h. */
dd_txn_reg **dd_conn_txn_reg(dd_conn *c) {
  return c ? &c->pTxnReg : NULL;
}

/* See dd_ext.h. */
int dd_register_stmt(sqlite3 *db, dd_conn *c) {
  /* the statements of this connection, from now on (see above) */
  int rc = sqlite3_trace_v2(db, SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE,
                            dd_trace, c);
  /* DIRECTONLY: it shows the SQL of the user's last statement, which a
  ** view of someone else's database file has no business copying */
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_last", 0,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, c,
                                 dd_last_func, 0, 0);
  return rc;
}

/* ------------------------------------------------------------------------
** Telling the user, on a terminal: the progress line of a write cut into
** calls that are not atomic together, and the hint that single-row
** statements in a row would go faster in one transaction.  (The progress
** line of a read is cursor.c's.)
*/
/* See dd_ext.h. */
void dd_write_progress(dd_vtab *p, const char *zVerb, int nDone, int nCalls,
                       double tStart, int *pbShown, int bEnd) {
  double t;
  if(!p->bProgress)
    return;
  if(bEnd) {
    if(*pbShown)
      fputs("\r\033[K", stderr);
    *pbShown = 0;
    return;
  }
  t = ddbc_now() - tStart;
  if(t < dd_progress_after() || !isatty(2))
    return;
  fprintf(stderr,
          "\r\033[K%s: %s cut into %d calls, not atomic: %d sent, %.1f s",
          p->zVtabName ? p->zVtabName : "dynamodb", zVerb, nCalls, nDone, t);
  fflush(stderr);
  *pbShown = 1;
}

/* Has the hint of dd_hint_singles been given in this process? */
static int dd_hinted;

/* See dd_ext.h. */
void dd_hint_singles(dd_vtab *p) {
  if(!p->bProgress || !isatty(2) ||
     __atomic_exchange_n(&dd_hinted, 1, __ATOMIC_ACQ_REL))
    return;
  fprintf(stderr,
          "dynamodb: hint: %d statements in a row each wrote one row of %s, "
          "in a call of its own; BEGIN ... COMMIT around them sends up to "
          "100 writes a call, %d calls at a time\n",
          DD_HINT_SINGLES, p->zVtabName ? p->zVtabName : "the table",
          p->nWriteCalls);
  fflush(stderr);
}
