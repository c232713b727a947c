/* creds_sts.c -- PLACEHOLDER while issue 29's STS part is written. */
#include "ddb_client_int.h"

ddb_result ddb_creds_role_fetch(const ddb_cred_source *src,
                                ddb_cancel_fn stop, void *stop_ud,
                                ddb_creds *out, ddb_error *err) {
  (void)src;
  (void)stop;
  (void)stop_ud;
  (void)out;
  return ddb_error_set(err, DDB_ERR_CONFIG, "STS is not built yet");
}

ddb_result ddb_creds_web_identity_fetch(const ddb_cred_source *src,
                                        ddb_cancel_fn stop, void *stop_ud,
                                        ddb_creds *out, ddb_error *err) {
  return ddb_creds_role_fetch(src, stop, stop_ud, out, err);
}
