/*
** decode_floor.cc -- the floor of `make bench-decode`
** (bench/decode_instr.sh): the same Scan pages decoded by simdjson (Debian's
** libsimdjson-dev, its DOM parser: UTF-8 validated, strict JSON) and each
** item rendered into the same plain JSON the `item` column gives
** (DynamoDB's types removed: S and B strings, N its digits as they are
** without a leading '+', M objects, L and sets arrays, BOOL, NULL), escaped
** as the extension escapes (", \, \n, \r, \t, \b, \f, other control
** characters \u00xx; nothing else).
**
**     build/bench-decode-floor OUT PAGE.json...
**
** Reads every page into simdjson's padded strings first; only
** decode_pages() is counted (valgrind --toggle-collect=decode_pages).  The
** rendered items, one a line, go to OUT afterwards: the bench checks they
** are byte for byte ours.  Exits 1 on any error.
*/
#include <simdjson.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

using simdjson::dom::element;

/* The output: a byte buffer whose room is made once a page (need()), its
** appends then unchecked and inlined.  The plain JSON of a page is never
** longer than the page: each string is at most as long as it was
** (an escape written is never longer than the one read: \" for \" or
** \u0022, \u0001 for \u0001), numbers are the same text, and the typed
** wrappers go. */
struct obuf {
  char *p = nullptr;
  size_t len = 0, cap = 0;
  ~obuf() { std::free(p); }
  /* Room for n more bytes (aborts when memory runs out). */
  void need(size_t n) {
    if(len + n <= cap)
      return;
    cap = (len + n) * 2;
    p = static_cast<char *>(std::realloc(p, cap));
    if(!p)
      std::abort();
  }
  void push_back(char c) { p[len++] = c; }
  void append(const char *s, size_t n) {
    char *d = p + len;
    len += n;
    /* short strings (most of an item's) without a call to memcpy: two
    ** overlapping loads of the source, never past its end */
    if(n >= 8 && n <= 16) {
      uint64_t a, b;
      std::memcpy(&a, s, 8);
      std::memcpy(&b, s + n - 8, 8);
      std::memcpy(d, &a, 8);
      std::memcpy(d + n - 8, &b, 8);
    } else if(n >= 4 && n < 8) {
      uint32_t a, b;
      std::memcpy(&a, s, 4);
      std::memcpy(&b, s + n - 4, 4);
      std::memcpy(d, &a, 4);
      std::memcpy(d + n - 4, &b, 4);
    } else if(n < 4) {
      for(size_t i = 0; i < n; i++)
        d[i] = s[i];
    } else
      std::memcpy(d, s, n);
  }
  void append(std::string_view s) { append(s.data(), s.size()); }
};

/* Has the word w (8 bytes of a string) a byte that needs escaping: below
** 0x20, a '"' or a backslash ("Bit Twiddling Hacks": hasless, haszero)? */
static inline bool word_escapes(uint64_t w) {
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  uint64_t q = w ^ (ones * '"'), e = w ^ (ones * '\\');
  return ((w - ones * 0x20) & ~w & highs) | ((q - ones) & ~q & highs) |
         ((e - ones) & ~e & highs);
}

/* Does byte c need escaping? */
static inline bool byte_escapes(unsigned char c) {
  static const struct table {
    bool t[256];
    constexpr table() : t() {
      for(int c = 0; c < 256; c++)
        t[c] = c < 0x20 || c == '"' || c == '\\';
    }
  } esc;
  return esc.t[c];
}

/* The length of the longest prefix of s[0..n) that needs no escaping:
** eight bytes at a time, the last (partial) word read overlapping the one
** before it when the string has 8 bytes or more. */
static size_t plain_run(const char *s, size_t n) {
  size_t i = 0;
  uint64_t w;
  for(; i + 8 <= n; i += 8) {
    std::memcpy(&w, s + i, 8);
    if(word_escapes(w))
      goto bytes;
  }
  if(i == n)
    return n;
  if(n >= 8) {
    std::memcpy(&w, s + n - 8, 8);
    if(!word_escapes(w))
      return n;
  }
bytes:
  while(i < n && !byte_escapes((unsigned char)s[i]))
    i++;
  return i;
}

/* Append s as a JSON string, escaped as ddb_buf_json_str escapes. */
static void add_str(obuf &o, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  size_t i = 0, n = s.size();
  o.push_back('"');
  for(;;) {
    size_t run = plain_run(s.data() + i, n - i);
    o.append(s.data() + i, run);
    i += run;
    if(i >= n)
      break;
    unsigned char c = (unsigned char)s[i++];
    switch(c) {
    case '"': o.append("\\\""); break;
    case '\\': o.append("\\\\"); break;
    case '\n': o.append("\\n"); break;
    case '\r': o.append("\\r"); break;
    case '\t': o.append("\\t"); break;
    case '\b': o.append("\\b"); break;
    case '\f': o.append("\\f"); break;
    default: {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      o.append(e, 6);
    }
    }
  }
  o.push_back('"');
}

