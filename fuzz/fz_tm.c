/*
** fz_tm.c -- fuzz target tm: the target description file's parser
** (targets/model/tm.h, tm_parse) on any text, and the borrowed row's
** look-up (tm_row). Input: the file's text.
**
** A parse either fails with a message that names the file first ("f.json:
** ...") and leaves the record zeroed, or gives a record within its bounds
** (name and borrows non-empty, at most TM_MAXPAIRS pairs, limits as
** "VAR=VAL,..." of identifiers and integers >= 1, provenance a JSON object
** with a "ceilings" string, a 32-hex-digit hash), and parsing the same text
** again gives the same record byte for byte, hash included; the canonical
** form of the text (keys sorted, other spacing) has the same hash. tm_row
** either finds a row named as borrows (not the model row) or fails naming
** the file. Caps: none needed (two or three parses per input).
*/
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../targets/model/tm.h"
#include "../targets/tg.h"
#include "fz.h"

/* limits: "VAR=VAL" items, comma-separated */
static int limits_ok(const char *s) {
  while (*s) {
    if (!isalpha((unsigned char)*s) && *s != '_') return 0;
    while (isalnum((unsigned char)*s) || *s == '_') s++;
    if (*s++ != '=' || !isdigit((unsigned char)*s) || *s == '0') return 0;
    while (isdigit((unsigned char)*s)) s++;
    if (*s && *s++ != ',') return 0;
  }
  return 1;
}

FZ_TARGET(tm) {
  char *text = fz_text(data, size);
  tm_file *f = malloc(sizeof *f), *g = malloc(sizeof *g);
  rt_err e = {0};
  if (tm_parse("f.json", text, f, &e)) {
    FZ_CHECK(!strncmp(e.msg, "f.json: ", 8), "an error not naming the file: %s", e.msg);
    FZ_CHECK(!f->name[0] && !f->borrows[0] && !f->path[0] && !f->desc.n && !f->hash[0],
             "a failed parse left the record filled");
  } else {
    FZ_CHECK(f->name[0] && f->borrows[0] && !strcmp(f->path, "f.json"), "name, borrows or path empty");
    FZ_CHECK(f->desc.n >= 0 && f->desc.n <= TM_MAXPAIRS, "%d pairs", f->desc.n);
    FZ_CHECK(limits_ok(f->limits), "limits '%s' are not VAR=VAL,...", f->limits);
    FZ_CHECK(strlen(f->hash) == 32 && strspn(f->hash, "0123456789abcdef") == 32, "hash '%s'", f->hash);
    json_t *p = json_loads(f->provenance, 0, NULL);
    FZ_CHECK(json_is_object(p) && json_is_string(json_object_get(p, "ceilings")),
             "provenance without a ceilings string: %s", f->provenance);
    json_decref(p);
    memset(g, 0xa5, sizeof *g);
    FZ_CHECK(!tm_parse("f.json", text, g, &e), "the same text failed the second time: %s", e.msg);
    FZ_CHECK(!memcmp(f->name, g->name, sizeof f->name) && !memcmp(&f->ce, &g->ce, sizeof f->ce) &&
             !memcmp(&f->desc, &g->desc, sizeof f->desc) && !strcmp(f->limits, g->limits) &&
             !strcmp(f->provenance, g->provenance) && !strcmp(f->hash, g->hash),
             "two parses of one text differ");
    json_t *j = json_loads(text, 0, NULL);
    char *canon = json_dumps(j, JSON_SORT_KEYS | JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    json_decref(j);
    FZ_CHECK(canon && !tm_parse("f.json", canon, g, &e), "its canonical form fails: %s", e.msg);
    FZ_CHECK(!strcmp(f->hash, g->hash), "the canonical form has another hash");
    free(canon);
    if (tm_row(f, tg_backend_find, &e))
      FZ_CHECK(!strncmp(e.msg, "f.json: ", 8), "tm_row's error does not name the file: %s", e.msg);
    else
      FZ_CHECK(f->be && !strcmp(f->be->name, f->borrows) && !f->be->model_only, "tm_row found another row");
  }
  free(f), free(g), free(text);
  return 0;
}
