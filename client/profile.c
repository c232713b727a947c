/*
** profile.c -- the AWS shared config and credentials files: where they
** are (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, ~/.aws/) and what a
** profile says in them, read as botocore reads them (Python's
** configparser.RawConfigParser, then botocore's configloader):
**
**   * key names are case-insensitive (lower-cased); a key line is split at
**     its first '=' or ':'; name and value are trimmed; lines have no
**     length limit (a file has one: PROFILE_FILE_MAX);
**   * a line indented deeper than the key line above it continues that
**     key's value (joined with '\n'); a value that starts on the next line
**     ("key =" and indented "sub = value" lines) holds sub-properties;
**   * '#' and ';' start comment lines only (never inside a value's line);
**     line ends are \n, \r\n or \r;
**   * [DEFAULT] is not a section: its keys are every section's defaults;
**   * a duplicate section, a duplicate key in one section, a key line
**     without '=' or ':' (or without a name), a line before the first
**     section (a UTF-8 byte-order mark included) and a sub-property line
**     without '=' make the whole file unreadable: an error naming the file
**     and the line, as the aws CLI refuses it;
**   * the config file's profiles are [default] and [profile NAME] (NAME
**     split as a shell word: [profile "my name"]; the last such section
**     of a name wins); the credentials file's are [NAME], exactly;
**   * a profile exists when either file has it; its settings are the
**     config file's, each overridden by the credentials file's (botocore's
**     full_config); its keys are taken together from one file
**     (ddb_profile_keys).
**
** The files are read whole (open/read, never stdio, whose buffers would
** keep a copy) into memory that is wiped when freed, as are all values.
**
** A leaf: config.c (region, endpoint, CA bundle) and creds.c (the
** credential chain) both read profiles through it, and it calls neither.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddb_client_int.h"
#include "sigv4.h"

/* The largest config or credentials file read. */
#define PROFILE_FILE_MAX (4 << 20)

/* One key of a section: its name lower-cased, its value (lines joined
** with '\n'), the line it starts on. */
typedef struct ini_kv {
  char *key;
  char *value; /* wiped when freed */
  int line;
} ini_kv;

/* One section of an INI file, its keys in file order. */
typedef struct ddb_ini_sec {
  char *name;
  ini_kv *kv;
  int n, cap;
} ini_sec;

/* A parsed file: its sections in file order, and [DEFAULT]. */
struct ddb_ini {
  ini_sec *sec;
  int n, cap;
  ini_sec defaults;
};

/* The value of environment variable name, or NULL when unset or empty. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

/* Is c white space as Python's str.strip() sees it (ASCII)? */
static int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' ||
         c == '\n' || (c >= 0x1c && c <= 0x1f);
}

/* s[0..*n) without leading and trailing white space: returns the start,
** *n the new length. */
static const char *strip(const char *s, size_t *n) {
  size_t e = *n;
  while(e > 0 && is_space(*s)) {
    s++;
    e--;
  }
  while(e > 0 && is_space(s[e - 1]))
    e--;
  *n = e;
  return s;
}

/* ------------------------------------------------------------------------
** Parsing
*/

/* Free what s holds (its values wiped) and zero it; s itself is not
** freed. */
static void sec_free(ini_sec *s) {
  int i;
  for(i = 0; i < s->n; i++) {
    free(s->kv[i].key);
    ddb_wipe_free(s->kv[i].value);
  }
  free(s->kv);
  free(s->name);
  memset(s, 0, sizeof(*s));
}

/* Free f (its values wiped); NULL is fine. */
void ddb_ini_free(ddb_ini *f) {
  int i;
  if(!f)
    return;
  for(i = 0; i < f->n; i++)
    sec_free(&f->sec[i]);
  free(f->sec);
  sec_free(&f->defaults);
  free(f);
}

/* The key named k in s, or NULL. */
static ini_kv *sec_find(const ini_sec *s, const char *k) {
  int i;
  for(i = 0; s && i < s->n; i++)
    if(strcmp(s->kv[i].key, k) == 0)
      return &s->kv[i];
  return NULL;
}

