/*
** api_principals.c -- the C API's side of tests/suites/27-cache-trust.sh:
** libdyndb clients with different profiles (credentials from the files
** AWS_SHARED_CREDENTIALS_FILE names), a region and a spelling of the
** endpoint, reading item (PK x, SK 1) of table Twin, which each access key
** has with its own "v" on a DynamoDB Local without -sharedDb (set up by
** tests/trust/cache_principals.py).  Prints one line a read:
**
**    NAME: <v>        the item's v
**    NAME: request    the read sent a GetItem (no cache hit)
**    NAME: hit        the read was a cache hit (no GetItem)
**
**    api_principals ENDPOINT
*/
#include <stdio.h>
#include <string.h>

#include "dyndb.h"

/* A client of profile (region, endpoint), or NULL after printing why. */
static dyn_client *client(const char *profile, const char *region,
                          const char *endpoint) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_error err;
  dyn_options_init(&o);
  o.profile = profile;
  o.region = region;
  o.endpoint = endpoint;
  if(dyn_client_new(&o, &c, &err) != DYN_OK)
    printf("client %s: %s\n", profile, err.message);
  return c;
}

/* GetItems sent so far by this process. */
static unsigned long long gets(void) {
  dyn_stats st;
  dyn_stats_get(&st);
  return (unsigned long long)st.op_requests[DYN_OP_GET_ITEM];
}

/* Read (x, 1) through c and print "name: " and what show asks for: 'v'
** the item's v, 'r' whether a GetItem was sent. */
static void read_x(dyn_client *c, const char *name, char show) {
  dyn_item *key = NULL, *got = NULL;
  dyn_error err;
  unsigned long long before = gets();
  const char *v;
  if(dyn_item_from_json("{\"PK\":\"x\",\"SK\":\"1\"}", 0, &key, &err) ||
     dyn_get_item(c, "Twin", key, 0, &got, &err)) {
    printf("%s: error: %s\n", name, err.message);
    dyn_item_unref(key);
    return;
  }
  v = got ? dyn_value_text(dyn_item_get(got, "v"), NULL) : NULL;
  if(show == 'v')
    printf("%s: %s\n", name, v ? v : "(no item)");
  else
    printf("%s: %s\n", name, gets() > before ? "request" : "hit");
  dyn_item_unref(got);
  dyn_item_unref(key);
}

int main(int argc, char **argv) {
  char alias[256];
  const char *port;
  dyn_client *a, *b, *wrong, *west, *local;
  if(argc != 2 || !(port = strrchr(argv[1], ':')))
    return 2;
  snprintf(alias, sizeof(alias), "http://localhost%s/", port);
  a = client("A", "us-east-1", argv[1]);
  b = client("B", "us-east-1", argv[1]);
  wrong = client("Awrong", "us-east-1", argv[1]);
  west = client("A", "us-west-2", argv[1]);
  local = client("A", "us-east-1", alias);
  if(!a || !b || !wrong || !west || !local)
    return 1;
  read_x(a, "A", 'v');
  read_x(b, "B", 'v');
  read_x(a, "A", 'v');
  read_x(b, "B", 'v');
  read_x(wrong, "Awrong", 'r');
  read_x(west, "west", 'v');
  read_x(local, "localhost", 'r');
  dyn_client_free(a);
  dyn_client_free(b);
  dyn_client_free(wrong);
  dyn_client_free(west);
  dyn_client_free(local);
  return 0;
}
