/*
** arn.c -- DynamoDB table and index ARNs, as the console shows them and
** as a throttling answer names the resource it throttled:
**
**    arn:aws:dynamodb:us-east-1:123456789012:table/Orders
**    arn:aws:dynamodb:us-east-1:123456789012:table/Orders/index/ByStatus
**
** DynamoDB takes a table's ARN wherever a call takes its TableName (the
** data-plane calls and DescribeTable), which is how a table of another
** account is reached through a resource policy: its name alone would
** name the caller's own table of that name.  So a table given by its ARN
** is called by its ARN, and the cache keys its entries by the ARN (see
** cache/cache.c: another account's table of the same name never shares
** an entry).  The parts are checked as DynamoDB spells them: a partition
** (aws, aws-cn, aws-us-gov, ...), a region, an account of 12 digits
** (DynamoDB Local's ARNs: region "ddblocal", account 000000000000), and
** names of 3 to 255 of [A-Za-z0-9_.-].
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

#define ARN_PREFIX "arn:"

/* The length of the DynamoDB name at s (3 to 255 of [A-Za-z0-9_.-]),
** or 0 when there is none that long. */
static size_t name_len(const char *s) {
  size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789_.-");
  return n >= 3 && n <= 255 ? n : 0;
}

/* Copy the field s[0..n) into dst[0..cap) when it is 1..cap-1 bytes of
** the characters in set; returns 0, or -1 when it is not. */
static int field(char *dst, size_t cap, const char *s, size_t n,
                 const char *set) {
  size_t i;
  if(n == 0 || n >= cap)
    return -1;
  for(i = 0; i < n; i++)
    if(!strchr(set, s[i]))
      return -1;
  memcpy(dst, s, n);
  dst[n] = 0;
  return 0;
}

/* See ddb_client.h. */
int ddb_arn_is(const char *s) {
  return s && strncmp(s, ARN_PREFIX, strlen(ARN_PREFIX)) == 0;
}

/* Split s into out's fields; returns 0, or -1 with *why what is wrong
** (a static string). */
static int arn_split(const char *s, int index_ok, ddb_arn *out,
                     const char **why) {
  static const char lower[] = "abcdefghijklmnopqrstuvwxyz0123456789-";
  const char *p = s + strlen(ARN_PREFIX), *q;
  size_t n;
  memset(out, 0, sizeof(*out));
  /* partition */
  q = strchr(p, ':');
  if(!q || field(out->partition, sizeof(out->partition), p, (size_t)(q - p),
                 lower)) {
    *why = "no partition (arn:aws:...)";
    return -1;
  }
  p = q + 1;
  if(strncmp(p, "dynamodb:", 9) != 0) {
    *why = "not a DynamoDB ARN (arn:aws:dynamodb:...)";
    return -1;
  }
  p += 9;
  q = strchr(p, ':');
  if(!q ||
     field(out->region, sizeof(out->region), p, (size_t)(q - p), lower)) {
    *why = "no region";
    return -1;
  }
  p = q + 1;
  q = strchr(p, ':');
  if(!q ||
     field(out->account, sizeof(out->account), p, (size_t)(q - p),
           "0123456789") ||
     q - p != 12) {
    *why = "no account id of 12 digits";
    return -1;
  }
  p = q + 1;
  if(strncmp(p, "table/", 6) != 0 || (n = name_len(p + 6)) == 0) {
    *why = "no table/NAME (3 to 255 of A-Z a-z 0-9 _ . -)";
    return -1;
  }
  memcpy(out->table, p + 6, n);
  p += 6 + n;
  if(index_ok && strncmp(p, "/index/", 7) == 0 && (n = name_len(p + 7))) {
    memcpy(out->index, p + 7, n);
    p += 7 + n;
  }
  if(*p) {
    *why = index_ok ? "text after the table or index name"
                    : "text after the table name";
    return -1;
  }
  return 0;
}

/* See ddb_client.h. */
ddb_result ddb_arn_parse(const char *s, int index_ok, ddb_arn *out,
                         ddb_error *err) {
  const char *why = NULL;
  if(!ddb_arn_is(s))
    why = "it does not start with arn:";
  else if(strlen(s) > 1024)
    why = "longer than 1024 bytes";
  if(why || arn_split(s, index_ok, out, &why) != 0) {
    memset(out, 0, sizeof(*out));
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "malformed table ARN '%.200s': %s (want "
                         "arn:aws:dynamodb:REGION:ACCOUNT:table/NAME)",
                         s ? s : "", why);
  }
  return DDB_OK;
}

/* See ddb_client.h. */
const char *ddb_arn_table_name(const char *s) {
  ddb_arn a;
  const char *slash;
  if(!ddb_arn_is(s) || ddb_arn_parse(s, 0, &a, NULL) != DDB_OK)
    return s;
  slash = strstr(s, ":table/");
  return slash ? slash + 7 : s;
}

/* See ddb_client.h. */
int ddb_desc_name_asked(ddb_table_desc *d, const char *asked) {
  char *z;
  if(!d || !d->name || !ddb_arn_is(asked) || strcmp(d->name, asked) == 0 ||
     strcmp(ddb_arn_table_name(asked), d->name) != 0)
    return 0;
  z = ddb_strdup(asked);
  if(!z)
    return -1;
  free(d->name);
  d->name = z;
  return 0;
}
