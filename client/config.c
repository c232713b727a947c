/*
** config.c -- finding the region, the endpoint, the CA bundle and the
** credentials the way the AWS SDKs do.
**
**   region:      option, AWS_REGION, AWS_DEFAULT_REGION, `region` in the
**                profile's section of the config file.
**   endpoint:    option, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, the
**                `dynamodb` entry of the profile's `services` section,
**                `endpoint_url` of the profile,
**                https://dynamodb.<region>.amazonaws.com.  The environment
**                and the config file are ignored when
**                AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true (or the profile's
**                ignore_configured_endpoint_urls = true).
**   ca_bundle:   option, AWS_CA_BUNDLE, `ca_bundle` of the profile; none:
**                the system's CAs.  HTTPS always verifies certificates.
**   profile:     option, AWS_PROFILE, "default".
**   credentials: the chain of creds.c (environment, shared files,
**                credential_process, container, instance metadata).
**   files:       AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and
**                AWS_CONFIG_FILE (~/.aws/config); in the config file a
**                profile's section is [profile NAME], except [default].
**
** The config file's services section looks like this:
**
**   [profile dev]
**   services = local
**   [services local]
**   dynamodb =
**     endpoint_url = http://localhost:8000
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ddb_client_int.h"
#include "sigv4.h"

/* Longest line read from an AWS config or credentials file. */
#define INI_MAX_LINE 4096

/* The value of environment variable name, or NULL when unset or empty. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

/* Strip blanks and line ends from both ends of s, in place; returns the
** first non-blank character. */
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

/* Look up key in [section] of the INI file at path; with sub set, look up
** the sub-property sub of key (the indented lines after a "key =" with an
** empty value).  An indented line under such a key is never a key of the
** section itself.  The first match wins.  Returns a malloc'ed value, or
** NULL when not found, the file cannot be read, or out of memory. */
static char *ini_lookup(const char *path, const char *section, const char *key,
                        const char *sub) {
  FILE *f;
  char line[INI_MAX_LINE];
  int in_section = 0, in_nested = 0, in_wanted = 0;
  char *result = NULL;
  if(!path)
    return NULL;
  f = fopen(path, "r");
  if(!f)
    return NULL;
  while(fgets(line, sizeof(line), f)) {
    int indented = line[0] == ' ' || line[0] == '\t';
    char *s = trim(line), *eq, *k, *v;
    if(*s == '#' || *s == ';' || *s == 0)
      continue;
    if(*s == '[') {
      char *end = strchr(s, ']');
      in_nested = in_wanted = 0;
      if(!end)
        continue;
      *end = 0;
      in_section = strcmp(trim(s + 1), section) == 0;
      continue;
    }
    eq = strchr(s, '=');
    if(!in_section || !eq)
      continue;
    *eq = 0;
    k = trim(s);
    v = trim(eq + 1);
    if(indented && in_nested) {
      if(sub && in_wanted && strcmp(k, sub) == 0) {
        result = ddb_strdup(v);
        break;
      }
      continue;
    }
    in_nested = *v == 0;
    in_wanted = in_nested && strcmp(k, key) == 0;
    if(!sub && strcmp(k, key) == 0) {
      result = ddb_strdup(v);
      break;
    }
  }
  fclose(f);
  return result;
}

/* key of [section] in the INI file path (malloc'ed), or NULL. */
char *ddb_ini_get(const char *path, const char *section, const char *key) {
  return ini_lookup(path, section, key, NULL);
}

/* Sub-property sub of key in [section] of path (malloc'ed), or NULL. */
char *ddb_ini_get_sub(const char *path, const char *section, const char *key,
                      const char *sub) {
  return ini_lookup(path, section, key, sub);
}

/* The path in variable var, else ~/.aws/name (malloc'ed); NULL without
** HOME or on out of memory. */
char *ddb_aws_file(const char *var, const char *name) {
  const char *v = env(var), *home;
  char buf[1024];
  if(v)
    return ddb_strdup(v);
  home = env("HOME");
  if(!home)
    return NULL;
  if(snprintf(buf, sizeof(buf), "%s/.aws/%s", home, name) >= (int)sizeof(buf))
    return NULL;
  return ddb_strdup(buf);
}

/* The config file's section name of profile into buf: "default" or
** "profile NAME" (second == 1 gives "profile default" for the default
** profile, which botocore accepts too; NULL otherwise). */
static const char *config_section(const char *profile, int second, char *buf,
                                  size_t cap) {
  int is_default = strcmp(profile, "default") == 0;
  if(second && !is_default)
    return NULL;
  if(is_default && !second)
    return "default";
  if(snprintf(buf, cap, "profile %s", profile) >= (int)cap)
    return NULL;
  return buf;
}

