/*
** test_settings.c -- unit tests of client/: INI files (ddb_ini_get, read
** as botocore's configparser reads them) and settings resolution (region,
** endpoint, credentials), on scratch files.  No network.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../client/ddb_client_int.h"
#include "env_fixtures.h"
#include "tap.h"

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if(!f)
    return -1;
  fputs(text, f);
  return fclose(f);
}

typedef struct tmpdir {
  char dir[64];
  char config[128];
  char creds[128];
  char missing[128];
} tmpdir;

static int tmpdir_make(tmpdir *t) {
  snprintf(t->dir, sizeof(t->dir), "/tmp/ddb-unit-XXXXXX");
  if(!mkdtemp(t->dir))
    return -1;
  snprintf(t->config, sizeof(t->config), "%s/config", t->dir);
  snprintf(t->creds, sizeof(t->creds), "%s/credentials", t->dir);
  snprintf(t->missing, sizeof(t->missing), "%s/missing", t->dir);
  return 0;
}

static void tmpdir_remove(tmpdir *t) {
  char p[160];
  unlink(t->config);
  unlink(t->creds);
  snprintf(p, sizeof(p), "%s/.aws/config", t->dir);
  unlink(p);
  snprintf(p, sizeof(p), "%s/.aws", t->dir);
  rmdir(p);
  rmdir(t->dir);
}

/* ddb_ini_get reads a file as botocore's configparser does: keys
** lower-cased, '=' or ':', continuation lines, [DEFAULT], comments on their
** own lines only, \r\n and \r line ends, no line-length limit; a file it
** refuses (a duplicate, a line without a delimiter, text before the first
** section) has no keys. */
static void test_ini_get(void) {
  tmpdir t;
  char *v, *longline;
  size_t i;
  static const struct {
    const char *section, *key, *want;
  } v_[] = {
      {"default", "region", "us-west-2"},
      {"default", "aws_access_key_id", "AKID"},
      {"default", "spaced key", "spaced value"},
      {"default", "eq", "a=b=c"},
      {"default", "colon", "x:y"},
      {"default", "empty", ""},
      {"default", "crlf", "yes"},
      {"default", "cr", "too"},
      {"default", "inline", "v # not a comment"},
      {"default", "multi", "one\ntwo"},
      {"default", "inherited", "from-default"},
      {"default", "hidden", NULL}, /* commented out */
      {"default", "Region", NULL}, /* looked up in lower case */
      {"profile dev", "region", "eu-west-1"},
      {"profile dev", "inherited", "mine"},
      {"dev", "region", "plain-dev"},
      {"  trimmed  ", "x", "1"}, /* a section's name is kept as written */
      {"trimmed", "x", NULL},
      {"DEFAULT", "inherited", NULL}, /* not a section */
      {"nosuch", "region", NULL},
  };
  if(!CHECK(tmpdir_make(&t) == 0))
    return;
  CHECK(write_file(t.config, "# a comment\n"
                             "; another comment\n"
                             "[DEFAULT]\n"
                             "inherited = from-default\n"
                             "[default]\n"
                             "REGION = us-west-2\n"
                             "aws_access_key_id:AKID   \t\n"
                             "spaced key  =  spaced value \n"
                             "eq = a=b=c\n"
                             "colon = x:y\n"
                             "empty =\n"
                             "crlf = yes\r\n"
                             "cr = too\r"
                             "inline = v # not a comment\n"
                             "multi = one\n"
                             "  two\n"
                             "#hidden = 1\n"
                             "  ; hidden = 2\n"
                             "[profile dev]\n"
                             "region=eu-west-1\n"
                             "inherited = mine\n"
                             "[dev]\n"
                             "region = plain-dev\n"
                             "[  trimmed  ]\n"
                             "x = 1\n") == 0);
  for(i = 0; i < sizeof(v_) / sizeof(v_[0]); i++) {
    v = ddb_ini_get(t.config, v_[i].section, v_[i].key);
    if(!CHECK_STR(v, v_[i].want))
      tap_diag("  [%s] %s", v_[i].section, v_[i].key);
    free(v);
  }
  /* a line of 10,000 bytes is one line */
  longline = malloc(10100);
  if(CHECK(longline != NULL)) {
    memcpy(longline, "[default]\ntoken = ", 18);
    memset(longline + 18, 'T', 10000);
    memcpy(longline + 18 + 10000, "\nnext = 1\n", 11);
    CHECK(write_file(t.config, longline) == 0);
    v = ddb_ini_get(t.config, "default", "token");
    CHECK(v && strlen(v) == 10000);
    free(v);
    v = ddb_ini_get(t.config, "default", "next");
    CHECK_STR(v, "1");
    free(v);
    free(longline);
  }
  /* files botocore refuses have no keys */
  {
    static const char *const bad[] = {
        "region = outside\n[default]\nregion = x\n",
        "[default]\nregion = x\n[default]\nregion = y\n",
        "[default]\nregion = x\nRegion = y\n",
        "[default]\nregion = x\norphan\n",
        "[default]\nregion = x\n= y\n",
        "\xef\xbb\xbf[default]\nregion = x\n",
        "[default]\nregion = x\ns3 =\n  no equals sign\n"};
    for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      CHECK(write_file(t.config, bad[i]) == 0);
      v = ddb_ini_get(t.config, "default", "region");
      if(!CHECK(v == NULL))
        tap_diag("  bad file %zu", i);
      free(v);
    }
  }
  CHECK(ddb_ini_get(t.missing, "default", "region") == NULL);
  CHECK(ddb_ini_get(NULL, "default", "region") == NULL);
  tmpdir_remove(&t);
}

