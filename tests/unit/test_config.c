/*
** test_config.c -- unit tests of where a client connects (client/config.c,
** endpoint.c): the endpoint from the services section of the config file,
** DynamoDB Streams' endpoint, the CA bundle, and the endpoint parsed once
** (the URL curl gets, the Host and canonical URI that are signed).
** Every test saves and restores the environment it touches
** (creds_fixtures.h).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "creds_fixtures.h"
#include "tap.h"

/* The endpoint from the services section and its precedence. */
static void test_services_endpoint(void) {
  sandbox s;
  ddb_config cfg;
  ddb_settings st;
  ddb_error e;
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  put_file(s.config, "[default]\nregion = eu-west-1\nservices = local\n"
                     "endpoint_url = http://global:1\n"
                     "[profile plain]\nregion = eu-west-1\n"
                     "endpoint_url = http://global:2/\n"
                     "[profile ign]\nregion = eu-west-1\nservices = local\n"
                     "ignore_configured_endpoint_urls = true\n"
                     "[services local]\n"
                     "s3 =\n  endpoint_url = http://s3:1\n"
                     "dynamodb =\n  region = nope\n"
                     "  endpoint_url = http://ddb:8000\n"
                     "endpoint_url = http://not-nested:1\n");
  memset(&cfg, 0, sizeof(cfg));
  ddb_error_clear(&e);
  /* the services section's dynamodb entry */
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "http://ddb:8000");
  ddb_settings_free(&st);
  /* AWS_ENDPOINT_URL beats the config file */
  setenv("AWS_ENDPOINT_URL", "http://env:1", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "http://env:1");
  ddb_settings_free(&st);
  /* ... unless configured endpoints are ignored */
  setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "https://dynamodb.eu-west-1.amazonaws.com");
  ddb_settings_free(&st);
  unsetenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");
  unsetenv("AWS_ENDPOINT_URL");
  /* the profile's endpoint_url when there is no services entry */
  put_file(s.creds, "[plain]\naws_access_key_id = A\n"
                    "aws_secret_access_key = B\n"
                    "[ign]\naws_access_key_id = A\n"
                    "aws_secret_access_key = B\n");
  cfg.profile = "plain";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "http://global:2");
  ddb_settings_free(&st);
  cfg.profile = "ign";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "https://dynamodb.eu-west-1.amazonaws.com");
  ddb_settings_free(&st);
  /* the option always wins */
  cfg.endpoint = "https://opt.example";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.endpoint, "https://opt.example");
  ddb_settings_free(&st);
  /* nested keys are read where they belong */
  CHECK(ddb_ini_get(s.config, "services local", "region") == NULL);
  {
    char *v = ddb_ini_get(s.config, "services local", "endpoint_url");
    CHECK_STR(v, "http://not-nested:1");
    free(v);
    v = ddb_ini_get_sub(s.config, "services local", "s3", "endpoint_url");
    CHECK_STR(v, "http://s3:1");
    free(v);
  }
  sandbox_close(&s);
}

/* DynamoDB Streams' endpoint (config.c's resolve_streams): AWS's own
** beside AWS's DynamoDB; DynamoDB's when that is configured (DynamoDB
** Local serves both); botocore's configured endpoint of "DynamoDB Streams"
** (AWS_ENDPOINT_URL_DYNAMODB_STREAMS, a services entry dynamodb_streams)
** first. */
static void test_streams_endpoint(void) {
  sandbox s;
  ddb_config cfg;
  ddb_settings st;
  ddb_error e;
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  put_file(s.config, "[default]\nregion = eu-west-1\n"
                     "[profile svc]\nregion = eu-west-1\nservices = local\n"
                     "[services local]\n"
                     "dynamodb_streams =\n  endpoint_url = http://st:1\n");
  put_file(s.creds, "[svc]\naws_access_key_id = A\n"
                    "aws_secret_access_key = B\n");
  memset(&cfg, 0, sizeof(cfg));
  ddb_error_clear(&e);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url,
            "https://streams.dynamodb.eu-west-1.amazonaws.com/");
  CHECK_STR(st.streams_ep.host, "streams.dynamodb.eu-west-1.amazonaws.com");
  ddb_settings_free(&st);
  setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:8000", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://127.0.0.1:8000/");
  ddb_settings_free(&st);
  cfg.endpoint = "http://127.0.0.1:9000";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://127.0.0.1:9000/");
  ddb_settings_free(&st);
  setenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", "http://127.0.0.1:7000", 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://127.0.0.1:7000/");
  CHECK_STR(st.ep.url, "http://127.0.0.1:9000/");
  ddb_settings_free(&st);
  unsetenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS");
  unsetenv("AWS_ENDPOINT_URL_DYNAMODB");
  cfg.endpoint = NULL;
  cfg.profile = "svc";
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.streams_ep.url, "http://st:1/");
  CHECK_STR(st.ep.url, "https://dynamodb.eu-west-1.amazonaws.com/");
  ddb_settings_free(&st);
  sandbox_close(&s);
}