/* A value being gathered: its lines, joined at the end. */
typedef struct pending {
  ini_kv *kv;   /* the key whose value this is, or NULL */
  ddb_buf text; /* the lines so far, '\n' between them */
} pending;

/* Finish the value of p into its key: botocore's '\n'.join(lines).rstrip().
** Returns 0, or -1 out of memory. */
static int pending_end(pending *pv) {
  size_t n;
  int ok;
  if(!pv->kv)
    return 0;
  n = pv->text.len;
  while(n > 0 && is_space(pv->text.p[n - 1]))
    n--;
  ok = !pv->text.failed;
  pv->kv->value = ddb_strndup(pv->text.len ? pv->text.p : "", n);
  ok = ok && pv->kv->value;
  if(pv->text.p)
    ddb_wipe(pv->text.p, pv->text.len);
  ddb_buf_reset(&pv->text);
  pv->kv = NULL;
  return ok ? 0 : -1;
}

/* Add a key named name[0..n) (lower-cased) to s at line.  Returns it, or
** NULL out of memory. */
static ini_kv *sec_add(ini_sec *s, const char *name, size_t n, int line) {
  size_t i;
  if(s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 8;
    ini_kv *kv = realloc(s->kv, (size_t)cap * sizeof(*kv));
    if(!kv)
      return NULL;
    s->kv = kv;
    s->cap = cap;
  }
  s->kv[s->n].key = ddb_strndup(name, n);
  if(!s->kv[s->n].key)
    return NULL;
  for(i = 0; i < n; i++)
    if(s->kv[s->n].key[i] >= 'A' && s->kv[s->n].key[i] <= 'Z')
      s->kv[s->n].key[i] += 'a' - 'A';
  s->kv[s->n].value = NULL;
  s->kv[s->n].line = line;
  return &s->kv[s->n++];
}

/* Add section name[0..n) to f.  Returns it, or NULL out of memory. */
static ini_sec *ini_add(ddb_ini *f, const char *name, size_t n) {
  if(f->n == f->cap) {
    int cap = f->cap ? f->cap * 2 : 8;
    ini_sec *s = realloc(f->sec, (size_t)cap * sizeof(*s));
    if(!s)
      return NULL;
    f->sec = s;
    f->cap = cap;
  }
  memset(&f->sec[f->n], 0, sizeof(f->sec[0]));
  f->sec[f->n].name = ddb_strndup(name, n);
  return f->sec[f->n].name ? &f->sec[f->n++] : NULL;
}

/* The section of f named name, or NULL. */
static const ini_sec *ini_find(const ddb_ini *f, const char *name) {
  int i;
  for(i = 0; f && i < f->n; i++)
    if(strcmp(f->sec[i].name, name) == 0)
      return &f->sec[i];
  return NULL;
}

/* Does every non-blank line of the sub-properties v have an '='? */
static int nested_ok(const char *v) {
  while(*v) {
    size_t n = strcspn(v, "\n");
    const char *s = v;
    size_t m = n;
    s = strip(s, &m);
    if(m && !memchr(s, '=', m))
      return 0;
    v += n + (v[n] == '\n');
  }
  return 1;
}

/* The first key of s whose value holds a sub-property line without '=',
** or NULL. */
static const ini_kv *nested_bad(const ini_sec *s) {
  int i;
  for(i = 0; i < s->n; i++)
    if(s->kv[i].value[0] == '\n' && !nested_ok(s->kv[i].value))
      return &s->kv[i];
  return NULL;
}

/* The next line of text[0..len) from *pos: returns its start, *n its length
** without the line end ('\n', '\r' or "\r\n"); *pos moves past the end. */
static const char *next_line(const char *text, size_t len, size_t *pos,
                             size_t *n) {
  const char *l = text + *pos;
  size_t p = *pos, k = 0;
  while(p + k < len && l[k] != '\n' && l[k] != '\r')
    k++;
  p += k;
  if(p < len && text[p] == '\r' && p + 1 < len && text[p + 1] == '\n')
    p++;
  if(p < len)
    p++;
  *pos = p;
  *n = k;
  return l;
}

