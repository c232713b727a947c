/*
** test_request.c -- unit tests of client/: request bodies (Query, Scan,
** attribute-name placeholders), INI files and settings resolution (region,
** endpoint, credentials), the LastEvaluatedKey loop guard.  No network.
*/
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../client/ddb_client_int.h"
#include "helpers.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Request bodies
*/
static char *body_of(const ddb_read *r, ddb_result *rc, ddb_error *err) {
  ddb_buf b;
  ddb_buf_init(&b, 1 << 16);
  ddb_error_clear(err);
  *rc = ddb_read_body(r, &b, err);
  if(*rc) {
    ddb_buf_free(&b);
    return NULL;
  }
  return ddb_buf_take(&b, NULL);
}

static void test_read_body_query_ops(void) {
  static const struct {
    ddb_skop op;
    const char *kce;
  } v[] = {
      {DDB_SK_EQ, " AND #k1 = :v1"},
      {DDB_SK_LT, " AND #k1 < :v1"},
      {DDB_SK_LE, " AND #k1 <= :v1"},
      {DDB_SK_GT, " AND #k1 > :v1"},
      {DDB_SK_GE, " AND #k1 >= :v1"},
      {DDB_SK_BEGINS_WITH, " AND begins_with(#k1, :v1)"},
  };
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  char want[1024], *s;
  size_t i;
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.pk_name = "PK";
  r.pk = mkav(DDB_S, "u1");
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"T\",\"KeyConditionExpression\":\"#k0 = :v0\","
               "\"ExpressionAttributeNames\":{\"#k0\":\"PK\"},"
               "\"ExpressionAttributeValues\":{\":v0\":{\"S\":\"u1\"}},"
               "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  r.sk_name = "SK";
  r.sk[0] = mkav(DDB_S, "a");
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    r.sk_op = v[i].op;
    s = body_of(&r, &rc, &err);
    snprintf(want, sizeof(want),
             "{\"TableName\":\"T\",\"KeyConditionExpression\":\"#k0 = "
             ":v0%s\",\"ExpressionAttributeNames\":{\"#k0\":\"PK\",\"#k1\":"
             "\"SK\"},\"ExpressionAttributeValues\":{\":v0\":{\"S\":\"u1\"},"
             "\":v1\":{\"S\":\"a\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}",
             v[i].kce);
    CHECK_STR(s, want);
    free(s);
  }
  r.sk_op = DDB_SK_BETWEEN;
  r.sk[0] = mkav(DDB_N, "-1.5");
  r.sk[1] = mkav(DDB_N, "10");
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"T\",\"KeyConditionExpression\":\"#k0 = :v0 "
               "AND #k1 BETWEEN :v1 AND :v2\",\"ExpressionAttributeNames\":"
               "{\"#k0\":\"PK\",\"#k1\":\"SK\"},\"ExpressionAttributeValues\":"
               "{\":v0\":{\"S\":\"u1\"},\":v1\":{\"N\":\"-1.5\"},\":v2\":"
               "{\"N\":\"10\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
}

static void test_read_body_query_options(void) {
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  ddb_av k[2];
  ddb_item *start;
  char *s;
  k[0] = mkav(DDB_N, "42");
  k[0].name = "PK";
  k[1] = mkav(DDB_B, "AQI=");
  k[1].name = "SK";
  start = ddb_item_from_avs(k, 2);
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.index = "GSI1";
  r.pk_name = "PK";
  r.pk = mkav(DDB_N, "42");
  r.descending = 1;
  r.consistent = 1;
  r.limit = 25;
  r.count_only = 1;
  r.start = start;
  r.segment = 2;
  r.total_segments = 4; /* ignored by a Query */
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"T\",\"IndexName\":\"GSI1\","
               "\"KeyConditionExpression\":\"#k0 = :v0\","
               "\"ExpressionAttributeNames\":{\"#k0\":\"PK\"},"
               "\"ExpressionAttributeValues\":{\":v0\":{\"N\":\"42\"}},"
               "\"ScanIndexForward\":false,\"ConsistentRead\":true,"
               "\"Limit\":25,\"Select\":\"COUNT\",\"ExclusiveStartKey\":"
               "{\"PK\":{\"N\":\"42\"},\"SK\":{\"B\":\"AQI=\"}},"
               "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  ddb_item_unref(start);
}