static const char cfg_text[] = "[default]\n"
                               "region = us-west-2\n"
                               "aws_access_key_id = CFGDEFAULTKEY\n"
                               "aws_secret_access_key = CFGDEFAULTSECRET\n"
                               "[profile dev]\n"
                               "region = eu-west-1\n"
                               "aws_access_key_id = CFGDEVKEY\n"
                               "aws_secret_access_key = CFGDEVSECRET\n"
                               "[dev]\n"
                               "region = wrong-section\n"
                               "[profile noregion]\n"
                               "region =\n"
                               "[profile cfgonly]\n"
                               "region = ca-central-1\n"
                               "aws_access_key_id = CFGONLYKEY\n"
                               "aws_secret_access_key = CFGONLYSECRET\n"
                               "[profile nocreds]\n"
                               "region = sa-east-1\n";

static const char creds_text[] = "[default]\n"
                                 "aws_access_key_id = CREDDEFAULTKEY\n"
                                 "aws_secret_access_key = CREDDEFAULTSECRET\n"
                                 "[dev]\n"
                                 "aws_access_key_id = CREDDEVKEY\n"
                                 "aws_secret_access_key = CREDDEVSECRET\n"
                                 "aws_session_token = CREDDEVTOKEN\n"
                                 "[profile dev]\n"
                                 "aws_access_key_id = WRONGSECTION\n"
                                 "[nocreds]\n"
                                 "aws_access_key_id = HALF\n";

/* Resolve cfg; returns the result; s must be freed by the caller. */
static ddb_result resolve(const ddb_config *cfg, ddb_settings *s,
                          ddb_error *err) {
  ddb_error_clear(err);
  return ddb_settings_resolve(cfg, s, err);
}

