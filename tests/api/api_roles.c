/*
** api_roles.c -- libdyndb resolves assume-role, web identity and IAM
** Identity Center profiles as the extension does (driven by
** tests/faults/role_refresh.py, which serves STS and SSO on loopback and
** counts their calls): for each profile named, two clients, each reading
** one item.  Prints one line a client: "PROFILE: SOURCE: FOUND" or
** "PROFILE: error: MESSAGE".
**
**    api_roles ENDPOINT TABLE PROFILE...
*/
#include <stdio.h>
#include <string.h>

#include "api/dyndb.h"

int main(int argc, char **argv) {
  const char *key = "{\"PK\":\"CUSTOMER#alice\",\"SK\":\"PROFILE\"}";
  dyn_options o;
  dyn_client *c;
  dyn_error e;
  char *json;
  int i, k, bad = 0;
  if(argc < 4) {
    fprintf(stderr, "usage: api_roles ENDPOINT TABLE PROFILE...\n");
    return 2;
  }
  for(i = 3; i < argc; i++)
    for(k = 0; k < 2; k++) {
      dyn_options_init(&o);
      o.endpoint = argv[1];
      o.profile = argv[i];
      c = NULL;
      json = NULL;
      if(dyn_client_new(&o, &c, &e) != DYN_OK ||
         dyn_get_json(c, argv[2], key, 0, &json, &e) != DYN_OK) {
        printf("%s: error: %s\n", argv[i], e.message);
        bad = 1;
      } else
        printf("%s: %s: %s\n", argv[i], dyn_client_credential_source(c),
               json && strstr(json, "alice") ? "found" : "missing");
      dyn_free(json);
      dyn_client_free(c);
    }
  return bad;
}