/* ca_bundle from the config file, AWS_CA_BUNDLE and the option. */
static void test_ca_bundle(void) {
  sandbox s;
  ddb_config cfg;
  ddb_settings st;
  ddb_error e;
  char pem[160], txt[256];
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  setenv("AWS_REGION", "us-east-1", 1);
  memset(&cfg, 0, sizeof(cfg));
  ddb_error_clear(&e);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK(st.ca_bundle == NULL);
  ddb_settings_free(&st);
  /* the config file, then AWS_CA_BUNDLE, then the option */
  snprintf(txt, sizeof(txt), "[default]\nca_bundle = %s\n", s.tokfile);
  put_file(s.config, txt);
  put_file(s.tokfile, "pem");
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.ca_bundle, s.tokfile);
  ddb_settings_free(&st);
  setenv("AWS_CA_BUNDLE", s.creds, 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_OK);
  CHECK_STR(st.ca_bundle, s.creds);
  ddb_settings_free(&st);
  snprintf(pem, sizeof(pem), "%s/none.pem", s.dir);
  cfg.ca_bundle = pem;
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_ERR_CONFIG);
  snprintf(txt, sizeof(txt),
           "ca_bundle '%s': cannot read: No such file or directory", pem);
  CHECK_STR(e.message, txt);
  cfg.ca_bundle = NULL;
  setenv("AWS_CA_BUNDLE", pem, 1);
  CHECK_INT(ddb_settings_resolve(&cfg, &st, &e), DDB_ERR_CONFIG);
  CHECK(strncmp(e.message, "AWS_CA_BUNDLE '", 15) == 0);
  sandbox_close(&s);
}