/* key of the profile: the credentials file's [profile] first (when
** creds), then the config file's [profile NAME] (or [default]). */
char *ddb_profile_get(const char *profile, const char *key, int creds) {
  char *v = NULL, *path, section[300];
  const char *sec;
  int i;
  if(creds) {
    path = ddb_aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
    v = ddb_ini_get(path, profile, key);
    free(path);
    if(v)
      return v;
  }
  path = ddb_aws_file("AWS_CONFIG_FILE", "config");
  for(i = 0; i < 2 && !v; i++) {
    sec = config_section(profile, i, section, sizeof(section));
    if(sec)
      v = ddb_ini_get(path, sec, key);
  }
  free(path);
  return v;
}

/* Is the text a true boolean as the SDKs spell it ("true", any case)? */
static int is_true(const char *v) {
  return v && strcasecmp(v, "true") == 0;
}

/* The endpoint the profile configures for DynamoDB: the dynamodb entry of
** its services section, else its endpoint_url; NULL when none. */
static char *config_endpoint(const char *profile) {
  char *services = ddb_profile_get(profile, "services", 0), *v = NULL;
  if(services && *services) {
    char *path = ddb_aws_file("AWS_CONFIG_FILE", "config");
    char section[300];
    if(snprintf(section, sizeof(section), "services %s", services) <
       (int)sizeof(section))
      v = ddb_ini_get_sub(path, section, "dynamodb", "endpoint_url");
    free(path);
  }
  free(services);
  if(v && !*v) {
    free(v);
    v = NULL;
  }
  if(!v) {
    v = ddb_profile_get(profile, "endpoint_url", 0);
    if(v && !*v) {
      free(v);
      v = NULL;
    }
  }
  return v;
}

/* Check endpoint text v and store it without trailing slashes in s; what
** names where it came from.  Returns DDB_OK or a config error. */
static ddb_result set_endpoint(ddb_settings *s, const char *v,
                               const char *what, ddb_error *err) {
  size_t n = strlen(v), skip;
  const char *host, *at, *slash;
  if(strncmp(v, "http://", 7) == 0)
    skip = 7;
  else if(strncmp(v, "https://", 8) == 0)
    skip = 8;
  else
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad endpoint '%.200s'%s: must start with "
                         "http:// or https://",
                         v, what);
  host = v + skip;
  slash = strchr(host, '/');
  at = strchr(host, '@');
  if(at && (!slash || at < slash))
    /* user:password@ would put a secret in messages and dynamodb_info */
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad endpoint%s: a user name or password in the URL "
                         "is not allowed",
                         what);
  if(!*host || *host == '/')
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad endpoint '%.200s'%s: no host", v, what);
  while(n > skip && v[n - 1] == '/')
    n--;
  s->endpoint = malloc(n + 1);
  if(!s->endpoint)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  memcpy(s->endpoint, v, n);
  s->endpoint[n] = 0;
  return DDB_OK;
}

