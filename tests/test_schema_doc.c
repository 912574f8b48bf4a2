/*
** test_schema_doc.c -- db/SCHEMA.md, the schema page for readers, against
** the live schema: a database made by db_open(DB_CREATE) has exactly the
** tables the page documents (each under "### `NAME`"), each with exactly
** the documented columns (rows "| `COLUMN` | TYPE[ key][ not null] | ..."),
** with SQLite's declared type, primary-key membership and NOT NULL as
** documented. The checker is also run on doctored copies of the page (a
** column left out, one invented, a type changed, a table missing), each of
** which it must report by name.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/rt.h"
#include "../db/db.h"
#include "tk_run.h"

#define PAGE "db/SCHEMA.md"

static char dir[64], path[128];

/* One documented column: table, name, the type cell. */
typedef struct doc_col { char table[64], name[64], type[96]; int seen; } doc_col;

/* The page's tables and columns (at most cap columns); the number of
** columns, tables into *ntables (names into tables[], 64 bytes each). */
static int parse_page(const char *text, doc_col *cols, int cap, char (*tables)[64], int *ntables) {
  int n = 0;
  *ntables = 0;
  char table[64] = "";
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    size_t len = strcspn(line, "\n");
    if (!strncmp(line, "### `", 5)) {
      size_t k = strcspn(line + 5, "`\n");
      snprintf(table, sizeof table, "%.*s", (int)k, line + 5);
      snprintf(tables[(*ntables)++], 64, "%s", table);
    } else if (!strncmp(line, "#", 1)) {
      table[0] = 0;   /* any other heading ends a table's section */
    } else if (table[0] && !strncmp(line, "| `", 3) && n < cap) {
      const char *name = line + 3, *end = strchr(name, '`');
      const char *cell = end ? strchr(end, '|') : NULL;
      if (!end || !cell || cell > line + len) continue;
      const char *tend = strchr(cell + 1, '|');
      if (!tend || tend > line + len) continue;
      doc_col *c = &cols[n++];
      snprintf(c->table, sizeof c->table, "%s", table);
      snprintf(c->name, sizeof c->name, "%.*s", (int)(end - name), name);
      const char *t = cell + 1;
      while (*t == ' ') t++;
      size_t tl = (size_t)(tend - t);
      while (tl && t[tl - 1] == ' ') tl--;
      snprintf(c->type, sizeof c->type, "%.*s", (int)tl, t);
      c->seen = 0;
    }
  }
  return n;
}

/* Compare the page's text with the schema of the database at db_path: one
** line per difference into out (naming the table and column); their count. */
static int check_page(const char *text, const char *db_path, rt_str *out) {
  doc_col cols[512];
  char tables[64][64];
  int ntables, ncols = parse_page(text, cols, 512, tables, &ntables), bad = 0;
  sqlite3 *h;
  if (sqlite3_open_v2(db_path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    rt_str_printf(out, "cannot open %s\n", db_path);
    sqlite3_close(h);
    return 1;
  }
  sqlite3_stmt *tl, *ci;
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT name FROM sqlite_schema WHERE type = 'table'"
                                         " AND name NOT LIKE 'sqlite_%' ORDER BY name", -1, &tl, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)"
                                         " ORDER BY cid", -1, &ci, NULL), SQLITE_OK);
  while (sqlite3_step(tl) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(tl, 0);
    int documented = 0;
    for (int i = 0; i < ntables; i++) documented += !strcmp(tables[i], t);
    if (documented != 1) {
      rt_str_printf(out, "table %s: documented %d times (expected once)\n", t, documented);
      bad++;
    }
    sqlite3_bind_text(ci, 1, t, -1, SQLITE_TRANSIENT);
    while (sqlite3_step(ci) == SQLITE_ROW) {
      const char *c = (const char *)sqlite3_column_text(ci, 0), *type = (const char *)sqlite3_column_text(ci, 1);
      char want[96];
      snprintf(want, sizeof want, "%s%s%s", type, sqlite3_column_int(ci, 3) ? " key" : "",
               sqlite3_column_int(ci, 2) ? " not null" : "");
      doc_col *d = NULL;
      for (int i = 0; i < ncols; i++)
        if (!strcmp(cols[i].table, t) && !strcmp(cols[i].name, c)) {
          if (d) {
            rt_str_printf(out, "column %s.%s: documented twice\n", t, c);
            bad++;
          }
          d = &cols[i];
          d->seen = 1;
        }
      if (!d) {
        rt_str_printf(out, "column %s.%s: not documented (%s)\n", t, c, want);
        bad++;
      } else if (strcmp(d->type, want)) {
        rt_str_printf(out, "column %s.%s: documented as '%s', the schema has '%s'\n", t, c, d->type, want);
        bad++;
      }
    }
    sqlite3_reset(ci);
  }
  for (int i = 0; i < ncols; i++)
    if (!cols[i].seen) {
      rt_str_printf(out, "column %s.%s: documented, but not in the schema\n", cols[i].table, cols[i].name);
      bad++;
    }
  sqlite3_stmt *has;
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                                      -1, &has, NULL), SQLITE_OK);
  for (int i = 0; i < ntables; i++) {
    sqlite3_bind_text(has, 1, tables[i], -1, SQLITE_TRANSIENT);
    if (sqlite3_step(has) != SQLITE_ROW) {
      rt_str_printf(out, "table %s: documented, but not in the schema\n", tables[i]);
      bad++;
    }
    sqlite3_reset(has);
  }
  sqlite3_finalize(has), sqlite3_finalize(tl), sqlite3_finalize(ci);
  sqlite3_close(h);
  return bad;
}