/* Append the number text s as JSON: DynamoDB's digits, no leading '+'. */
static void add_num(obuf &o, std::string_view s) {
  if(!s.empty() && s[0] == '+')
    s.remove_prefix(1);
  o.append(s);
}

static bool add_av(obuf &o, element av);

/* Append the map m of AttributeValues (an M, or an item) as a plain JSON
** object; false when a member is no AttributeValue. */
static bool add_members(obuf &o, simdjson::dom::object m) {
  bool first = true;
  o.push_back('{');
  for(auto f : m) {
    if(!first)
      o.push_back(',');
    first = false;
    add_str(o, f.key);
    o.push_back(':');
    if(!add_av(o, f.value))
      return false;
  }
  o.push_back('}');
  return true;
}

/* Append the AttributeValue av ({"T": value}) as plain JSON; false when it
** is not one. */
static bool add_av(obuf &o, element av) {
  simdjson::dom::object obj;
  if(av.get(obj))
    return false;
  auto it = obj.begin();
  if(it == obj.end())
    return false;
  std::string_view t = it.key(); /* "S", "N", ... */
  element v = it.value();
  if(t == "S" || t == "B") {
    std::string_view s;
    if(v.get(s))
      return false;
    add_str(o, s);
  } else if(t == "N") {
    std::string_view s;
    if(v.get(s))
      return false;
    add_num(o, s);
  } else if(t == "BOOL") {
    bool b;
    if(v.get(b))
      return false;
    o.append(b ? "true" : "false");
  } else if(t == "NULL") {
    o.append("null");
  } else if(t == "M") {
    simdjson::dom::object m;
    if(v.get(m) || !add_members(o, m))
      return false;
  } else {
    simdjson::dom::array a;
    if(v.get(a))
      return false;
    o.push_back('[');
    bool first = true;
    for(element e : a) {
      if(!first)
        o.push_back(',');
      first = false;
      if(t == "L") {
        if(!add_av(o, e))
          return false;
      } else {
        std::string_view s;
        if(e.get(s))
          return false;
        if(t == "NS")
          add_num(o, s);
        else
          add_str(o, s);
      }
    }
    o.push_back(']');
  }
  return true;
}

/* Decode the pages and render their items into out, one a line.  Returns
** the number of items, or -1.  The one function counted. */
extern "C" __attribute__((noinline)) long
decode_pages(simdjson::dom::parser &parser,
             const std::vector<simdjson::padded_string> &pages,
             obuf &out);

extern "C" __attribute__((noinline)) long
decode_pages(simdjson::dom::parser &parser,
             const std::vector<simdjson::padded_string> &pages,
             obuf &out) {
  long items = 0;
  for(const auto &body : pages) {
    simdjson::dom::element doc;
    simdjson::dom::array arr;
    if(parser.parse(body).get(doc) || doc["Items"].get(arr))
      return -1;
    out.need(body.size() + 16);
    for(element item : arr) {
      simdjson::dom::object obj;
      if(item.get(obj) || !add_members(out, obj))
        return -1;
      out.push_back('\n');
      items++;
    }
  }
  return items;
}

int main(int argc, char **argv) {
  if(argc < 3) {
    std::fprintf(stderr, "usage: bench-decode-floor OUT PAGE.json...\n");
    return 2;
  }
  std::vector<simdjson::padded_string> pages;
  for(int i = 2; i < argc; i++) {
    simdjson::padded_string s;
    if(simdjson::padded_string::load(argv[i]).get(s)) {
      std::fprintf(stderr, "bench-decode-floor: cannot read %s\n", argv[i]);
      return 1;
    }
    pages.push_back(std::move(s));
  }
  simdjson::dom::parser parser;
  obuf out;
  long items = decode_pages(parser, pages, out);
  if(items < 0) {
    std::fprintf(stderr, "bench-decode-floor: a page is not a Scan answer\n");
    return 1;
  }
  FILE *f = std::fopen(argv[1], "wb");
  if(!f || std::fwrite(out.p, 1, out.len, f) != out.len ||
     std::fclose(f) != 0) {
    std::fprintf(stderr, "bench-decode-floor: cannot write %s\n", argv[1]);
    return 1;
  }
  std::printf("%ld items (%s)\n", items,
              simdjson::get_active_implementation()->name().c_str());
  return 0;
}
