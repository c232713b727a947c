/*
** creds_process.c -- credentials from a profile's credential_process: run
** with /bin/sh -c (stdin from /dev/null) in a process group of its own,
** within PROCESS_TIMEOUT_MS, its stdout read as the JSON of the SDKs'
** process protocol (Version 1), the first line of its stderr kept for the
** message when it fails.  While it runs, the caller's stop hook is polled
** every POLL_MS: when it says stop (sqlite3_interrupt, Ctrl-C), or at the
** timeout, the whole group is killed and reaped.  Secrets read are wiped;
** the command line never goes into a message.
*/
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ddb_client_int.h"
#include "sigv4.h"

extern char **environ;

/* How long a credential_process may run; how often the stop hook is
** polled while it does. */
#define PROCESS_TIMEOUT_MS 30000
#define POLL_MS            DDB_CANCEL_POLL_MS

/* Milliseconds on the monotonic clock. */
static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read what is available on fd into b (at most its cap; the rest is read
** and dropped).  Returns 1 at end of file or on error, else 0. */
static int drain(int fd, ddb_buf *b) {
  char chunk[4096];
  ssize_t got = read(fd, chunk, sizeof(chunk));
  if(got < 0)
    return errno == EINTR || errno == EAGAIN ? 0 : 1;
  if(got == 0)
    return 1;
  if(!b->failed)
    ddb_buf_add(b, chunk, (size_t)got);
  ddb_wipe(chunk, (size_t)got);
  return 0;
}

/* A credential_process that runs, and what stops it. */
typedef struct child {
  pid_t pid;          /* the child, and its process group */
  const char *what;   /* names it in messages */
  ddb_cancel_fn stop; /* polled; may be NULL */
  void *stop_ud;
  int64_t deadline; /* on mono_ms()'s clock */
} child;

/* Start command with /bin/sh -c in a process group of its own, stdin from
** /dev/null, stdout to outw and stderr to errw.  Returns DDB_OK with
** c->pid set, or an error naming c->what, nothing started (c->pid -1). */
static ddb_result spawn_sh(child *c, const char *command, int outw, int errw,
                           ddb_error *err) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int fa_ok = 0, attr_ok = 0, rc;
  char *argv[4];
  ddb_result result = DDB_OK;

  c->pid = -1;
  if(posix_spawn_file_actions_init(&fa)) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  fa_ok = 1;
  if(posix_spawnattr_init(&attr)) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  attr_ok = 1;
  /* a group of its own: the kill reaches what the shell started too */
  if(posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP) ||
     posix_spawnattr_setpgroup(&attr, 0) ||
     posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
     posix_spawn_file_actions_adddup2(&fa, outw, 1) ||
     posix_spawn_file_actions_adddup2(&fa, errw, 2)) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  argv[0] = (char *)"sh";
  argv[1] = (char *)"-c";
  argv[2] = (char *)command;
  argv[3] = NULL;
  rc = posix_spawn(&c->pid, "/bin/sh", &fa, &attr, argv, environ);
  if(rc) {
    c->pid = -1;
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: cannot start: %s",
                           c->what, strerror(rc));
  }
fail:
  if(fa_ok)
    posix_spawn_file_actions_destroy(&fa);
  if(attr_ok)
    posix_spawnattr_destroy(&attr);
  return result;
}

/* Has c to stop: its stop hook says so, or its deadline is past?  Then its
** group is killed and the error returned (DDB_ERR_CANCELLED for the
** hook); else DDB_OK. */
static ddb_result stop_due(const child *c, ddb_error *err) {
  if(c->stop && c->stop(c->stop_ud)) {
    kill(-c->pid, SIGKILL);
    return ddb_error_set(err, DDB_ERR_CANCELLED, "interrupted: %s stopped",
                         c->what);
  }
  if(mono_ms() >= c->deadline) {
    kill(-c->pid, SIGKILL);
    return ddb_error_set(err, DDB_ERR_CONFIG, "%s: did not finish within %d s",
                         c->what, PROCESS_TIMEOUT_MS / 1000);
  }
  return DDB_OK;
}

/* Read c's stdout (fds[0]) into out and its stderr (fds[1]) into errb
** until both end, waking every POLL_MS for stop_due; each fd is closed
** and set -1 at its end.  Returns DDB_OK, or an error naming c->what (its
** group killed; the fds still open are the caller's to close). */
static ddb_result collect(const child *c, int fds[2], ddb_buf *out,
                          ddb_buf *errb, ddb_error *err) {
  ddb_result result = DDB_OK;
  while(fds[0] >= 0 || fds[1] >= 0) {
    struct pollfd pf[2];
    int np = 0, i, rc;
    int64_t left;
    result = stop_due(c, err);
    if(result)
      break;
    left = c->deadline - mono_ms();
    if(left > POLL_MS)
      left = POLL_MS;
    if(left < 0)
      left = 0;
    for(i = 0; i < 2; i++)
      if(fds[i] >= 0) {
        pf[np].fd = fds[i];
        pf[np++].events = POLLIN;
      }
    rc = poll(pf, (nfds_t)np, (int)left);
    if(rc < 0 && errno != EINTR) {
      kill(-c->pid, SIGKILL);
      result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: poll: %s", c->what,
                             strerror(errno));
      break;
    }
    for(i = 0; rc > 0 && i < np; i++) {
      int *fd;
      if(!pf[i].revents)
        continue;
      fd = pf[i].fd == fds[0] ? &fds[0] : &fds[1];
      if(drain(*fd, fd == &fds[0] ? out : errb)) {
        close(*fd);
        *fd = -1;
      }
    }
  }
  return result;
}