static void test_read_body_scan(void) {
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  char *s;
  memset(&r, 0, sizeof(r));
  r.table = "Store";
  s = body_of(&r, &rc, &err);
  CHECK_STR(s,
            "{\"TableName\":\"Store\",\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  r.segment = 3;
  r.total_segments = 4;
  r.limit = 100;
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"Store\",\"Segment\":3,\"TotalSegments\":4,"
               "\"Limit\":100,\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  r.segment = 0;
  r.total_segments = 1; /* not parallel */
  r.limit = 0;
  r.index = "by\"q";
  r.descending = 1; /* a Scan has no order */
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"Store\",\"IndexName\":\"by\\\"q\","
               "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
}

/* Attribute names never appear in expressions, whatever they contain. */
static void test_read_body_names(void) {
  static const char *const names[] = {"Date",      "size",      "a#b",
                                      "a.b",       "has space", "na\xc3\xafve",
                                      "q\"uo\\te", ":v0",       "#k0"};
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  size_t i;
  for(i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char *s;
    cJSON *j;
    const cJSON *kce, *ean, *eav;
    memset(&r, 0, sizeof(r));
    r.table = "T";
    r.pk_name = names[i];
    r.pk = mkav(DDB_S, names[i]);
    r.sk_name = names[(i + 1) % (sizeof(names) / sizeof(names[0]))];
    r.sk_op = DDB_SK_GE;
    r.sk[0] = mkav(DDB_S, "x");
    s = body_of(&r, &rc, &err);
    j = s ? cJSON_Parse(s) : NULL;
    if(!CHECK_MSG(j != NULL, "body for '%s' is not JSON: %s", names[i],
                  s ? s : err.message)) {
      free(s);
      continue;
    }
    kce = cJSON_GetObjectItemCaseSensitive(j, "KeyConditionExpression");
    ean = cJSON_GetObjectItemCaseSensitive(j, "ExpressionAttributeNames");
    eav = cJSON_GetObjectItemCaseSensitive(j, "ExpressionAttributeValues");
    CHECK(cJSON_IsString(kce) &&
          strcmp(kce->valuestring, "#k0 = :v0 AND #k1 >= :v1") == 0);
    CHECK_STR(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ean, "#k0")),
        r.pk_name);
    CHECK_STR(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ean, "#k1")),
        r.sk_name);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                  cJSON_GetObjectItemCaseSensitive(eav, ":v0"), "S")),
              names[i]);
    cJSON_Delete(j);
    free(s);
  }
}

static void test_read_body_errors(void) {
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  char *s;
  ddb_buf b;
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.pk_name = "PK";
  r.pk = mkav(DDB_N, "abc");
  s = body_of(&r, &rc, &err);
  CHECK(s == NULL);
  CHECK_INT(rc, DDB_ERR_INPUT);
  CHECK_INT(err.code, DDB_ERR_INPUT);
  CHECK_STR(err.message, "bad value for key 'PK'");
  r.pk = mkav(DDB_N, "");
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  free(s);
  r.pk = mkav(DDB_BOOL, ""); /* not a key type */
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  free(s);
  r.pk = mkav(DDB_N, "7");
  r.sk_name = "SK";
  r.sk_op = DDB_SK_LT;
  r.sk[0] = mkav(DDB_N, "1e");
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  CHECK_STR(err.message, "bad value for key 'SK'");
  free(s);
  r.sk_op = DDB_SK_BETWEEN;
  r.sk[0] = mkav(DDB_N, "1");
  r.sk[1] = mkav(DDB_N, "--2"); /* the second operand too */
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  free(s);
  r.sk[1] = mkav(DDB_N, "2");
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_OK);
  free(s);
  /* the buffer's cap */
  ddb_buf_init(&b, 40);
  ddb_error_clear(&err);
  CHECK_INT(ddb_read_body(&r, &b, &err), DDB_ERR_NOMEM);
  CHECK_INT(err.code, DDB_ERR_NOMEM);
  ddb_buf_free(&b);
}

