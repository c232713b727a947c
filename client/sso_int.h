/*
** sso_int.h -- what creds_sso.c (the profile's IAM Identity Center settings,
** GetRoleCredentials) and sso_token.c (the token `aws sso login` cached,
** refreshed through SSO OIDC) share.  Internal to client/.
*/
#ifndef DDB_SSO_INT_H
#define DDB_SSO_INT_H

#include <stdint.h>

#include "ddb_client_int.h"

/* An SSO profile's settings (ddb_cred_source's sso): every string
** malloc'ed, freed by ddb_sso_source_free. */
struct ddb_sso_source {
  char *profile;    /* the profile they are of: `aws sso login --profile` */
  char *session;    /* the sso_session's name; NULL: a legacy profile */
  char *start_url;  /* sso_start_url */
  char *region;     /* sso_region */
  char *account_id; /* sso_account_id */
  char *role_name;  /* sso_role_name */
  char *portal;     /* the portal's endpoint, without a trailing '/' */
  char *oidc;       /* SSO OIDC's endpoint (sso_session only), or NULL */
  char *oidc_error; /* why oidc is NULL (its setting is bad): an error
                       only when a refresh needs it, as in botocore */
  char *cache_file; /* ~/.aws/sso/cache/<sha1>.json; NULL without HOME */
};

/* The SSO access token for s at time now (Unix seconds), as botocore gets
** it: read from s->cache_file; for an sso_session profile, refreshed
** through SSO OIDC CreateToken when it expires within 15 minutes and the
** file holds a registration that has not expired, the file then written
** again.  On success *token is malloc'ed (free with ddb_wipe_free).
** Errors name what (the source) and, where that is the fix,
** `aws sso login --profile NAME`; never a token. */
ddb_result ddb_sso_token(const ddb_sso_source *s, const char *what,
                         const char *ca_bundle, ddb_cancel_fn stop,
                         void *stop_ud, int64_t now, char **token,
                         ddb_error *err);

/* The cache file of key (the sso_session's name, or the start URL of a
** legacy profile): $HOME/.aws/sso/cache/<sha1 hex of key>.json,
** malloc'ed; NULL without HOME or on out of memory. */
char *ddb_sso_cache_file(const char *key);

/* The type and message of an error answer of the portal or of SSO OIDC
** (body[0..n), JSON: __type or code or error, then message or
** error_description), as "Type: message", cut to fit out[0..cap); ""
** when the body has neither (sso_token.c). */
void ddb_sso_error_text(const char *body, size_t n, char *out, size_t cap);
/* Free the cJSON tree j (NULL is fine), every string in it wiped first:
** the answers and the cache file hold tokens and secrets (sso_token.c). */
void ddb_sso_json_free(cJSON *j);

#endif