static void test_settings_region(void) {
  char *saved[N_ENV];
  tmpdir t;
  ddb_config cfg;
  ddb_settings s;
  ddb_error err;
  char p[160];
  if(!CHECK(tmpdir_make(&t) == 0))
    return;
  env_save(saved);
  write_file(t.config, cfg_text);
  write_file(t.creds, creds_text);
  setenv("AWS_CONFIG_FILE", t.config, 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", t.creds, 1);
  setenv("HOME", t.dir, 1);
  memset(&cfg, 0, sizeof(cfg));

  /* option > AWS_REGION > AWS_DEFAULT_REGION > config file */
  setenv("AWS_REGION", "env-region", 1);
  setenv("AWS_DEFAULT_REGION", "env-default-region", 1);
  cfg.region = "opt-region";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "opt-region");
  ddb_settings_free(&s);
  cfg.region = NULL;
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "env-region");
  ddb_settings_free(&s);
  unsetenv("AWS_REGION");
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "env-default-region");
  ddb_settings_free(&s);
  setenv("AWS_REGION", "", 1); /* empty counts as unset */
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "env-default-region");
  ddb_settings_free(&s);
  unsetenv("AWS_REGION");
  unsetenv("AWS_DEFAULT_REGION");
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "us-west-2");
  ddb_settings_free(&s);

  /* the profile's section is [profile NAME] in the config file */
  setenv("AWS_PROFILE", "dev", 1);
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "eu-west-1");
  ddb_settings_free(&s);
  setenv("AWS_PROFILE", "nocreds", 1);
  cfg.profile = "dev"; /* the option beats AWS_PROFILE */
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "eu-west-1");
  ddb_settings_free(&s);
  unsetenv("AWS_PROFILE");

  /* no region anywhere */
  cfg.profile = "noregion";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_ERR_CONFIG);
  CHECK(strncmp(err.message, "no region", 9) == 0);
  CHECK(strstr(err.message, "'noregion'") != NULL);
  CHECK(s.region == NULL && s.endpoint == NULL && s.access_key == NULL);
  cfg.profile = NULL;
  setenv("AWS_CONFIG_FILE", t.missing, 1);
  CHECK_INT(resolve(&cfg, &s, &err), DDB_ERR_CONFIG);
  CHECK(strstr(err.message, "profile 'default'") != NULL);

  /* without AWS_CONFIG_FILE: ~/.aws/config */
  unsetenv("AWS_CONFIG_FILE");
  snprintf(p, sizeof(p), "%s/.aws", t.dir);
  CHECK(mkdir(p, 0700) == 0);
  snprintf(p, sizeof(p), "%s/.aws/config", t.dir);
  write_file(p, "[default]\nregion = home-region\n");
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.region, "home-region");
  ddb_settings_free(&s);

  env_clear();
  env_restore(saved);
  tmpdir_remove(&t);
}

static void test_settings_endpoint(void) {
  char *saved[N_ENV];
  tmpdir t;
  ddb_config cfg;
  ddb_settings s;
  ddb_error err;
  if(!CHECK(tmpdir_make(&t) == 0))
    return;
  env_save(saved);
  write_file(t.creds, creds_text);
  setenv("AWS_CONFIG_FILE", t.missing, 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", t.creds, 1);
  setenv("HOME", t.dir, 1);
  memset(&cfg, 0, sizeof(cfg));
  cfg.region = "eu-north-1";

  /* option > AWS_ENDPOINT_URL_DYNAMODB > AWS_ENDPOINT_URL > default */
  setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://ddb-env:8000", 1);
  setenv("AWS_ENDPOINT_URL", "http://all-env:8000", 1);
  cfg.endpoint = "http://opt:1/";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.endpoint, "http://opt:1");
  ddb_settings_free(&s);
  cfg.endpoint = NULL;
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.endpoint, "http://ddb-env:8000");
  ddb_settings_free(&s);
  setenv("AWS_ENDPOINT_URL_DYNAMODB", "", 1);
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.endpoint, "http://all-env:8000");
  ddb_settings_free(&s);
  unsetenv("AWS_ENDPOINT_URL_DYNAMODB");
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.endpoint, "http://all-env:8000");
  ddb_settings_free(&s);
  unsetenv("AWS_ENDPOINT_URL");
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.endpoint, "https://dynamodb.eu-north-1.amazonaws.com");
  CHECK_STR(s.region, "eu-north-1");
  ddb_settings_free(&s);

  /* trailing slashes go; other schemes are refused */
  cfg.endpoint = "https://x.example///";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.endpoint, "https://x.example");
  ddb_settings_free(&s);
  cfg.endpoint = "localhost:8000";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_ERR_CONFIG);
  CHECK_STR(err.message, "bad endpoint 'localhost:8000': must start with "
                         "http:// or https://");
  CHECK(s.region == NULL && s.endpoint == NULL);
  cfg.endpoint = NULL;
  setenv("AWS_ENDPOINT_URL", "ftp://x", 1);
  CHECK_INT(resolve(&cfg, &s, &err), DDB_ERR_CONFIG);

  env_clear();
  env_restore(saved);
  tmpdir_remove(&t);
}