/* ------------------------------------------------------------------------
** INI files and settings
*/
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

static const char *const env_vars[] = {
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CA_BUNDLE",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "HOME"};
#define N_ENV_VARS (sizeof(env_vars) / sizeof(env_vars[0]))

/* Save and clear every variable the settings read. */
static void env_save(char *saved[N_ENV_VARS]) {
  size_t i;
  for(i = 0; i < N_ENV_VARS; i++) {
    const char *v = getenv(env_vars[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(env_vars[i]);
  }
}

static void env_restore(char *saved[N_ENV_VARS]) {
  size_t i;
  for(i = 0; i < N_ENV_VARS; i++) {
    if(saved[i])
      setenv(env_vars[i], saved[i], 1);
    else
      unsetenv(env_vars[i]);
    free(saved[i]);
    saved[i] = NULL;
  }
}

static void env_clear(void) {
  size_t i;
  for(i = 0; i < N_ENV_VARS; i++)
    unsetenv(env_vars[i]);
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
  char *saved[N_ENV_VARS];
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
  char *saved[N_ENV_VARS];
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
  char *saved[N_ENV_VARS];
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

/* A key item PK=<n> (a new reference). */
static ddb_item *lek_key(int n) {
  char text[16];
  ddb_av v;
  memset(&v, 0, sizeof(v));
  snprintf(text, sizeof(text), "k%d", n);
  v.type = DDB_S;
  v.text = text;
  v.n = (uint32_t)strlen(text);
  v.name = "PK";
  v.name_len = 2;
  return ddb_item_from_avs(&v, 1);
}

/* Feed the keys seq(0), seq(1), ... to a guard, as pages of a Scan of a
** table of `items` items (its description; no client, so no
** DescribeTable); the page at which it says "loop" (its message has
** want), or -1 within max pages. */
static int lek_run_pages(int tail, int cycle, int max, long long items,
                         int count, int filters, const char *want) {
  ddb_lek_guard g;
  ddb_error err;
  ddb_table_desc d;
  ddb_read rd;
  ddb_page pg;
  int i, at = -1;
  memset(&g, 0, sizeof(g));
  memset(&d, 0, sizeof(d));
  memset(&rd, 0, sizeof(rd));
  memset(&pg, 0, sizeof(pg));
  d.item_count = items;
  rd.table = "T";
  rd.desc = &d;
  rd.n_filters = filters;
  pg.count = count;
  pg.scanned = count ? count : filters;
  for(i = 0; i < max && at < 0; i++) {
    int n = i < tail || cycle == 0 ? i : tail + (i - tail) % cycle;
    pg.last_key = lek_key(n);
    if(ddb_lek_next(&g, NULL, &rd, &pg, &err) != DDB_OK) {
      at = i;
      CHECK_MSG(strstr(err.message, want) != NULL, "%s", err.message);
    }
    ddb_item_unref(pg.last_key);
  }
  ddb_lek_guard_free(&g);
  return at;
}

static int lek_run_items(int tail, int cycle, int max, long long items,
                         const char *want) {
  return lek_run_pages(tail, cycle, max, items, 0, 0, want);
}

static int lek_run(int tail, int cycle, int max) {
  return lek_run_items(tail, cycle, max, 100000, "go round in a circle");
}

/* A server whose LastEvaluatedKeys go round in a circle is caught within
** 4 x (the pages before the circle + the circle's); distinct keys never
** are. */
static void test_lek_guard(void) {
  int tail, cycle;
  ddb_lek_guard g;
  CHECK_INT(lek_run(0, 0, 5000), -1);
  for(tail = 0; tail < 20; tail += 7)
    for(cycle = 1; cycle <= 40; cycle += 13) {
      int at = lek_run(tail, cycle, 5000);
      CHECK(at > 0);
      CHECK(at <= 4 * (tail + cycle) + 4);
    }
  /* the end of a read (no key) is no loop */
  memset(&g, 0, sizeof(g));
  {
    ddb_read rd;
    ddb_page pg;
    memset(&rd, 0, sizeof(rd));
    memset(&pg, 0, sizeof(pg));
    rd.table = "T";
    CHECK_INT(ddb_lek_next(&g, NULL, &rd, &pg, NULL), DDB_OK);
  }
  ddb_lek_guard_free(&g);
}

/* Fresh keys for ever: a read ends on at most 1000 + 2 x ItemCount idle
** pages (no item read, or none returned with no filter; the table's
** description, as DescribeTable would tell it), and 100,000 + 2 x
** ItemCount pages in all, then fails; a table of unknown size stops at
** the first bound. */
static void test_lek_bound(void) {
  CHECK_INT(lek_run_items(0, 0, 5000, 100, "with no item read"), 1200);
  CHECK_INT(lek_run_items(0, 0, 5000, 0, "more than the table's 0 items"),
            1000);
  CHECK_INT(lek_run_items(0, 0, 5000, -1, "is not known"), 1000);
  CHECK_INT(lek_run_items(0, 0, 5000, 2000, ""), -1);
  /* pages that read items (a filter dropped them all), or brought some */
  CHECK_INT(lek_run_pages(0, 0, 5000, 0, 0, 1, ""), -1);
  CHECK_INT(lek_run_pages(0, 0, 5000, 0, 3, 0, ""), -1);
  CHECK_INT(lek_run_pages(0, 0, 200000, 10, 0, 1,
                          "100021 pages ended on a LastEvaluatedKey, more "
                          "than the table's 10 items"),
            100020);
  /* with no filter, a page that brings nothing is idle, whatever it says
  ** it read */
  CHECK_INT(lek_run_pages(0, 0, 5000, 0, 0, 0, "with no item read"), 1000);
}

/* The item of typed JSON text (a new reference; NULL when it is none). */
static ddb_item *typed(const char *text) {
  ddb_item *it = NULL;
  ddb_error err;
  if(ddb_item_from_typed_json(text, strlen(text), &it, &err) != DDB_OK)
    return NULL;
  return it;
}

/* Run ddb_lek_check on r with a page whose LastEvaluatedKey is the typed
** JSON key (start: the request's ExclusiveStartKey, or NULL); the message
** ("" when it passed). */
static const char *lek_verdict(ddb_read *r, const char *start, const char *key,
                               ddb_error *err) {
  ddb_page pg;
  ddb_item *s = start ? typed(start) : NULL;
  ddb_result rc;
  memset(&pg, 0, sizeof(pg));
  pg.last_key = typed(key);
  r->start = s;
  ddb_error_clear(err);
  rc = ddb_lek_check(r, &pg, err);
  ddb_item_unref(pg.last_key);
  ddb_item_unref(s);
  r->start = NULL;
  return rc == DDB_OK ? "" : err->message;
}

/* The rules a correct server's LastEvaluatedKeys keep (read.c): the key
** shape of what is read, a Query's partition, its sort key's order (by
** bytes, by value for numbers) and its key condition. */
static void test_lek_rules(void) {
  ddb_index ix[2];
  ddb_table_desc d;
  ddb_read r;
  ddb_error err;
  memset(ix, 0, sizeof(ix));
  memset(&d, 0, sizeof(d));
  memset(&r, 0, sizeof(r));
  ix[0].pk.name = "PK";
  ix[0].pk.type = DDB_S;
  ix[0].sk.name = "SK";
  ix[0].sk.type = DDB_S;
  ix[1].name = "G";
  ix[1].pk.name = "GPK";
  ix[1].pk.type = DDB_B;
  ix[1].sk.name = "GSK";
  ix[1].sk.type = DDB_N;
  d.name = "T";
  d.n_indexes = 2;
  d.indexes = ix;
  r.table = "T";
  r.desc = &d;

  /* a Scan of the table: its key, exactly */
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"}}", &err),
            "");
  CHECK_STR(lek_verdict(&r, NULL, "{\"PK\":{\"S\":\"a\"}}", &err),
            "Scan of 'T': the answer's LastEvaluatedKey is no key (it lacks "
            "'SK')");
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"PK\":{\"S\":\"a\"},\"SK\":{\"N\":\"1\"}}", &err),
            "Scan of 'T': the answer's LastEvaluatedKey is no key ('SK' is N, "
            "the key's is S)");
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"},"
                        "\"v\":{\"S\":\"\\u001b[2J\"}}",
                        &err),
            "Scan of 'T': the answer's LastEvaluatedKey is no key ('v' is no "
            "key attribute)");
  /* an index: its key and the table's */
  r.index = "G";
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"GPK\":{\"B\":\"AA==\"},\"GSK\":{\"N\":\"1\"},"
                        "\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"}}",
                        &err),
            "");
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"GPK\":{\"B\":\"AA==\"},\"GSK\":{\"N\":\"1\"}}",
                        &err),
            "Scan of 'T' (index 'G'): the answer's LastEvaluatedKey is no key "
            "(it lacks 'PK')");

  /* a Query of the index: its partition, its sort key (N: by value) not
  ** going back; equal sort keys are allowed on an index */
  r.pk_name = "GPK";
  r.pk.type = DDB_B;
  r.pk.text = "AA==";
  r.pk.n = 4;