/* Is the stripped line v[0..vn) a section header "[NAME]" (up to its last
** ']', NAME not empty)?  Returns 1 with *hn the length of NAME at v + 1,
** else 0. */
static int header_name(const char *v, size_t vn, size_t *hn) {
  const char *d;
  if(*v != '[' || (d = memrchr(v, ']', vn)) == NULL || d <= v + 1)
    return 0;
  *hn = (size_t)(d - v - 1);
  return 1;
}

/* Open the section name[0..hn) of f at line as *cur: [DEFAULT] is
** f->defaults, any other name a new section.  Returns DDB_OK, or an error
** (a section already seen, out of memory) with *cur unchanged. */
static ddb_result section_open(ddb_ini *f, const char *name, size_t hn,
                               const char *what, int line, ini_sec **cur,
                               ddb_error *err) {
  ini_sec *s;
  int i;
  if(hn == 7 && memcmp(name, "DEFAULT", 7) == 0) {
    *cur = &f->defaults;
    return DDB_OK;
  }
  for(i = 0; i < f->n; i++)
    if(strlen(f->sec[i].name) == hn && memcmp(f->sec[i].name, name, hn) == 0)
      return ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s line %d: duplicate section [%.*s]", what, line,
                           (int)(hn > 100 ? 100 : hn), name);
  if(!(s = ini_add(f, name, hn)))
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  *cur = s;
  return DDB_OK;
}

/* The key line v[0..vn) of section cur at line: its key added to cur and
** made pv's, the value after '=' or ':' (stripped) its first line.
** Returns DDB_OK, or an error (no '=' or ':', no name, a key already in
** cur, out of memory); the key may have been added, its value unset. */
static ddb_result key_line(ddb_ini *f, ini_sec *cur, const char *v, size_t vn,
                           const char *what, int line, pending *pv,
                           ddb_error *err) {
  size_t k = 0, kn, valn;
  const char *val;
  int i;
  while(k < vn && v[k] != '=' && v[k] != ':')
    k++; /* the line is not NUL-terminated: no strcspn */
  if(k >= vn)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "%s line %d: a line without '=' or ':'", what, line);
  kn = k;
  strip(v, &kn);
  if(!kn)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "%s line %d: a key without a name", what, line);
  if(!(pv->kv = sec_add(cur, v, kn, line)))
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  for(i = 0; i < cur->n - 1; i++)
    if(strcmp(cur->kv[i].key, pv->kv->key) == 0)
      return ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s line %d: duplicate key '%.100s' in [%.100s]",
                           what, line, pv->kv->key,
                           cur == &f->defaults ? "DEFAULT" : cur->name);
  valn = vn - k - 1;
  val = strip(v + k + 1, &valn);
  if(ddb_buf_add(&pv->text, val, valn))
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
}

/* botocore reads every value that starts on the next line as
** sub-properties: one without '=' makes the file unreadable.  Returns
** DDB_OK, or an error naming the key and its line.  ([DEFAULT] is checked
** only when the file has another section, as before.) */
static ddb_result check_nested(const ddb_ini *f, const char *what,
                               ddb_error *err) {
  const ini_kv *bad;
  int i;
  for(i = 0; i < f->n; i++)
    if((bad = nested_bad(&f->sec[i])) != NULL ||
       (bad = nested_bad(&f->defaults)) != NULL)
      return ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s line %d: a sub-property of '%.100s' "
                           "without '='",
                           what, bad->line, bad->key);
  return DDB_OK;
}

