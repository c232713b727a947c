/*
** ddb_item.h -- DynamoDB's data model: AttributeValues (ddb_av), items
** (ddb_item), numbers kept as exact decimal text, keys encoded for
** comparing, items to and from JSON text, JSON values as tokens; and
** DynamoDB's limits on items and requests, each defined once here.
**
** Part of the client layer's one public header: ddb_client.h includes it
** after the results, errors and buffers it uses.  Include ddb_client.h,
** never this file alone.
**
** Every item that crosses the wire is decoded once into a ddb_item: one
** immutable, reference-counted allocation holding a tree of ddb_av nodes.
** Numbers stay exact decimal text (DynamoDB allows 38 digits, more than a
** double holds); binary values stay base64 text as DynamoDB sent them,
** decoded only when asked.  Because an item is immutable once built, it
** can be shared between threads and between the cache and any number of
** readers; whoever holds a reference calls ddb_item_unref() exactly once.
*/
#ifndef DDB_ITEM_H
#define DDB_ITEM_H

#ifndef DDB_CLIENT_H
#error "include ddb_client.h, which includes ddb_item.h"
#endif

/* ------------------------------------------------------------------------
** AttributeValues and items
*/
typedef enum ddb_type {
  DDB_NONE = 0,
  DDB_S,
  DDB_N,
  DDB_B,
  DDB_BOOL,
  DDB_NULL,
  DDB_M,
  DDB_L,
  DDB_SS,
  DDB_NS,
  DDB_BS
} ddb_type;

typedef struct ddb_av ddb_av;
struct ddb_av {
  ddb_type type;
  uint32_t n;       /* S/N/B: bytes of text; BOOL: 0 or 1;
                         M/L/SS/NS/BS: number of kids */
  const char *text; /* S: UTF-8; N: decimal digits; B: base64 (as sent);
                         NUL-terminated */
  ddb_av *kids;     /* M/L/sets: n children */
  const char *name; /* set on members of an M (and on top-level
                         attributes): the attribute name, NUL-terminated */
  uint32_t name_len;
};

/* An immutable decoded item.  One allocation; `bytes` is its real size. */
typedef struct ddb_item {
  int refs;     /* atomic; use ddb_item_ref/unref */
  int plain;    /* 1: no name or text of the item needs escaping in JSON
                   (known for items the cache unpacks: ddb_item_pack checks
                   once); 0: not known */
  size_t bytes; /* allocated bytes, for cache accounting */
  ddb_av root;  /* type DDB_M; root.kids are the attributes */
} ddb_item;

ddb_item *ddb_item_ref(ddb_item *it);
void ddb_item_unref(ddb_item *it);
/* The attribute called name, or NULL. */
const ddb_av *ddb_item_get(const ddb_item *it, const char *name);
/* Build an item from scalar attributes (for keys): names[i] = vals[i].
** Returns NULL on out of memory. */
ddb_item *ddb_item_from_avs(const ddb_av *vals, int n);

/* A new item whose attributes are deep copies of attrs[0..n) (each with
** its name set).  Returns NULL on out of memory. */
ddb_item *ddb_item_from_attrs(const ddb_av *const *attrs, int n);
/* Are a and b the same value (numbers compared by value, maps and sets
** regardless of order)? */
int ddb_av_equal(const ddb_av *a, const ddb_av *b);
/* The item's size as DynamoDB counts it against its 400 KB limit. */
size_t ddb_item_size(const ddb_item *it);
/* Packed items, for the cache: the item as a byte string without pointers
** (format in item.c).  ddb_item_packed_size: its length;
** ddb_item_pack: write it at out (ddb_item_packed_size(it) bytes);
** ddb_item_unpack: a new item (one reference) equal to the one packed,
** from p[0..n) as ddb_item_pack wrote it, or NULL on out of memory. */
size_t ddb_item_packed_size(const ddb_item *it);
void ddb_item_pack(const ddb_item *it, unsigned char *out);
ddb_item *ddb_item_unpack(const unsigned char *p, size_t n);

/* The text of `t` as DynamoDB spells it ("S", "N", ...). */
const char *ddb_type_name(ddb_type t);