#define GKEY(g, n)                                                            \
  "{\"GPK\":{\"B\":\"" g "\"},\"GSK\":{\"N\":\"" n                            \
  "\"},\"PK\":{\"S\":\"a\"},"                                                 \
  "\"SK\":{\"S\":\"b\"}}"
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "9"), GKEY("AA==", "10"), &err), "");
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "10"), GKEY("AA==", "10.0"), &err),
            "");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "10"), GKEY("AA==", "9.99"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not past the ExclusiveStartKey's)");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "-1"), GKEY("AA==", "-10"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not past the ExclusiveStartKey's)");
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "-10"), GKEY("AA==", "1E-130"), &err),
            "");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "1E+125"), GKEY("AA==", "2E+124"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not past the ExclusiveStartKey's)");
  CHECK_STR(lek_verdict(&r, NULL, GKEY("AQ==", "1"), &err),
            "Query of 'T' (index 'G'): the answer's LastEvaluatedKey is in "
            "another partition than the Query's ('GPK')");
  r.descending = 1;
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "10"), GKEY("AA==", "9.99"), &err),
            "");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "9"), GKEY("AA==", "10"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not below the ExclusiveStartKey's)");
  r.descending = 0;
  /* the key condition: GSK BETWEEN 5 AND 50 */
  r.sk_name = "GSK";
  r.sk_op = DDB_SK_BETWEEN;
  r.sk[0].type = r.sk[1].type = DDB_N;
  r.sk[0].text = "5";
  r.sk[0].n = 1;
  r.sk[1].text = "5E1";
  r.sk[1].n = 3;
  CHECK_STR(lek_verdict(&r, NULL, GKEY("AA==", "50"), &err), "");
  CHECK_STR(
      lek_verdict(&r, NULL, GKEY("AA==", "50.5"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey is outside "
      "the key condition on 'GSK'");
#undef GKEY

  /* a Query of the table: sort keys are unique, so strictly forward (S and
  ** B by unsigned bytes) */
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.desc = &d;
  r.pk_name = "PK";
  r.pk.type = DDB_S;
  r.pk.text = "p";
  r.pk.n = 1;
#define KEY(sk) "{\"PK\":{\"S\":\"p\"},\"SK\":{\"S\":\"" sk "\"}}"
  CHECK_STR(lek_verdict(&r, KEY("a"), KEY("ab"), &err), "");
  CHECK_STR(lek_verdict(&r, KEY("z"), KEY("\\u00e9"), &err), "");
  CHECK_STR(lek_verdict(&r, KEY("ab"), KEY("ab"), &err),
            "Query of 'T': the answer's LastEvaluatedKey goes back (its 'SK' "
            "is not past the ExclusiveStartKey's)");
  CHECK_STR(lek_verdict(&r, KEY("ab"), KEY("a"), &err),
            "Query of 'T': the answer's LastEvaluatedKey goes back (its 'SK' "
            "is not past the ExclusiveStartKey's)");
  r.sk_name = "SK";
  r.sk_op = DDB_SK_BEGINS_WITH;
  r.sk[0].type = DDB_S;
  r.sk[0].text = "ORDER#";
  r.sk[0].n = 6;
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER#1"), &err), "");
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER"), &err),
            "Query of 'T': the answer's LastEvaluatedKey is outside the key "
            "condition on 'SK'");
  r.sk_op = DDB_SK_LT;
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER"), &err), "");
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER#"), &err),
            "Query of 'T': the answer's LastEvaluatedKey is outside the key "
            "condition on 'SK'");
  /* no filter: a page with items ends on its last item's key */
  r.sk_op = DDB_SK_NONE;
  {
    ddb_page pg;
    ddb_item *items[2];
    memset(&pg, 0, sizeof(pg));
    items[0] = typed(KEY("a"));
    items[1] = typed("{\"PK\":{\"S\":\"p\"},\"SK\":{\"S\":\"b\"},"
                     "\"v\":{\"N\":\"1\"}}");
    pg.items = items;
    pg.n_items = 2;
    pg.count = 2;
    pg.last_key = typed(KEY("b"));
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_OK);
    ddb_item_unref(pg.last_key);
    pg.last_key = typed(KEY("c"));
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_ERR_PARSE);
    CHECK_STR(err.message, "Query of 'T': the answer's LastEvaluatedKey is "
                           "not the key of its last item (with no filter, "
                           "the read stopped there)");
    /* with a filter, or items without their key, it may be another */
    r.n_filters = 1;
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_OK);
    r.n_filters = 0;
    ddb_item_unref(items[1]);
    items[1] = typed("{\"v\":{\"N\":\"1\"}}");
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_OK);
    ddb_item_unref(pg.last_key);
    ddb_item_unref(items[0]);
    ddb_item_unref(items[1]);
  }
  /* no description: the partition and, with a condition, the sort key */
  r.desc = NULL;
  CHECK_STR(lek_verdict(&r, NULL, "{\"PK\":{\"S\":\"q\"}}", &err),
            "Query of 'T': the answer's LastEvaluatedKey is in another "
            "partition than the Query's ('PK')");
  CHECK_STR(lek_verdict(&r, NULL, "{\"PK\":{\"S\":\"p\"},\"x\":{\"S\":\"q\"}}",
                        &err),
            "");