/* After a failed parse: give every key of f that has no value yet (pv's
** among them) an empty one, so that ddb_ini_free frees them all. */
static void values_fill(ddb_ini *f, pending *pv) {
  int i, j;
  if(pv->kv && !pv->kv->value)
    pv->kv->value = ddb_strdup("");
  for(i = 0; i < f->n; i++)
    for(j = 0; j < f->sec[i].n; j++)
      if(!f->sec[i].kv[j].value)
        f->sec[i].kv[j].value = ddb_strdup("");
}

/* Parse text[0..len) into f, as RawConfigParser.read() does (see the top
** of the file): line by line, a comment, an empty line or a continuation
** of the pending value, else a section header or a key line.  Returns
** DDB_OK, or an error naming what (the file) and the line. */
static ddb_result ini_parse(const char *text, size_t len, const char *what,
                            ddb_ini *f, ddb_error *err) {
  ini_sec *cur = NULL;
  pending pv;
  size_t pos = 0, indent_level = 0;
  int line = 0;
  ddb_result result = DDB_OK;

  pv.kv = NULL;
  ddb_buf_init(&pv.text, PROFILE_FILE_MAX);
  /* room for any value at once: a realloc would leave a copy unwiped */
  if(len && ddb_buf_reserve(&pv.text, len))
    goto nomem;
  while(pos < len) {
    size_t n, vn, hn, indent = 0;
    const char *l = next_line(text, len, &pos, &n), *v;
    line++;
    vn = n;
    v = strip(l, &vn);
    if(vn && (*v == '#' || *v == ';'))
      continue; /* a comment: not even an empty line of a value */
    if(!vn) {
      if(pv.kv && ddb_buf_addc(&pv.text, '\n'))
        goto nomem;
      continue;
    }
    while(indent < n && is_space(l[indent]))
      indent++;
    if(cur && pv.kv && indent > indent_level) {
      /* a continuation line */
      if(ddb_buf_addc(&pv.text, '\n') || ddb_buf_add(&pv.text, v, vn))
        goto nomem;
      continue;
    }
    if(pending_end(&pv))
      goto nomem;
    indent_level = indent;
    if(header_name(v, vn, &hn))
      result = section_open(f, v + 1, hn, what, line, &cur, err);
    else if(!cur)
      result = ddb_error_set(
          err, DDB_ERR_CONFIG, "%s line %d: %s before the first [section]",
          what, line,
          line == 1 && n >= 3 && memcmp(l, "\xef\xbb\xbf", 3) == 0
              ? "a UTF-8 byte-order mark"
              : "a line");
    else
      result = key_line(f, cur, v, vn, what, line, &pv, err);
    if(result)
      goto fail;
  }
  if(pending_end(&pv))
    goto nomem;
  result = check_nested(f, what, err);
  if(result)
    goto fail;
  goto done;

nomem:
  result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
fail:
  values_fill(f, &pv);
done:
  if(pv.text.p)
    ddb_wipe(pv.text.p, pv.text.len);
  ddb_buf_free(&pv.text);
  return result;
}

/* See ddb_client_int.h: read and parse the file at path. */
ddb_result ddb_ini_load(const char *path, const char *what, ddb_ini **out,
                        ddb_error *err) {
  ddb_ini *f = calloc(1, sizeof(*f));
  struct stat st;
  char *text = NULL;
  size_t len = 0;
  int fd = -1;
  ddb_result result = DDB_OK;

  *out = NULL;
  if(!f)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  if(!path)
    goto done;
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if(fd < 0 && (errno == ENOENT || errno == ENOTDIR))
    goto done; /* no file: no profiles */
  if(fd < 0 || fstat(fd, &st)) {
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: cannot read: %s", what,
                           strerror(errno));
    goto fail;
  }
  if(!S_ISREG(st.st_mode))
    goto done; /* botocore: not a file, no profiles */
  if(st.st_size > PROFILE_FILE_MAX) {
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: larger than %d bytes",
                           what, PROFILE_FILE_MAX);
    goto fail;
  }
  text = malloc((size_t)st.st_size + 1);
  if(!text) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  while(len < (size_t)st.st_size) {
    ssize_t got = read(fd, text + len, (size_t)st.st_size - len);
    if(got < 0 && errno == EINTR)
      continue;
    if(got < 0) {
      result = ddb_error_set(err, DDB_ERR_CONFIG, "%s: cannot read: %s", what,
                             strerror(errno));
      goto fail;
    }
    if(got == 0)
      break;
    len += (size_t)got;
  }
  text[len] = 0; /* ini_parse reads text[0..len) only; a NUL as a guard */
  result = ini_parse(text, len, what, f, err);
  if(result)
    goto fail;