/* How an N value maps to SQL.  DDB_NUM_INT: *i holds it.  DDB_NUM_REAL:
** *d holds it and no digit was lost (at most 15 significant digits).
** DDB_NUM_TEXT: keep the exact text.  DDB_NUM_BAD: not a number. */
typedef enum {
  DDB_NUM_BAD = 0,
  DDB_NUM_INT,
  DDB_NUM_REAL,
  DDB_NUM_TEXT
} ddb_numkind;
ddb_numkind ddb_number_classify(const char *s, size_t n, int64_t *i,
                                double *d);
/* Is s[0..n) a number (what ddb_number_classify does not call
** DDB_NUM_BAD)?  The syntax alone: no conversion. */
int ddb_number_ok(const char *s, size_t n);

/* Does the number s[0..n) fit DynamoDB: at most 38 significant digits,
** magnitude from 1E-130 to below 1E+126, or zero?  0 when not, or when
** s is not a number.  The one home of DynamoDB's number rule. */
int ddb_number_fits(const char *s, size_t n);
/* Write into buf[0..cap) (cap >= 40) the number d stands for: a whole
** number in 64-bit range (-2^63 to below 2^63) as its exact integer (2^60
** -> "1152921504606846976"), any other the shortest decimal text that
** reads back as d (0.3 -> "0.3", not "0.29999999999999999"; 1.23e22 ->
** "1.23e+22", not its binary expansion 12300000000000001048576).  Returns
** 0, or -1 when d is not finite or out of DynamoDB's range (then buf
** holds the text, for a message: "inf", "1e+200"), or cap is under 40. */
int ddb_number_from_double(double d, char *buf, size_t cap);
/* The numbers of DynamoDB's precision (38 digits) whose nearest double is
** d: those v with lo <= v <= hi, v < hi when *hi_open, v > lo when
** *lo_open.  lo and hi (cap >= 64 each) receive the bounds: the
** midpoints between d and its neighbours (a tie belongs to d when its
** significand is even), each rounded inwards to 38 digits
** (1.23e22 -> 1.23E22 .. 1.2300000000000002097152E22).  A bound may lie
** outside DynamoDB's magnitudes (ddb_number_fits).  For |d| < 1E-200 both
** are d's shortest text: only 0 is near.  Returns 0, or -1 when d is not
** finite or cap is under 64. */
int ddb_number_double_range(double d, char *lo, int *lo_open, char *hi,
                            int *hi_open, size_t cap);
/* Compare the numbers a[0..na) and b[0..nb) exactly, by value, whatever
** their length or spelling (1E-130 and its 132-character expansion are
** equal; 18446744073709551616 < 18446744073709551617; 38 digits and more
** are kept): -1, 0 or 1.  A text that is not a number orders after every
** number, and among such texts by bytes (a total order).  The one home
** of N order and N equality: nothing else compares N values through a
** double. */
int ddb_number_cmp(const char *a, size_t na, const char *b, size_t nb);

/* Append the canonical form of number s[0..n): the same text for every
** spelling of one value ("1.50", "15E-1", "1.5" -> "15e-1"; "0", "-0.0"
** -> "0").  Returns 0, or -1 if s is not a number. */
int ddb_number_canonical(const char *s, size_t n, ddb_buf *out);

/* Append av as plain JSON (S->string, N->number with DynamoDB's exact
** digits, B->base64 string, sets->arrays, M->object, L->array). */
int ddb_av_to_json(const ddb_av *av, ddb_buf *out);
/* ddb_av_to_json of the item's attribute map, its strings copied without
** looking for characters to escape when it->plain says there are none. */
int ddb_item_to_json(const ddb_item *it, ddb_buf *out);
/* Append av in DynamoDB's typed JSON ({"S":"..."} ...). */
int ddb_av_to_typed_json(const ddb_av *av, ddb_buf *out);
/* Append an item as DynamoDB's attribute map ({"a":{"S":"..."},...}),
** the form of Item, Key and ExclusiveStartKey. */
int ddb_item_to_typed_json(const ddb_item *it, ddb_buf *out);

/* ------------------------------------------------------------------------
** Keys encoded for hashing and comparing (item.c)
*/
/* The primary-key attributes of item, encoded canonically (for hashing and
** comparing keys): for each, in the order of key_names, its name as a part
** (ddb_buf_add_part), its type letter (S, N or B), its text as a part
** (numbers in canonical form).  Injective: distinct keys never encode
** alike, whatever bytes (NUL, any separator) their values hold.  Returns
** 0, or -1 when the item lacks a key attribute. */
int ddb_key_encode(const ddb_item *item, const char *const *key_names,
                   int n_key_names, ddb_buf *out);