/* The endpoint parsed once (config.c, ddb_endpoint_parse): the URL curl
** gets, the Host header and canonical URI that are signed, the canonical
** endpoint of the cache's place, all from one parse by libcurl; and what
** is refused, with its message. */
static void test_endpoint(void) {
  static const struct {
    const char *text;
    const char *url, *host, *sign_path, *canonical;
  } ok[] = {
      {"http://127.0.0.1:8000", "http://127.0.0.1:8000/", "127.0.0.1:8000",
       "/", "http://127.0.0.1:8000"},
      {"https://dynamodb.us-east-1.amazonaws.com",
       "https://dynamodb.us-east-1.amazonaws.com/",
       "dynamodb.us-east-1.amazonaws.com", "/",
       "https://dynamodb.us-east-1.amazonaws.com"},
      {"https://DynamoDB.EU-West-1.AmazonAWS.com:8443",
       "https://DynamoDB.EU-West-1.AmazonAWS.com:8443/",
       "dynamodb.eu-west-1.amazonaws.com:8443", "/",
       "https://dynamodb.eu-west-1.amazonaws.com:8443"},
      /* the scheme in any case; localhost, LOCALHOST. and 127.0.0.1 one
      ** place (the Host header keeps the name) */
      {"HTTP://LOCALHOST.:8000/", "http://LOCALHOST.:8000/", "localhost.:8000",
       "/", "http://127.0.0.1:8000"},
      {"HtTpS://h", "https://h/", "h", "/", "https://h"},
      /* the scheme's default port is none; another scheme's is a port */
      {"http://localhost:80", "http://localhost:80/", "localhost", "/",
       "http://127.0.0.1"},
      {"https://h:443", "https://h:443/", "h", "/", "https://h"},
      {"http://h:443", "http://h:443/", "h:443", "/", "http://h:443"},
      {"https://h:80", "https://h:80/", "h:80", "/", "https://h:80"},
      {"http://h:080", "http://h:80/", "h", "/", "http://h"},
      {"http://h:", "http://h/", "h", "/", "http://h"},
      /* IPv6 literals, in lower case */
      {"http://[::1]:8000", "http://[::1]:8000/", "[::1]:8000", "/",
       "http://[::1]:8000"},
      {"http://[::FFFF:7F00:1]", "http://[::FFFF:7F00:1]/", "[::ffff:7f00:1]",
       "/", "http://[::ffff:7f00:1]"},
      /* a path: signed with "/" after it, kept without trailing slashes;
      ** dot segments removed as curl removes them */
      {"http://h:1/ddb/v1", "http://h:1/ddb/v1/", "h:1", "/ddb/v1/",
       "http://h:1/ddb/v1"},
      {"http://h/ddb//", "http://h/ddb/", "h", "/ddb/", "http://h/ddb"},
      {"http://h/a/../b/./c", "http://h/b/c/", "h", "/b/c/", "http://h/b/c"},
      {"http://h/a~b_c.d-e", "http://h/a~b_c.d-e/", "h", "/a~b_c.d-e/",
       "http://h/a~b_c.d-e"},
      /* a path's percent-encoding is sent as it is and signed encoded
      ** again, as SigV4 (and botocore) want for every service but S3 */
      {"http://h/%41", "http://h/%41/", "h", "/%2541/", "http://h/%41"},
      {"http://h/\xe1\x88\xb4", "http://h/\xe1\x88\xb4/", "h", "/%E1%88%B4/",
       "http://h/\xe1\x88\xb4"},
      /* a percent-encoded host is the host it decodes to, everywhere */
      {"http://local%68ost:8000", "http://localhost:8000/", "localhost:8000",
       "/", "http://127.0.0.1:8000"},
      /* IPv4 in other notations: the dotted address curl connects to */
      {"http://127.1:8000", "http://127.0.0.1:8000/", "127.0.0.1:8000", "/",
       "http://127.0.0.1:8000"},
      {"http://0x7f.0.0.1", "http://127.0.0.1/", "127.0.0.1", "/",
       "http://127.0.0.1"},
  };
  static const struct {
    const char *text;
    const char *message;
  } bad[] = {
      {"ftp://h", "bad endpoint 'ftp://h': must start with http:// or "
                  "https://"},
      {"h:8000", "bad endpoint 'h:8000': must start with http:// or https://"},
      {"http:/h", "bad endpoint 'http:/h': must start with http:// or "
                  "https://"},
      {"http://", "bad endpoint 'http://': no host"},
      {"http:///x", "bad endpoint 'http:///x': no host"},
      {"http://u@h", "bad endpoint: a user name or password in the URL is "
                     "not allowed"},
      {"http://127.0.0.1:1@h/", "bad endpoint: a user name or password in "
                                "the URL is not allowed"},
      {"ftp://u:secret@h", "bad endpoint: a user name or password in the URL "
                           "is not allowed"},
      {"http://h?x=1", "bad endpoint 'http://h?x=1': a query ('?...') is not "
                       "allowed: requests go to the endpoint's path"},
      {"http://h/x?", "bad endpoint 'http://h/x?': a query ('?...') is not "
                      "allowed: requests go to the endpoint's path"},
      {"http://h#f", "bad endpoint 'http://h#f': a fragment ('#...') is not "
                     "allowed"},
      {"http://h/x#", "bad endpoint 'http://h/x#': a fragment ('#...') is not "
                      "allowed"},
      {"http://h:8x0", "bad endpoint 'http://h:8x0': bad port (a number from "
                       "0 to 65535 after the host)"},
      {"http://h:1:", "bad endpoint 'http://h:1:': bad port (a number from 0 "
                      "to 65535 after the host)"},
      {"http://h:65536", "bad endpoint 'http://h:65536': bad port (a number "
                         "from 0 to 65535 after the host)"},
      {"http://[::1]x", "bad endpoint 'http://[::1]x': bad port (a number "
                        "from 0 to 65535 after the host)"},
      {"http://a b", "bad endpoint 'http://a b': bad host name (a blank, a "
                     "control character or a character no host name has)"},
      {"http://\x01h", "bad endpoint 'http://\\x01h': bad host name (a "
                       "blank, a control character or a character no host "
                       "name has)"},
      {"http://h%2Fx", "bad endpoint 'http://h%2Fx': bad host name (a blank, "
                       "a control character or a character no host name "
                       "has)"},
      {"http://h%20x", "bad endpoint 'http://h%20x': bad host name (a blank, "
                       "a control character or a character no host name "
                       "has)"},
      {"http://[v1.x]", "bad endpoint 'http://[v1.x]': bad IPv6 address"},
      {"http://h/a b", "bad endpoint 'http://h/a b': bad path (a blank or a "
                       "control character)"},
      {"http://[fe80::1%25eth0]:8000",
       "bad endpoint 'http://[fe80::1%25eth0]:8000': an IPv6 zone id "
       "('%25eth0') is not supported: give the address without it"},
      {"http://[::1%25lo]", "bad endpoint 'http://[::1%25lo]': an IPv6 zone "
                            "id ('%25lo') is not supported: give the address "
                            "without it"},
      {"http://b\xc3\xbc"
       "cher.de",
       "bad endpoint 'http://b\xc3\xbc"
       "cher.de': the host name must be ASCII (for an international name, "
       "its xn-- form)"},
  };
  ddb_endpoint ep;
  ddb_error err;
  size_t i;
  char longhost[400];
  for(i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    memset(&err, 0, sizeof(err));
    if(!CHECK(ddb_endpoint_parse(ok[i].text, "", &ep, &err) == DDB_OK)) {
      tap_diag("%s: %s", ok[i].text, err.message);
      continue;
    }
    if(!CHECK_STR(ep.url, ok[i].url) || !CHECK_STR(ep.host, ok[i].host) ||
       !CHECK_STR(ep.sign_path, ok[i].sign_path) ||
       !CHECK_STR(ep.canonical, ok[i].canonical))
      tap_diag("%s", ok[i].text);
    ddb_endpoint_free(&ep);
  }
  for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    memset(&err, 0, sizeof(err));
    if(!CHECK(ddb_endpoint_parse(bad[i].text, "", &ep, &err) ==
              DDB_ERR_CONFIG))
      tap_diag("%s", bad[i].text);
    if(!CHECK_STR(err.message, bad[i].message))
      tap_diag("%s", bad[i].text);
    CHECK(ep.url == NULL && ep.host == NULL);
  }
  /* where it came from is named */
  CHECK_INT(ddb_endpoint_parse("http://h?x", " (AWS_ENDPOINT_URL)", &ep, &err),
            DDB_ERR_CONFIG);
  CHECK_STR(err.message, "bad endpoint 'http://h?x' (AWS_ENDPOINT_URL): a "
                         "query ('?...') is not allowed: requests go to the "
                         "endpoint's path");
  /* too long for what is signed */
  memset(longhost, 'a', sizeof(longhost));
  memcpy(longhost, "http://", 7);
  longhost[sizeof(longhost) - 1] = 0;
  CHECK_INT(ddb_endpoint_parse(longhost, "", &ep, &err), DDB_ERR_CONFIG);
  CHECK(strstr(err.message, "': host too long") != NULL);
}

const tap_test tap_config_tests[] = {
    {"config: endpoint from the services section", test_services_endpoint},
    {"config: DynamoDB Streams' endpoint", test_streams_endpoint},
    {"config: CA bundle", test_ca_bundle},
    {"sigv4: the endpoint parsed once: URL, Host, canonical URI, place",
     test_endpoint},
    {NULL, NULL}};