done:
  *out = f;
  f = NULL;
fail:
  if(fd >= 0)
    close(fd);
  if(text) {
    ddb_wipe(text, len);
    free(text);
  }
  ddb_ini_free(f);
  return result;
}

/* See ddb_client_int.h: key of [section] in f (with [DEFAULT]'s). */
const char *ddb_ini_value(const ddb_ini *f, const char *section,
                          const char *key) {
  const ini_sec *s = ini_find(f, section);
  const ini_kv *kv;
  if(!s)
    return NULL;
  kv = sec_find(s, key);
  if(!kv)
    kv = sec_find(&f->defaults, key);
  return kv ? kv->value : NULL;
}

/* The sub-property sub of the value v (its lines split at their first
** '='; names compared as written, as botocore's _parse_nested does).
** Returns a malloc'ed copy, or NULL. */
static char *nested_get(const char *v, const char *sub) {
  char *found = NULL;
  if(!v || v[0] != '\n')
    return NULL;
  while(*v) {
    size_t n = strcspn(v, "\n"), kn, vn;
    const char *eq = memchr(v, '=', n), *k, *val;
    if(eq) {
      kn = (size_t)(eq - v);
      k = strip(v, &kn);
      vn = n - (size_t)(eq - v) - 1;
      val = strip(eq + 1, &vn);
      if(kn == strlen(sub) && memcmp(k, sub, kn) == 0) {
        free(found); /* the last one wins, as in a dict */
        found = ddb_strndup(val, vn);
      }
    }
    v += n + (v[n] == '\n');
  }
  return found;
}

/* key of [section] in the file at path (malloc'ed), or NULL: for tests
** and tools; a file that does not parse has no keys. */
char *ddb_ini_get(const char *path, const char *section, const char *key) {
  ddb_ini *f;
  const char *v;
  char *r;
  if(ddb_ini_load(path, "file", &f, NULL))
    return NULL;
  v = ddb_ini_value(f, section, key);
  r = v ? ddb_strdup(v) : NULL;
  ddb_ini_free(f);
  return r;
}

/* Sub-property sub of key in [section] of path (malloc'ed), or NULL. */
char *ddb_ini_get_sub(const char *path, const char *section, const char *key,
                      const char *sub) {
  ddb_ini *f;
  char *r;
  if(ddb_ini_load(path, "file", &f, NULL))
    return NULL;
  r = nested_get(ddb_ini_value(f, section, key), sub);
  ddb_ini_free(f);
  return r;
}

/* ------------------------------------------------------------------------
** Profiles
*/

/* The path in variable var, else ~/.aws/name (malloc'ed); a leading "~/"
** is the home directory, as botocore expands it.  NULL without HOME or on
** out of memory. */
char *ddb_aws_file(const char *var, const char *name) {
  const char *v = env(var), *home = env("HOME");
  ddb_buf b;
  if(v && strncmp(v, "~/", 2) != 0)
    return ddb_strdup(v);
  if(!home)
    return v ? ddb_strdup(v) : NULL;
  ddb_buf_init(&b, 8192);
  if(v)
    ddb_buf_addf(&b, "%s%s", home, v + 1);
  else
    ddb_buf_addf(&b, "%s/.aws/%s", home, name);
  if(b.failed) {
    ddb_buf_free(&b);
    return NULL;
  }
  return ddb_buf_take(&b, NULL);
}

