/*
** creds_sso.c -- IAM Identity Center (SSO) credentials.  PLACEHOLDER while
** issue 29's SSO part is written on its branch: no profile is taken for
** an SSO profile yet (creds.c refuses them).
*/
#include <stdlib.h>

#include "ddb_client_int.h"

int ddb_creds_sso_source(const ddb_profile *prof, const ddb_cred_env *env,
                         ddb_cred_source *src, ddb_error *err) {
  (void)prof;
  (void)env;
  (void)src;
  (void)err;
  return 0;
}

ddb_result ddb_creds_sso_fetch(const ddb_cred_source *src,
                               ddb_cancel_fn stop, void *stop_ud,
                               ddb_creds *out, ddb_error *err) {
  (void)src;
  (void)stop;
  (void)stop_ud;
  (void)out;
  return ddb_error_set(err, DDB_ERR_CONFIG, "SSO is not built yet");
}

void ddb_sso_source_free(ddb_sso_source *s) {
  free(s);
}