static void test_settings_credentials(void) {
  char *saved[N_ENV];
  tmpdir t;
  ddb_config cfg;
  ddb_settings s;
  ddb_error err;
  if(!CHECK(tmpdir_make(&t) == 0))
    return;
  env_save(saved);
  write_file(t.config, cfg_text);
  write_file(t.creds, creds_text);
  setenv("AWS_CONFIG_FILE", t.config, 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", t.creds, 1);
  setenv("HOME", t.dir, 1);
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  memset(&cfg, 0, sizeof(cfg));

  /* environment first when no profile option is given */
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
  setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.access_key, "ENVKEY");
  CHECK_STR(s.secret_key, "ENVSECRET");
  CHECK_STR(s.session_token, "ENVTOKEN");
  CHECK_STR(s.cred_source, "environment");
  ddb_settings_free(&s);
  unsetenv("AWS_SESSION_TOKEN");
  setenv("AWS_PROFILE", "dev", 1); /* AWS_PROFILE does not beat them */
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.access_key, "ENVKEY");
  CHECK(s.session_token == NULL);
  CHECK_STR(s.region, "eu-west-1");
  ddb_settings_free(&s);
  unsetenv("AWS_PROFILE");

  /* the profile option does: the credentials file's [dev] */
  cfg.profile = "dev";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.access_key, "CREDDEVKEY");
  CHECK_STR(s.secret_key, "CREDDEVSECRET");
  CHECK_STR(s.session_token, "CREDDEVTOKEN");
  CHECK_STR(s.cred_source, "profile 'dev'");
  ddb_settings_free(&s);
  cfg.profile = NULL;

  /* half the environment pair: the files */
  unsetenv("AWS_SECRET_ACCESS_KEY");
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.access_key, "CREDDEFAULTKEY");
  CHECK_STR(s.secret_key, "CREDDEFAULTSECRET");
  CHECK_STR(s.cred_source, "profile 'default'");
  ddb_settings_free(&s);
  unsetenv("AWS_ACCESS_KEY_ID");

  /* the credentials file before the config file; the config file alone */
  setenv("AWS_SHARED_CREDENTIALS_FILE", t.missing, 1);
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.access_key, "CFGDEFAULTKEY");
  ddb_settings_free(&s);
  setenv("AWS_SHARED_CREDENTIALS_FILE", t.creds, 1);
  cfg.profile = "cfgonly";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_OK);
  CHECK_STR(s.access_key, "CFGONLYKEY");
  CHECK_STR(s.secret_key, "CFGONLYSECRET");
  CHECK_STR(s.region, "ca-central-1");
  ddb_settings_free(&s);

  /* nothing found: the message lists what was tried */
  cfg.profile = NULL;
  setenv("AWS_PROFILE", "nocreds", 1);
  /* (a key id without its secret is an error, as in botocore: never
  ** completed from the other file) */
  CHECK_INT(resolve(&cfg, &s, &err), DDB_ERR_CONFIG);
  {
    char want[512];
    snprintf(want, sizeof(want),
             "profile 'nocreds' in the AWS credentials file '%s': "
             "aws_access_key_id without aws_secret_access_key",
             t.creds);
    CHECK_STR(err.message, want);
  }
  CHECK(s.region == NULL && s.access_key == NULL && s.cred_source == NULL);
  unsetenv("AWS_PROFILE");
  cfg.profile = "nocreds";
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
  CHECK_INT(resolve(&cfg, &s, &err), DDB_ERR_CONFIG);
  CHECK(strstr(err.message, "aws_access_key_id without "
                            "aws_secret_access_key") != NULL);
  /* a profile with no keys anywhere: the message lists what was tried */
  cfg.profile = "noregion";
  cfg.region = "us-east-1";
  CHECK_INT(resolve(&cfg, &s, &err), DDB_ERR_CONFIG);
  CHECK_STR(err.message,
            "no credentials: tried the shared credentials and config files "
            "(profile 'noregion'); container credentials "
            "(AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/FULL_URI not set); "
            "instance metadata (AWS_EC2_METADATA_DISABLED=true)");
  cfg.region = NULL;

  env_clear();
  env_restore(saved);
  tmpdir_remove(&t);
}

const tap_test tap_settings_tests[] = {
    {"client: ddb_ini_get", test_ini_get},
    {"client: settings, region", test_settings_region},
    {"client: settings, endpoint", test_settings_endpoint},
    {"client: settings, credentials", test_settings_credentials},
    {NULL, NULL}};
