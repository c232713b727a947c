/*
** config.c -- finding the region, the endpoint and the credentials the way
** the AWS SDKs do.
**
**   region:      option, AWS_REGION, AWS_DEFAULT_REGION, `region` in the
**                profile's section of the config file.
**   endpoint:    option, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL,
**                https://dynamodb.<region>.amazonaws.com
**   profile:     option, AWS_PROFILE, "default".
**   credentials: when a profile is named by the option, that profile of
**                the shared files; otherwise AWS_ACCESS_KEY_ID /
**                AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, then the
**                profile in the credentials file, then in the config file.
**   files:       AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and
**                AWS_CONFIG_FILE (~/.aws/config); in the config file a
**                profile's section is [profile NAME], except [default].
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

/* Longest line read from an AWS config or credentials file. */
#define INI_MAX_LINE 4096

static char *dupstr(const char *s) {
  size_t n;
  char *p;
  if(!s)
    return NULL;
  n = strlen(s);
  p = malloc(n + 1);
  if(p)
    memcpy(p, s, n + 1);
  return p;
}

static const char *env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

static char *trim(char *s) {
  char *e;
  while(*s == ' ' || *s == '\t')
    s++;
  e = s + strlen(s);
  while(e > s &&
        (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
    *--e = 0;
  return s;
}

char *ddb_ini_get(const char *path, const char *section, const char *key) {
  FILE *f;
  char line[INI_MAX_LINE];
  int in_section = 0;
  char *result = NULL;
  if(!path)
    return NULL;
  f = fopen(path, "r");
  if(!f)
    return NULL;
  while(fgets(line, sizeof(line), f)) {
    char *s = trim(line), *eq;
    if(*s == '#' || *s == ';' || *s == 0)
      continue;
    if(*s == '[') {
      char *end = strchr(s, ']');
      if(!end)
        continue;
      *end = 0;
      in_section = strcmp(trim(s + 1), section) == 0;
      continue;
    }
    if(!in_section)
      continue;
    eq = strchr(s, '=');
    if(!eq)
      continue;
    *eq = 0;
    if(strcmp(trim(s), key) == 0) {
      result = dupstr(trim(eq + 1));
      break;
    }
  }
  fclose(f);
  return result;
}

/* Path of an AWS file: the variable's value, else ~/.aws/<name>. */
static char *aws_file(const char *var, const char *name) {
  const char *v = env(var), *home;
  char buf[1024];
  if(v)
    return dupstr(v);
  home = env("HOME");
  if(!home)
    return NULL;
  snprintf(buf, sizeof(buf), "%s/.aws/%s", home, name);
  return dupstr(buf);
}

/* key from the profile's section: credentials file first (when creds is
** set), then the config file. */
static char *profile_get(const char *profile, const char *key, int creds) {
  char *v = NULL, *path, section[300];
  if(creds) {
    path = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    v = ddb_ini_get(path, profile, key);
    free(path);
    if(v)
      return v;
  }
  path = aws_file("AWS_CONFIG_FILE", "config");
  if(strcmp(profile, "default") == 0)
    snprintf(section, sizeof(section), "default");
  else
    snprintf(section, sizeof(section), "profile %s", profile);
  v = ddb_ini_get(path, section, key);
  free(path);
  return v;
}

void ddb_settings_free(ddb_settings *s) {
  free(s->region);
  free(s->endpoint);
  free(s->access_key);
  if(s->secret_key)
    memset(s->secret_key, 0, strlen(s->secret_key));
  free(s->secret_key);
  if(s->session_token)
    memset(s->session_token, 0, strlen(s->session_token));
  free(s->session_token);
  free(s->cred_source);
  memset(s, 0, sizeof(*s));
}

ddb_result ddb_settings_resolve(const ddb_config *cfg, ddb_settings *s,
                                ddb_error *err) {
  const char *profile = cfg->profile ? cfg->profile : env("AWS_PROFILE");
  const char *v;
  char buf[1024];
  ddb_result result = DDB_OK;

  memset(s, 0, sizeof(*s));
  if(!profile)
    profile = "default";

  /* region */
  if(cfg->region)
    s->region = dupstr(cfg->region);
  else if((v = env("AWS_REGION")) || (v = env("AWS_DEFAULT_REGION")))
    s->region = dupstr(v);
  else
    s->region = profile_get(profile, "region", 0);
  if(!s->region || !*s->region) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "no region: set the region= option, AWS_REGION, "
                           "or region in the config file's profile '%s'",
                           profile);
    goto fail;
  }

  /* endpoint */
  if(cfg->endpoint)
    v = cfg->endpoint;
  else if(!(v = env("AWS_ENDPOINT_URL_DYNAMODB")))
    v = env("AWS_ENDPOINT_URL");
  if(v) {
    size_t n = strlen(v);
    if(strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0) {
      result = ddb_error_set(err, DDB_ERR_CONFIG,
                             "bad endpoint '%.200s': must start with "
                             "http:// or https://",
                             v);
      goto fail;
    }
    while(n > 0 && v[n - 1] == '/')
      n--;
    s->endpoint = malloc(n + 1);
    if(s->endpoint) {
      memcpy(s->endpoint, v, n);
      s->endpoint[n] = 0;
    }
  } else {
    snprintf(buf, sizeof(buf), "https://dynamodb.%s.amazonaws.com", s->region);
    s->endpoint = dupstr(buf);
  }

  /* credentials */
  if(!cfg->profile && env("AWS_ACCESS_KEY_ID") &&
     env("AWS_SECRET_ACCESS_KEY")) {
    s->access_key = dupstr(env("AWS_ACCESS_KEY_ID"));
    s->secret_key = dupstr(env("AWS_SECRET_ACCESS_KEY"));
    s->session_token = dupstr(env("AWS_SESSION_TOKEN"));
    s->cred_source = dupstr("environment");
  } else {
    s->access_key = profile_get(profile, "aws_access_key_id", 1);
    s->secret_key = profile_get(profile, "aws_secret_access_key", 1);
    s->session_token = profile_get(profile, "aws_session_token", 1);
    snprintf(buf, sizeof(buf), "profile '%s'", profile);
    s->cred_source = dupstr(buf);
    if(!s->access_key || !s->secret_key) {
      result = ddb_error_set(
          err, DDB_ERR_CONFIG,
          "no credentials: tried %sthe shared credentials and config files "
          "(profile '%s')",
          cfg->profile ? "" : "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ",
          profile);
      goto fail;
    }
  }
  if(!s->endpoint || !s->access_key || !s->secret_key || !s->cred_source) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  return DDB_OK;

fail:
  ddb_settings_free(s);
  return result;
}