/* The same encoding from the key's values (each with its name set), in
** the order of the table's key. */
int ddb_key_encode_avs(const ddb_av *vals, int n, ddb_buf *out);

/* ------------------------------------------------------------------------
** Items from JSON text (json.c)
*/

/* Plain JSON object -> item: string S, number N (exact digits, checked
** against DynamoDB's 38 digits and range), true/false BOOL, null NULL,
** array L, object M.  Where hint (the item as read, or NULL) has a set or
** a binary at the same place and the new value fits it, the hint's type is
** kept (SS, NS, BS, B), so a read-modify-write keeps types.  Errors name
** the attribute path. */
ddb_result ddb_item_from_json(const char *text, size_t n, const ddb_item *hint,
                              ddb_item **out, ddb_error *err);
/* DynamoDB typed JSON ({"a":{"S":"x"}}) -> item. */
ddb_result ddb_item_from_typed_json(const char *text, size_t n, ddb_item **out,
                                    ddb_error *err);

/* ------------------------------------------------------------------------
** JSON values (jsonval.c): one JSON text as tokens, for callers outside
** client/ (the keys column).  Token 0 is the whole value; an array's
** elements follow it (the first at i + 1, each next at ddb_jv_next of the
** one before); an object's members are a string token (the name) then the
** value.  Every value keeps its exact bytes: no number goes through a
** double, and a string's length is its bytes (\u0000 included).
*/
typedef enum ddb_jv_type {
  DDB_JV_OBJECT = 1,
  DDB_JV_ARRAY,
  DDB_JV_STRING,
  DDB_JV_NUMBER,
  DDB_JV_TRUE,
  DDB_JV_FALSE,
  DDB_JV_NULL
} ddb_jv_type;
typedef struct ddb_jv ddb_jv;
/* Tokenize text[0..n), which must be exactly one JSON value (white space
** around it allowed).  DDB_OK with *out (ddb_jv_free; it points into
** text, which must outlive it); DDB_ERR_INPUT when text is not one valid
** JSON value (or nests deeper than 256); DDB_ERR_NOMEM. */
ddb_result ddb_jv_parse(const char *text, size_t n, ddb_jv **out);
void ddb_jv_free(ddb_jv *j);
/* The type of token i. */
ddb_jv_type ddb_jv_type_of(const ddb_jv *j, uint32_t i);
/* The elements of array i, or the members of object i. */
uint32_t ddb_jv_count(const ddb_jv *j, uint32_t i);
/* The first token after value i and everything inside it. */
uint32_t ddb_jv_next(const ddb_jv *j, uint32_t i);
/* The bytes of scalar i as written: a number's or a literal's text, a
** string's bytes between its quotes (escapes undecoded); *n its length. */
const char *ddb_jv_raw(const ddb_jv *j, uint32_t i, size_t *n);
/* String token i decoded: malloc()ed, NUL-terminated, *n its length
** (which a \u0000 inside does not shorten); NULL when out of memory. */
char *ddb_jv_string(const ddb_jv *j, uint32_t i, size_t *n);

/* ------------------------------------------------------------------------
** DynamoDB's limits, each defined once: the layers above use these names.
*/
/* The largest item, in bytes as DynamoDB sizes it (ddb_item_size). */
#define DDB_ITEM_MAX_SIZE (400 * 1024)
/* Writes in one TransactWriteItems. */
#define DDB_TRANSACT_MAX 100
/* Bytes of items in one TransactWriteItems: its limit is 4 MB of payload;
** item sizes as DynamoDB counts them, with room for the request around
** them. */
#define DDB_TRANSACT_BYTES (4000LL * 1000)
/* Writes in one BatchWriteItem. */
#define DDB_BATCH_WRITE_MAX 25
/* Keys in one BatchGetItem. */
#define DDB_BATCH_GET_MAX 100
/* The longest JSON text made of one item or value (ddb_av_to_json and
** the like, for SQL's item column and the C API): items are at most 400 KB
** as DynamoDB sizes them, but escapes and numbers' digits make text
** longer; this bounds the buffer, never a correct item. */
#define DDB_JSON_MAX (64u * 1024 * 1024)

#endif /* DDB_ITEM_H */
