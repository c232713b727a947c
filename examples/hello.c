/*
** hello.c -- the five lines of docs/c-api.md: one cached
** GetItem, the item printed as JSON.
**
**    cc hello.c $(pkg-config --cflags --libs dyndb) -o hello
**    ./hello [TABLE]        (default Store, the table of examples/lesson/)
*/
#include <dyndb.h>
#include <stdio.h>

int main(int argc, char **argv) {
  const char *table = argc > 1 ? argv[1] : "Store";
  dyn_client *c = NULL;
  char *json = NULL;
  dyn_error err;
  dyn_code result;

  result = dyn_client_new(NULL, &c, &err);
  if(result)
    goto fail;
  result =
      dyn_get_json(c, table, "{\"PK\":\"CUSTOMER#alice\",\"SK\":\"PROFILE\"}",
                   0, &json, &err);
  if(result)
    goto fail;
  puts(json ? json : "(no item)");

fail:
  if(result)
    fprintf(stderr, "hello: %s: %s\n", dyn_code_name(result), err.message);
  dyn_free(json);
  dyn_client_free(c);
  return result ? 1 : 0;
}