/* Resolve the endpoint into s (see the top of the file). */
static ddb_result resolve_endpoint(const ddb_config *cfg, const char *profile,
                                   ddb_settings *s, ddb_error *err) {
  const char *v = NULL, *what = "";
  char *conf = NULL, *ignore, buf[1024];
  ddb_result result;
  int ignore_configured = is_true(env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"));
  if(!ignore_configured) {
    ignore = ddb_profile_get(profile, "ignore_configured_endpoint_urls", 0);
    ignore_configured = is_true(ignore);
    free(ignore);
  }
  if(cfg->endpoint)
    v = cfg->endpoint;
  else if(!ignore_configured) {
    if((v = env("AWS_ENDPOINT_URL_DYNAMODB")) != NULL)
      what = " (AWS_ENDPOINT_URL_DYNAMODB)";
    else if((v = env("AWS_ENDPOINT_URL")) != NULL)
      what = " (AWS_ENDPOINT_URL)";
    else if((conf = config_endpoint(profile)) != NULL) {
      v = conf;
      what = " (config file)";
    }
  }
  if(v) {
    result = set_endpoint(s, v, what, err);
    free(conf);
    return result;
  }
  if(snprintf(buf, sizeof(buf), "https://dynamodb.%s.amazonaws.com",
              s->region) >= (int)sizeof(buf))
    return ddb_error_set(err, DDB_ERR_CONFIG, "region too long");
  s->endpoint = ddb_strdup(buf);
  if(!s->endpoint)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
}

/* Resolve the CA bundle into s: option, AWS_CA_BUNDLE, the profile's
** ca_bundle; the file must be readable. */
static ddb_result resolve_ca_bundle(const ddb_config *cfg, const char *profile,
                                    ddb_settings *s, ddb_error *err) {
  const char *v = cfg->ca_bundle, *what = "ca_bundle";
  char *conf = NULL;
  FILE *f;
  if(v && !*v)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad value for ca_bundle: '' (expected a PEM file)");
  if(!v && (v = env("AWS_CA_BUNDLE")) != NULL)
    what = "AWS_CA_BUNDLE";
  if(!v && (conf = ddb_profile_get(profile, "ca_bundle", 0)) != NULL &&
     *conf) {
    v = conf;
    what = "ca_bundle of the config file";
  }
  if(!v || !*v) {
    free(conf);
    return DDB_OK;
  }
  f = fopen(v, "r");
  if(!f) {
    int e = errno;
    ddb_error_set(err, DDB_ERR_CONFIG, "%s '%.200s': cannot read: %s", what, v,
                  strerror(e));
    free(conf);
    return DDB_ERR_CONFIG;
  }
  fclose(f);
  s->ca_bundle = ddb_strdup(v);
  free(conf);
  if(!s->ca_bundle)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
}

/* Free a string after overwriting it with zeros (for secrets). */
static void wipe_free(char *p) {
  if(p) {
    memset(p, 0, strlen(p));
    free(p);
  }
}

/* Free everything s holds (secrets wiped) and zero it. */
void ddb_settings_free(ddb_settings *s) {
  free(s->region);
  free(s->endpoint);
  free(s->ca_bundle);
  free(s->access_key);
  wipe_free(s->secret_key);
  wipe_free(s->session_token);
  free(s->cred_source);
  ddb_cred_source_free(&s->src);
  memset(s, 0, sizeof(*s));
}

/* Resolve region, endpoint, CA bundle and credentials (see the top of
** the file) into s.  On error s is empty and err says why. */
ddb_result ddb_settings_resolve(const ddb_config *cfg, ddb_settings *s,
                                ddb_error *err) {
  const char *profile = cfg->profile ? cfg->profile : env("AWS_PROFILE");
  const char *v;
  ddb_creds creds;
  ddb_result result = DDB_OK;

  memset(s, 0, sizeof(*s));
  memset(&creds, 0, sizeof(creds));
  if(!profile)
    profile = "default";

  /* region */
  if(cfg->region)
    s->region = ddb_strdup(cfg->region);
  else if((v = env("AWS_REGION")) || (v = env("AWS_DEFAULT_REGION")))
    s->region = ddb_strdup(v);
  else
    s->region = ddb_profile_get(profile, "region", 0);
  if(!s->region || !*s->region) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "no region: set the region= option, AWS_REGION, "
                           "or region in the config file's profile '%s'",
                           profile);
    goto fail;
  }

  result = resolve_endpoint(cfg, profile, s, err);
  if(result)
    goto fail;
  result = resolve_ca_bundle(cfg, profile, s, err);
  if(result)
    goto fail;

  /* credentials */
  result = ddb_creds_chain(profile, cfg->profile != NULL, &s->src, &creds,
                           &s->cred_source, err);
  if(result)
    goto fail;
  s->access_key = creds.access_key;
  s->secret_key = creds.secret_key;
  s->session_token = creds.session_token;
  s->expires = creds.expires;
  return DDB_OK;

fail:
  ddb_creds_clear(&creds);
  ddb_settings_free(s);
  return result;
}

/* ------------------------------------------------------------------------
** The place of a client (see ddb_client_int.h)
*/
int ddb_place_id(const char *endpoint, const char *region,
                 unsigned char *out) {
  char host[DDB_SIGV4_HOST_MAX], path[DDB_SIGV4_PATH_MAX];
  const char *port, *parts[2];
  size_t hlen, plen, lens[2];
  ddb_buf ep;
  int rc = -1;

  if(ddb_sigv4_endpoint(endpoint, host, sizeof(host), path, sizeof(path)))
    return -1;
  /* host: lower case, the default port already dropped; split the port */
  port = host[0] == '[' ? strchr(host, ']') : host;
  port = port ? strchr(port, ':') : NULL;
  hlen = port ? (size_t)(port - host) : strlen(host);
  while(hlen > 1 && host[hlen - 1] == '.' && host[0] != '[')
    hlen--; /* "localhost." is "localhost" */
  plen = strlen(path);
  while(plen > 0 && path[plen - 1] == '/')
    plen--;
  ddb_buf_init(&ep, DDB_SIGV4_HOST_MAX + DDB_SIGV4_PATH_MAX + 16);
  ddb_buf_adds(&ep,
               strncmp(endpoint, "https://", 8) == 0 ? "https://" : "http://");
  if(hlen == 9 && memcmp(host, "localhost", 9) == 0)
    ddb_buf_adds(&ep, "127.0.0.1");
  else
    ddb_buf_add(&ep, host, hlen);
  if(port)
    ddb_buf_adds(&ep, port);
  ddb_buf_add(&ep, path, plen);
  if(!ep.failed && ep.p) {
    parts[0] = ep.p;
    lens[0] = ep.len;
    parts[1] = region ? region : "";
    lens[1] = strlen(parts[1]);
    ddb_scope_hash('P', parts, lens, 2, out);
    rc = 0;
  }
  ddb_buf_free(&ep);
  return rc;
}
