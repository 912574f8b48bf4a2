/*
** fz.h -- what the fuzz harnesses share. A harness (fuzz/fz_NAME.c) is
** one function over a byte string that must not crash, leak, hang or
** break an invariant it checks, whatever the bytes. Each is built twice:
**  - for libFuzzer (make fuzz: clang, -DFZ_LIBFUZZER): the function is
**    LLVMFuzzerTestOneInput, driven by libFuzzer's main;
**  - for the replay test (tests/test_fuzz.c, built by make test and make
**    asan with the project's compiler): the function is fz_NAME, called on
**    every file of fuzz/corpus/NAME/ and fuzz/regress/NAME/.
**
** Invariants:
**  1. A harness returns 0. A broken invariant is fz_fail (a message, then
**     abort), so libFuzzer keeps the input as a crash and the replay test
**     fails.
**  2. Work per input is bounded (each harness's top comment gives its
**     caps), so a slow input is a finding about rooftune, never the
**     harness's own doing.
**  3. Nothing carries from one input to the next but state that does not
**     change results (the files an input needs are removed after it).
*/
#ifndef FZ_H
#define FZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef FZ_LIBFUZZER
#define FZ_TARGET(name) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#else
#define FZ_TARGET(name) int fz_##name(const uint8_t *data, size_t size)
#endif

/* The targets (the names of their folders under fuzz/corpus and fuzz/regress). */
int fz_t1(const uint8_t *data, size_t size);      /* T1 loader and space engine */
int fz_expr(const uint8_t *data, size_t size);    /* expression compiler and VM */
int fz_config(const uint8_t *data, size_t size);  /* configuration JSON parser */
int fz_t4(const uint8_t *data, size_t size);      /* T4 import (plain or gzip) */
int fz_set(const uint8_t *data, size_t size);     /* --set VAR=VALUE,... parsing */
int fz_rtdb(const uint8_t *data, size_t size);    /* reader library on a database file */
int fz_lookup(const uint8_t *data, size_t size);  /* reader library on rows of any content */
int fz_tm(const uint8_t *data, size_t size);      /* target description files (targets/model/tm.h) */

/* Report a broken invariant on stderr and abort. */
__attribute__((noreturn, format(printf, 1, 2)))
void fz_fail(const char *fmt, ...);
#define FZ_CHECK(cond, ...) \
  do { if (!(cond)) fz_fail(__VA_ARGS__); } while (0)

/* The bytes as a NUL-terminated string (malloc'ed; an embedded NUL ends
** the text early, as it would for a C caller). */
char *fz_text(const uint8_t *data, size_t size);

/* A private folder for this process's files, made on first use and
** removed (with what is left in it) at exit. */
const char *fz_tmpdir(void);

/* Write size bytes to path (created or truncated); abort on failure. */
void fz_write_file(const char *path, const uint8_t *data, size_t size);

/* rtdb_lookup's answer rc/r for lookup number i on handle rd is well
** formed: a code of the enum, a message with an error; a match with
** NUL-terminated texts, distance and version as the match says. */
struct rtdb_result;
struct rtdb;
void fz_check_result(int rc, const struct rtdb_result *r, const struct rtdb *rd, size_t i);
/* Two answers are the same, field by field. */
int fz_same_result(const struct rtdb_result *a, const struct rtdb_result *b);

/* A 64-bit FNV-1a hash of the bytes: seeds the harnesses' pseudo-random
** choices, so an input always does the same work. */
uint64_t fz_hash(const uint8_t *data, size_t size);

#endif
