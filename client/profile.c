/*
** profile.c -- the AWS shared config and credentials files: where they
** are (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, ~/.aws/) and what a
** profile says in them (INI sections, nested sub-properties).
**
** A leaf: config.c (region, endpoint, CA bundle) and creds.c (the
** credential chain) both read profiles through it, and it calls neither.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

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

/* See ddb_client_int.h: the value of environment variable name, or NULL
** when unset or empty. */
const char *ddb_env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}