/* Split s as Python's shlex.split() (POSIX: whitespace between words,
** '...' literal, "..." with \" and \\, a backslash outside quotes escapes
** the next character) into at most 3 words of word[i] (each cap bytes).
** Returns the number of words (3: three or more), or -1 when the quotes
** do not close or a word is too long. */
static int shlex_split(const char *s, char word[][256], size_t cap) {
  int n = 0;
  while(*s) {
    size_t len = 0;
    int in_word = 0;
    while(*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
      s++;
    if(!*s)
      break;
    while(*s && !(*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
      char c = *s++;
      char q;
      in_word = 1;
      if(c == '\'' || c == '"') {
        q = c;
        while(*s && *s != q) {
          c = *s++;
          if(q == '"' && c == '\\' && (*s == '"' || *s == '\\'))
            c = *s++;
          if(n < 3 && len + 1 < cap)
            word[n][len++] = c;
          else if(n < 3)
            return -1;
        }
        if(!*s)
          return -1;
        s++;
        continue;
      }
      if(c == '\\') {
        if(!*s)
          return -1;
        c = *s++;
      }
      if(n < 3 && len + 1 < cap)
        word[n][len++] = c;
      else if(n < 3)
        return -1;
    }
    if(in_word) {
      if(n < 3)
        word[n][len] = 0;
      n++;
    }
  }
  return n > 3 ? 3 : n;
}

/* The config file's section of profile name, or of [services name] or
** [sso-session name] when prefix is "services" or "sso-session": the last
** section "PREFIX NAME" (botocore: its name starts with the first prefix
** of "profile", "sso-session", "services" it starts with and splits into
** two shell words, the second one name), or [default] for profile
** "default" (whichever of [default] and [profile default] comes last).
** NULL when none. */
static const ini_sec *config_section(const ddb_ini *f, const char *prefix,
                                     const char *name) {
  static const char *const kinds[] = {"profile", "sso-session", "services"};
  const ini_sec *found = NULL;
  char word[3][256];
  int i, k, is_profile = strcmp(prefix, "profile") == 0;
  for(i = 0; f && i < f->n; i++) {
    const char *sn = f->sec[i].name;
    for(k = 0; k < 3; k++)
      if(strncmp(sn, kinds[k], strlen(kinds[k])) == 0)
        break;
    if(k < 3) {
      if(strcmp(prefix, kinds[k]) == 0 &&
         shlex_split(sn, word, sizeof(word[0])) == 2 &&
         strcmp(word[1], name) == 0)
        found = &f->sec[i];
    } else if(is_profile && strcmp(sn, "default") == 0 &&
              strcmp(name, "default") == 0)
      found = &f->sec[i];
  }
  return found;
}

/* key of s, else of the file's [DEFAULT] (s NULL: none). */
static const ini_kv *sec_value(const ddb_ini *f, const ini_sec *s,
                               const char *key) {
  const ini_kv *kv;
  if(!s)
    return NULL;
  kv = sec_find(s, key);
  return kv ? kv : sec_find(&f->defaults, key);
}

/* See ddb_client_int.h: load both files and find the profile name. */
ddb_result ddb_profile_load(const char *name, int named, ddb_profile *p,
                            ddb_error *err) {
  ddb_result result;
  char what[1100];
  memset(p, 0, sizeof(*p));
  p->name = ddb_strdup(name);
  p->config_path = ddb_aws_file("AWS_CONFIG_FILE", "config");
  p->creds_path = ddb_aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
  if(!p->name) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  snprintf(what, sizeof(what), "the AWS config file '%.1000s'",
           p->config_path ? p->config_path : "");
  result = ddb_ini_load(p->config_path, what, &p->config, err);
  if(result)
    goto fail;
  snprintf(what, sizeof(what), "the AWS credentials file '%.1000s'",
           p->creds_path ? p->creds_path : "");
  result = ddb_ini_load(p->creds_path, what, &p->creds, err);
  if(result)
    goto fail;
  p->in_config = config_section(p->config, "profile", name);
  p->in_creds = ini_find(p->creds, name);
  if(named && !p->in_config && !p->in_creds) {
    result = ddb_error_set(
        err, DDB_ERR_CONFIG,
        "profile '%.200s' not found: neither the AWS config file "
        "'%.300s' nor the credentials file '%.300s' has it",
        name, p->config_path ? p->config_path : "(no HOME)",
        p->creds_path ? p->creds_path : "(no HOME)");
    goto fail;
  }
  return DDB_OK;

fail:
  ddb_profile_free(p);
  return result;
}

/* See ddb_client_int.h. */
void ddb_profile_free(ddb_profile *p) {
  free(p->name);
  free(p->config_path);
  free(p->creds_path);
  ddb_ini_free(p->config);
  ddb_ini_free(p->creds);
  memset(p, 0, sizeof(*p));
}

/* See ddb_client_int.h: a setting of the profile, the credentials file's
** over the config file's. */
const char *ddb_profile_value(const ddb_profile *p, const char *key) {
  const ini_kv *kv = sec_value(p->creds, p->in_creds, key);
  if(!kv)
    kv = sec_value(p->config, p->in_config, key);
  return kv ? kv->value : NULL;
}

/* See ddb_client_int.h: the profile's keys in one file. */
int ddb_profile_keys(const ddb_profile *p, int creds_file, const char **ak,
                     const char **sk, const char **tok, ddb_error *err) {
  const ddb_ini *f = creds_file ? p->creds : p->config;
  const ini_sec *s = creds_file ? p->in_creds : p->in_config;
  const char *path = creds_file ? p->creds_path : p->config_path;
  const ini_kv *a = sec_value(f, s, "aws_access_key_id");
  const ini_kv *k, *t;
  *ak = *sk = *tok = NULL;
  if(!a)
    return 0;
  k = sec_value(f, s, "aws_secret_access_key");
  t = sec_value(f, s, "aws_security_token");
  if(!t)
    t = sec_value(f, s, "aws_session_token");
  if(!k || !*k->value || !*a->value) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.200s' in the AWS %s file '%.300s': %s", p->name,
                  creds_file ? "credentials" : "config", path,
                  !*a->value ? "aws_access_key_id is empty"
                  : !k       ? "aws_access_key_id without "
                               "aws_secret_access_key"
                             : "aws_secret_access_key is empty");
    return -1;
  }
  *ak = a->value;
  *sk = k->value;
  *tok = t && *t->value ? t->value : NULL;
  return 1;
}

