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

/* The largest request body built (an item is at most 400 KB; 25 or 100
** of them stay far below). */
#define DDB_REQUEST_MAX (32u * 1024 * 1024)

/* POST body as DynamoDB operation `operation` (logged with table, index
** and continuation), with retries.  On success *out is the parsed
** response (cJSON_Delete). */
ddb_result ddb_call(ddb_client *c, const char *operation, const char *table,
                    const char *index, int continuation, const char *body,
                    size_t body_len, cJSON **out, ddb_error *err);
int ddb_client_max_retries(const ddb_client *c);
/* Sleep a full-jitter backoff for retry number attempt (1, 2, ...). */
void ddb_backoff(int attempt, int throttled);

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
