/*
** creds_fixtures.h -- what the unit tests of credentials and settings
** share (test_creds.c, test_config.c, test_creds_client.c): the
** environment saved and cleared around scratch config and credentials
** files (a sandbox), and a small HTTP server on a thread of this process
** (127.0.0.1, a free port) playing the container and instance-metadata
** endpoints (and DynamoDB, for a table that is not there), with the
** credentials it hands out (ROLE_JSON).
*/
#ifndef CREDS_FIXTURES_H
#define CREDS_FIXTURES_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../client/ddb_client_int.h"
#include "env_fixtures.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Environment and files
*/
typedef struct sandbox {
  char *saved[N_ENV];
  char dir[64];
  char config[128], creds[128], script[128], tokfile[128];
} sandbox;

/* Write text to path.  Returns 0 or -1. */
static inline int put_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if(!f)
    return -1;
  fputs(text, f);
  return fclose(f);
}

/* Save and clear the environment, make a scratch directory with the
** config and credentials files pointed at, IMDS off. */
static inline int sandbox_open(sandbox *s) {
  env_save(s->saved);
  snprintf(s->dir, sizeof(s->dir), "/tmp/ddb-creds-XXXXXX");
  if(!mkdtemp(s->dir))
    return -1;
  snprintf(s->config, sizeof(s->config), "%s/config", s->dir);
  snprintf(s->creds, sizeof(s->creds), "%s/credentials", s->dir);
  snprintf(s->script, sizeof(s->script), "%s/process.sh", s->dir);
  snprintf(s->tokfile, sizeof(s->tokfile), "%s/token", s->dir);
  setenv("AWS_CONFIG_FILE", s->config, 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", s->creds, 1);
  setenv("HOME", s->dir, 1);
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  put_file(s->config, "");
  put_file(s->creds, "");
  return 0;
}

/* Remove the scratch files and restore the saved environment. */
static inline void sandbox_close(sandbox *s) {
  unlink(s->config);
  unlink(s->creds);
  unlink(s->script);
  unlink(s->tokfile);
  rmdir(s->dir);
  env_restore(s->saved);
}

/* Write an executable shell script (for credential_process). */
static inline int put_script(const char *path, const char *text) {
  if(put_file(path, text))
    return -1;
  return chmod(path, 0700);
}

/* ------------------------------------------------------------------------
** A small HTTP server for the metadata endpoints
*/
typedef struct fake_http {
  int fd, port, stop, requests;
  pthread_t tid;
  pthread_mutex_t lock;
  const char *role_json;  /* the credentials it hands out */
  int imds_code;          /* status of the token PUT (200 normally) */
  char last_auth[256];    /* Authorization of the last container GET */
  int saw_token_ttl;      /* the token PUT had its TTL header */
  int saw_token_on_creds; /* the credentials GET had the token */
  int not_found;          /* POST /: DynamoDB's ResourceNotFoundException */
} fake_http;

/* The value of header name in head, copied into out (cap bytes); "" when
** absent. */
static inline void header_value(const char *head, const char *name, char *out,
                                size_t cap) {
  size_t n = strlen(name);
  const char *p = head;
  out[0] = 0;
  while((p = strstr(p, "\r\n")) != NULL) {
    p += 2;
    if(strncasecmp(p, name, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1, *e;
      size_t k;
      while(*v == ' ')
        v++;
      e = strstr(v, "\r\n");
      k = e ? (size_t)(e - v) : strlen(v);
      if(k >= cap)
        k = cap - 1;
      memcpy(out, v, k);
      out[k] = 0;
      return;
    }
  }
}

/* Answer one request on connection c. */
static inline void fake_serve(fake_http *f, int c) {
  char head[8192], hv[256], resp[8192];
  const char *body = "", *status = "404 Not Found";
  size_t got = 0;
  while(got + 1 < sizeof(head)) {
    ssize_t n = recv(c, head + got, sizeof(head) - 1 - got, 0);
    if(n <= 0)
      break;
    got += (size_t)n;
    head[got] = 0;
    if(strstr(head, "\r\n\r\n"))
      break;
  }
  head[got] = 0;
  pthread_mutex_lock(&f->lock);
  f->requests++;
  if(strncmp(head, "PUT /latest/api/token ", 22) == 0) {
    header_value(head, "X-aws-ec2-metadata-token-ttl-seconds", hv, sizeof(hv));
    f->saw_token_ttl = strcmp(hv, "21600") == 0;
    status = f->imds_code == 200 ? "200 OK" : "403 Forbidden";
    body = f->imds_code == 200 ? "IMDSTOKEN42" : "";
  } else if(strncmp(head, "GET /latest/meta-data/iam/security-credentials/ ",
                    48) == 0) {
    header_value(head, "X-aws-ec2-metadata-token", hv, sizeof(hv));
    if(strcmp(hv, "IMDSTOKEN42") == 0) {
      status = "200 OK";
      body = "role-a\n";
    } else
      status = "401 Unauthorized";
  } else if(strncmp(head,
                    "GET /latest/meta-data/iam/security-credentials/role-a ",
                    54) == 0) {
    header_value(head, "X-aws-ec2-metadata-token", hv, sizeof(hv));
    f->saw_token_on_creds = strcmp(hv, "IMDSTOKEN42") == 0;
    status = f->saw_token_on_creds ? "200 OK" : "401 Unauthorized";
    body = f->saw_token_on_creds ? f->role_json : "";
  } else if(strncmp(head, "POST / ", 7) == 0 && f->not_found) {
    /* DynamoDB, for a table that is not there */
    status = "400 Bad Request";
    body = "{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
           "ResourceNotFoundException\",\"message\":\"Requested resource "
           "not found\"}";
  } else if(strncmp(head, "GET /container ", 15) == 0) {
    header_value(head, "Authorization", f->last_auth, sizeof(f->last_auth));
    status = "200 OK";
    body = f->role_json;
  }
  pthread_mutex_unlock(&f->lock);
  snprintf(resp, sizeof(resp),
           "HTTP/1.1 %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n"
           "%s",
           status, strlen(body), body);
  if(send(c, resp, strlen(resp), MSG_NOSIGNAL) < 0)
    tap_diag("fake http: send failed");
  close(c);
  /* what it received (a session token, say) and sent (credentials) is not
  ** left on its stack for the heap scans of test_wipe to find */
  ddb_wipe(head, sizeof(head));
  ddb_wipe(resp, sizeof(resp));
}

/* The server thread: accept until stop is set. */
static inline void *fake_main(void *arg) {
  fake_http *f = arg;
  for(;;) {
    struct pollfd p;
    int stop;
    pthread_mutex_lock(&f->lock);
    stop = f->stop;
    pthread_mutex_unlock(&f->lock);
    if(stop)
      break;
    p.fd = f->fd;
    p.events = POLLIN;
    if(poll(&p, 1, 50) > 0) {
      int c = accept(f->fd, NULL, NULL);
      if(c >= 0)
        fake_serve(f, c);
    }
  }
  return NULL;
}

/* Start the fake metadata server on a free port.  Returns 0 or -1. */
static inline int fake_start(fake_http *f, const char *role_json) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  memset(f, 0, sizeof(*f));
  pthread_mutex_init(&f->lock, NULL);
  f->role_json = role_json;
  f->imds_code = 200;
  f->fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if(f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof(a)) ||
     listen(f->fd, 8) || getsockname(f->fd, (struct sockaddr *)&a, &len) ||
     pthread_create(&f->tid, NULL, fake_main, f))
    return -1;
  f->port = ntohs(a.sin_port);
  return 0;
}

/* Stop the fake server's thread and close its socket. */
static inline void fake_stop(fake_http *f) {
  pthread_mutex_lock(&f->lock);
  f->stop = 1;
  pthread_mutex_unlock(&f->lock);
  pthread_join(f->tid, NULL);
  close(f->fd);
  pthread_mutex_destroy(&f->lock);
}

#define ROLE_JSON                                                             \
  "{\"Code\":\"Success\",\"Type\":\"AWS-HMAC\",\"AccessKeyId\":"              \
  "\"ASIAROLE\",\"SecretAccessKey\":\"rolesecret\",\"Token\":\"roletoken\","  \
  "\"Expiration\":\"2030-01-02T03:04:05Z\"}"

#endif