static char *page(void) {
  char *text = tk_gunzip(PAGE, NULL);   /* reads a plain file as it is */
  if (!text) fail_msg("cannot read %s (run from the source tree's root)", PAGE);
  return text;
}

/* The page against a fresh database of this build's schema. */
static void test_page_matches_schema(void **state) {
  (void)state;
  char *text = page();
  rt_str out = {0};
  int bad = check_page(text, path, &out);
  if (bad) fail_msg("%s does not describe schema version %d (a fresh database):\n%s", PAGE,
                    DB_SCHEMA_VERSION, out.s);
  char want[32];
  snprintf(want, sizeof want, "(version %d)", DB_SCHEMA_VERSION);
  if (!strstr(text, want)) fail_msg("%s: no '%s': the page names the schema version it describes", PAGE, want);
  free(out.s);
  free(text);
}

/* text with the first occurrence of from replaced by to (malloc'd). */
static char *doctor(const char *text, const char *from, const char *to) {
  const char *p = strstr(text, from);
  if (!p) fail_msg("the page has no '%s' to doctor", from);
  rt_str s = {0};
  rt_str_printf(&s, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
  return s.s;
}

/* The checker finds what a doctored page gets wrong, by name. */
static void test_checker_catches(void **state) {
  (void)state;
  char *text = page();
  static const struct { const char *from, *to, *expect; } cases[] = {
    {"| `strategy_s` | REAL |", "| `not_strategy_s` | REAL |", "column trials.strategy_s: not documented"},
    {"| `strategy_s` | REAL |", "| `strategy_s` | REAL |", NULL},   /* unchanged: no problem */
    {"| `noisy` | INTEGER not null |", "| `noisy` | INTEGER |", "column trials.noisy: documented as 'INTEGER'"},
    {"| `id` | INTEGER key | row id |", "| `id` | INTEGER key | row id |\n| `colour` | TEXT | x |",
     "column targets.colour: documented, but not in the schema"},
    {"### `leases`", "### `leasez`", "table leases: documented 0 times"},
    {"### `tags`", "### `tags`\n\n### `tags`", "table tags: documented 2 times"},
    {"| `pin_id` | INTEGER not null | `pins.id` of the current version |", "",
     "column pin_current.pin_id: not documented (INTEGER not null)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char *bad = doctor(text, cases[i].from, cases[i].to);
    rt_str out = {0};
    int n = check_page(bad, path, &out);
    if (!cases[i].expect) {
      assert_int_equal(n, 0);
    } else if (n == 0 || !out.s || !strstr(out.s, cases[i].expect)) {
      fail_msg("doctored page %zu: expected '%s', got %d problems:\n%s", i, cases[i].expect, n,
               out.s ? out.s : "");
    }
    free(out.s);
    free(bad);
  }
  free(text);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rt-schema-doc-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(path, sizeof path, "%s/fresh.db", dir);
  rt_err err = {0};
  db *d = db_open(path, DB_CREATE, &err);
  if (!d) {
    fprintf(stderr, "%s\n", err.msg);
    return -1;
  }
  db_close(d);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tk_rm_rf(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_page_matches_schema),
    cmocka_unit_test(test_checker_catches),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