/* See ddb_client_int.h: sub of key in the config file's [services NAME]. */
char *ddb_profile_service(const ddb_profile *p, const char *services,
                          const char *key, const char *sub) {
  const ini_sec *s = config_section(p->config, "services", services);
  const ini_kv *kv = sec_value(p->config, s, key);
  return kv ? nested_get(kv->value, sub) : NULL;
}

/* See ddb_client_int.h: the i-th key of the config file's [sso-session
** NAME], its own keys first, then [DEFAULT]'s that it does not have (the
** order of configparser's options()). */
int ddb_profile_sso_key(const ddb_profile *p, const char *session, int i,
                        const char **key, const char **value) {
  const ini_sec *s = config_section(p->config, "sso-session", session);
  const ini_sec *d;
  int j;
  *key = *value = NULL;
  if(!s)
    return -1;
  if(i >= 0 && i < s->n) {
    *key = s->kv[i].key;
    *value = s->kv[i].value;
    return 1;
  }
  d = &p->config->defaults;
  for(i -= s->n, j = 0; i >= 0 && j < d->n; j++) {
    if(sec_find(s, d->kv[j].key))
      continue;
    if(i-- == 0) {
      *key = d->kv[j].key;
      *value = d->kv[j].value;
      return 1;
    }
  }
  return 0;
}

/* See ddb_client_int.h: the value of environment variable name, or NULL
** when unset or empty. */
const char *ddb_env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}