/* Reap c, which result (DDB_OK or an error already set) says how it went
** so far; one that closed its output and goes on is still stopped by the
** hook and the timeout.  *status is its wait status (left as it was when
** unknown: SIGCHLD ignored).  Returns result, or the stop_due error. */
static ddb_result reap(const child *c, ddb_result result, int *status,
                       ddb_error *err) {
  for(;;) {
    int st;
    struct timespec ts = {0, 2 * 1000000};
    pid_t w = waitpid(c->pid, &st, WNOHANG);
    if(w == c->pid) {
      *status = st;
      break;
    }
    if(w < 0 && errno == EINTR)
      continue;
    if(w < 0)
      break; /* ECHILD: SIGCHLD is ignored; the status is unknown */
    if(!result)
      result = stop_due(c, err);
    nanosleep(&ts, NULL);
  }
  return result;
}

/* Run command with /bin/sh -c, stdin from /dev/null, in a process group
** of its own, and collect its stdout into out and stderr into errb, within
** PROCESS_TIMEOUT_MS, polling stop(stop_ud) (stop may be NULL).  *status
** is its wait status (-1 when unknown).  Returns DDB_OK, or an error naming
** what (DDB_ERR_CANCELLED when stop said so); the group is killed and the
** child reaped on every path. */
static ddb_result run_process(const char *command, const char *what,
                              ddb_cancel_fn stop, void *stop_ud, ddb_buf *out,
                              ddb_buf *errb, int *status, ddb_error *err) {
  int outp[2] = {-1, -1}, errp[2] = {-1, -1}, rd[2];
  child c;
  ddb_result result = DDB_OK;

  c.pid = -1;
  c.what = what;
  c.stop = stop;
  c.stop_ud = stop_ud;
  c.deadline = mono_ms() + PROCESS_TIMEOUT_MS;
  *status = -1;
  if(pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) {
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: cannot create a pipe: %s",
                           what, strerror(errno));
    goto fail;
  }
  result = spawn_sh(&c, command, outp[1], errp[1], err);
  if(result)
    goto fail;
  close(outp[1]);
  close(errp[1]);
  outp[1] = errp[1] = -1;
  rd[0] = outp[0];
  rd[1] = errp[0];
  result = collect(&c, rd, out, errb, err);
  outp[0] = rd[0];
  errp[0] = rd[1];
  result = reap(&c, result, status, err);

fail:
  if(outp[0] >= 0)
    close(outp[0]);
  if(outp[1] >= 0)
    close(outp[1]);
  if(errp[0] >= 0)
    close(errp[0]);
  if(errp[1] >= 0)
    close(errp[1]);
  return result;
}

/* See ddb_client_int.h: fetch credentials by running src->command. */
ddb_result ddb_creds_process_fetch(const ddb_cred_source *src,
                                   ddb_cancel_fn stop, void *stop_ud,
                                   ddb_creds *out, ddb_error *err) {
  ddb_buf o, e;
  int status = -1;
  ddb_result result;
  ddb_buf_init(&o, DDB_CREDS_OUT_MAX);
  ddb_buf_init(&e, DDB_CREDS_ERR_MAX);
  /* the output's room at once: a realloc would leave a copy unwiped */
  if(ddb_buf_reserve(&o, DDB_CREDS_OUT_MAX)) {
    ddb_buf_free(&o);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  result = run_process(src->command, src->what, stop, stop_ud, &o, &e, &status,
                       err);
  if(result)
    goto fail;
  if(status != -1 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    /* its first line of stderr says why (a process that prints secrets
    ** to stderr on failure is not expected) */
    size_t n = 0;
    while(n < e.len && n < 200 && e.p[n] != '\n' && e.p[n] != '\r')
      n++;
    if(WIFEXITED(status))
      result = ddb_error_set(
          err, DDB_ERR_CONFIG, "%s failed (exit status %d)%s%.*s", src->what,
          WEXITSTATUS(status), n ? ": " : "", (int)n, n ? e.p : "");
    else
      result = ddb_error_set(err, DDB_ERR_CONFIG, "%s killed by signal %d",
                             src->what, WTERMSIG(status));
    goto fail;
  }
  if(o.failed) {
    result =
        ddb_error_set(err, DDB_ERR_CONFIG, "%s: output larger than %d bytes",
                      src->what, DDB_CREDS_OUT_MAX);
    goto fail;
  }
  result = ddb_creds_from_json(o.p ? o.p : "", o.len, 1, src->what, out, err);

fail:
  if(o.p)
    ddb_wipe(o.p, o.len);
  ddb_buf_free(&o);
  ddb_buf_free(&e);
  return result;
}