#undef KEY
}

/* Text a terminal shows as it is: control characters, C1, bidi controls
** and bytes that are no UTF-8 escaped, whole characters only. */
static void test_text_safe(void) {
  char out[64];
  CHECK_INT(
      (int)ddb_text_safe(out, sizeof(out), "plain \xc3\xa9t\xc3\xa9", 11), 11);
  CHECK_STR(out, "plain \xc3\xa9t\xc3\xa9");
  ddb_text_safe(out, sizeof(out), "a\x1b[2J\rb\x07\x7f", 9);
  CHECK_STR(out, "a\\x1b[2J\\x0db\\x07\\x7f");
  ddb_text_safe(out, sizeof(out), "\xc2\x9b|\xe2\x80\xae|\xe2\x81\xa6", 10);
  CHECK_STR(out, "\\u009b|\\u202e|\\u2066");
  /* no UTF-8: a lone continuation byte, an overlong form, a surrogate, a
  ** sequence cut short */
  ddb_text_safe(out, sizeof(out), "\x80\xc0\xaf\xed\xa0\x80\xe2\x82", 8);
  CHECK_STR(out, "\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");
  /* cut before an escape that does not fit */
  CHECK_INT((int)ddb_text_safe(out, 6, "ab\x1b", 3), 2);
  CHECK_STR(out, "ab");
  CHECK_INT((int)ddb_text_cut("ab\xc3\xa9", 4, 3), 2);
  CHECK_INT((int)ddb_text_cut("ab\xc3\xa9", 4, 4), 4);
}

