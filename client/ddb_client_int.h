/*
** ddb_client_int.h -- declarations shared by the files of client/ only.
** Not part of the layer's interface: nothing outside client/ includes it.
*/
#ifndef DDB_CLIENT_INT_H
#define DDB_CLIENT_INT_H

#include <cjson/cJSON.h>

#include "ddb_client.h"

/* Decode a DynamoDB item object ({"attr": {"S": "..."}, ...}).  On success
** *out is a new item with one reference. */
ddb_result ddb_item_decode(const cJSON *obj, ddb_item **out, ddb_error *err);

/* Resolved settings of a client (config.c). */
typedef struct ddb_settings {
  char *region;
  char *endpoint; /* without a trailing slash */
  char *access_key;
  char *secret_key;
  char *session_token; /* NULL if none */
  char *cred_source;   /* where the credentials came from, for messages */
} ddb_settings;

ddb_result ddb_settings_resolve(const ddb_config *cfg, ddb_settings *s,
                                ddb_error *err);
void ddb_settings_free(ddb_settings *s);

/* Read key from [section] of an INI file (AWS config/credentials style).
** Returns a malloc'ed value or NULL. */
char *ddb_ini_get(const char *path, const char *section, const char *key);

#endif
