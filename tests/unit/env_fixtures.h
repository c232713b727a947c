/*
** env_fixtures.h -- the environment of a unit test that reads settings:
** every variable the settings, the credential chain and the client read,
** saved and unset before the test, and set back after it.  One list for
** every test file (test_settings.c, test_api.c, creds_fixtures.h).
*/
#ifndef ENV_FIXTURES_H
#define ENV_FIXTURES_H

#include <stdlib.h>
#include <string.h>

static const char *const env_names[] = {
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_CA_BUNDLE",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "HOME"};
#define N_ENV (sizeof(env_names) / sizeof(env_names[0]))

/* Save every variable of env_names in saved (a strdup(), or NULL when it
** is unset), then unset it. */
static inline void env_save(char *saved[N_ENV]) {
  size_t i;
  for(i = 0; i < N_ENV; i++) {
    const char *v = getenv(env_names[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(env_names[i]);
  }
}

/* Unset every variable of env_names (what a test set). */
static inline void env_clear(void) {
  size_t i;
  for(i = 0; i < N_ENV; i++)
    unsetenv(env_names[i]);
}

/* Set every variable of env_names back to what env_save() saved (unset
** where it was), and free saved's strings. */
static inline void env_restore(char *saved[N_ENV]) {
  size_t i;
  for(i = 0; i < N_ENV; i++) {
    if(saved[i])
      setenv(env_names[i], saved[i], 1);
    else
      unsetenv(env_names[i]);
    free(saved[i]);
    saved[i] = NULL;
  }
}

#endif /* ENV_FIXTURES_H */