/* DynamoDB's error text enters the client cut to 300 bytes and escaped;
** every message (ddb_error_set) is terminal-safe. */
static void test_service_error_text(void) {
  ddb_buf b;
  ddb_error err;
  int i;
  ddb_buf_init(&b, 1 << 20);
  ddb_buf_adds(&b, "{\"__type\":\"com.amazon#Bad\\u001b]0;x\\u0007Type\","
                   "\"message\":\"m\\u001b[31m\\r");
  for(i = 0; i < 100000; i++)
    ddb_buf_addc(&b, 'x');
  ddb_buf_adds(&b, "\"}");
  ddb_error_from_response(b.p, b.len, 400, &err);
  CHECK(strlen(err.message) < 400);
  CHECK(strstr(err.message, "Bad\\x1b]0;x\\x07Type: m\\x1b[31m\\x0dxxx") ==
        err.message);
  CHECK(strcmp(err.message + strlen(err.message) - 4, "x...") == 0);
  CHECK_STR(err.type, "Bad\\x1b]0;x\\x07Type");
  for(i = 0; err.message[i]; i++)
    CHECK((unsigned char)err.message[i] >= 0x20);
  ddb_error_set(&err, DDB_ERR_PARSE, "attribute '%s'", "\x1b[2J\xff");
  CHECK_STR(err.message, "attribute '\\x1b[2J\\xff'");
  /* escapes that make a message too long keep its start and its end */
  ddb_buf_reset(&b);
  for(i = 0; i < 300; i++)
    ddb_buf_addc(&b, (char)0x85);
  ddb_error_set(&err, DDB_ERR_PARSE, "attribute '%s': duplicate name", b.p);
  CHECK(strlen(err.message) < sizeof(err.message));
  CHECK(strncmp(err.message, "attribute '\\x85\\x85", 19) == 0);
  CHECK(strstr(err.message, "...") != NULL);
  {
    const char *end = "\\x85\\x85': duplicate name";
    CHECK(strcmp(err.message + strlen(err.message) - strlen(end), end) == 0);
  }
  ddb_buf_free(&b);
}

const tap_test tap_request_tests[] = {
    {"client: read body, Query sort-key operators", test_read_body_query_ops},
    {"client: read body, Query options", test_read_body_query_options},
    {"client: read body, Scan", test_read_body_scan},
    {"client: read body, attribute names via placeholders",
     test_read_body_names},
    {"client: read body, errors", test_read_body_errors},
    {"client: ddb_ini_get", test_ini_get},
    {"client: settings, region", test_settings_region},
    {"client: settings, endpoint", test_settings_endpoint},
    {"client: settings, credentials", test_settings_credentials},
    {"client: a LastEvaluatedKey loop is caught (Brent)", test_lek_guard},
    {"client: fresh LastEvaluatedKeys for ever end past 1000 idle (100,000) + "
     "2 x "
     "ItemCount pages",
     test_lek_bound},
    {"client: a LastEvaluatedKey keeps the key shape, partition, order and "
     "key condition",
     test_lek_rules},
    {"client: text safe for a terminal", test_text_safe},
    {"client: a server's error text is cut and escaped",
     test_service_error_text},
    {NULL, NULL}};
