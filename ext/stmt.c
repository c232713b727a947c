/*
** stmt.c -- what each SQL statement cost: the connection's meter, the
** statement boundaries that reset and read it, dynamodb_last(), and the
** line an interactive shell prints after a costly statement.
**
**    SELECT count(*) FROM shop WHERE SK LIKE 'ORDER#%';
**    SELECT dynamodb_last();
**      -- {"stmt":7,"sql":"SELECT count(*) FROM shop ...",
**      --  "requests":{"Scan":8},"requests_total":8,...}
**
** Every connection that loads the extension gets one dd_conn (the client
** data of the module, freed with it).  The clients of its tables charge
** its meter (ddb_meter, client/meter.c) with every request, and the cache
** with every answer it gives from memory, from whatever thread.  A
** statement is told from the next by SQLite's trace hook: SQLITE_TRACE_STMT
** when it starts running (the meter is reset), SQLITE_TRACE_PROFILE when it
** ends (its summary is kept for dynamodb_last(), and on a terminal a costly
** one gets its line).  A statement that starts while another runs (SQL run
** by a function or by xCreate, a trigger's program, a second cursor
** stepped in between) is counted with the outer one.
**
** The trace hook is one per connection: a program that sets its own (the
** shell's .trace, Python's set_trace_callback) replaces this one.  Then a
** statement is what runs between a first open cursor of the connection's
** tables and the next (each write, between xBegin and the next): the
** meter (and so max_requests) still counts each apart, dynamodb_last()
** shows the one running or last run, and no line is printed.
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

struct dd_conn {
  sqlite3 *db;
  ddb_meter meter;      /* the running statement's (or the last one's) */
  int depth;            /* statements running, by the trace hook */
  sqlite3_stmt *pOuter; /* the outermost of them */
  int bImplicit;        /* the running statement was started by a cursor
                           (no trace hook): see above */
  int nOpen;            /* open cursors of the connection's tables */
  double t0;            /* when it started (ddbc_now) */
  int bUsed;            /* a table of the extension was used */
  int bQuiet;           /* one of them has progress=off */
  char *zLast;          /* the last statement's summary (JSON), or NULL;
                           sqlite3_free() */
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
  sqlite3_str_appendf(s, ",\"seconds\":%.3f,\"paced_s\":%.3f,\"split\":%s}", t,
                      m->paced_us / 1e6, m->split ? "true" : "false");
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

/* A statement starts: the meter is the next id's. */
static void dd_stmt_begin(dd_conn *c) {
  ddb_meter_reset(&c->meter,
                  __atomic_add_fetch(&dd_stmt_seq, 1, __ATOMIC_RELAXED));
  c->t0 = ddbc_now();
  c->bUsed = c->bQuiet = 0;
}

/* Keep the summary of the statement of zSql that ends (if it used the
** extension), and print its line when it is due on a terminal (bLine). */
static void dd_stmt_end(dd_conn *c, const char *zSql, int bLine) {
  ddb_meter m;
  double t = ddbc_now() - c->t0;
  char *z;
  ddb_meter_read(&c->meter, &m);
  if(!c->bUsed && !dd_meter_total(&m) && !m.hits && !m.misses)
    return; /* nothing of the extension's: the last summary stays */
  z = dd_summary_json(&m, zSql, t);
  if(z) {
    sqlite3_free(c->zLast);
    c->zLast = z;
  }
  if(bLine && !c->bQuiet && dd_line_due(&m, t) && isatty(2)) {
    z = dd_summary_line(&m, t);
    if(z)
      fprintf(stderr, "%s\n", z);
    sqlite3_free(z);
  }
}

/* SQLite's trace hook (see above): x is the statement's SQL for
** SQLITE_TRACE_STMT ("-- name" for a trigger's program). */
static int dd_trace(unsigned mask, void *pCtx, void *pStmt, void *x) {
  dd_conn *c = pCtx;
  (void)x;
  if(mask == SQLITE_TRACE_STMT) {
    if(c->depth > 0 && pStmt == c->pOuter)
      return 0; /* a trigger's program of the running statement */
    if(c->depth++ == 0) {
      c->pOuter = pStmt;
      c->bImplicit = 0;
      dd_stmt_begin(c);
    }
  } else if(mask == SQLITE_TRACE_PROFILE && c->depth > 0) {
    if(pStmt != c->pOuter) {
      c->depth--;
      return 0;
    }
    dd_stmt_end(c, sqlite3_sql(pStmt), 1);
    c->depth = 0;
    c->pOuter = NULL;
  }
  return 0;
}

/* Without the trace hook, start a statement at the first cursor (or
** write) of the connection's tables, ending the one before. */
static void dd_stmt_implicit(dd_conn *c) {
  if(c->depth > 0 || c->nOpen > 0)
    return;
  if(c->bImplicit)
    dd_stmt_end(c, NULL, 0);
  c->bImplicit = 1;
  dd_stmt_begin(c);
}

/* See dd_ext.h. */
void dd_stmt_cursor(dd_vtab *p, int delta) {
  dd_conn *c = p->pConn;
  if(!c)
    return;
  if(delta > 0)
    dd_stmt_implicit(c);
  c->nOpen += delta;
}

/* See dd_ext.h. */
void dd_stmt_write(dd_vtab *p) {
  if(p->pConn)
    dd_stmt_implicit(p->pConn);
}

/* See dd_ext.h. */
void dd_stmt_touch(dd_conn *c, int bProgress) {
  if(!c)
    return;
  c->bUsed = 1;
  if(!bProgress)
    c->bQuiet = 1;
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
  if(c->bImplicit && c->depth == 0) {
    ddb_meter m;
    char *z;
    ddb_meter_read(&c->meter, &m);
    z = dd_summary_json(&m, NULL, ddbc_now() - c->t0);
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
  c->t0 = ddbc_now();
  return c;
}

/* See dd_ext.h. */
void dd_conn_free(void *pConn) {
  dd_conn *c = pConn;
  if(!c)
    return;
  sqlite3_free(c->zLast);
  sqlite3_free(c);
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
