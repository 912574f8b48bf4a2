/*
** rt_commit.c -- the git commit rooftune was built from, recorded with
** every campaign. The Makefile compiles this file with -DRT_COMMIT and
** recompiles it whenever the commit changes.
*/
#include "rt.h"

#ifndef RT_COMMIT
#define RT_COMMIT "unknown"
#endif

const char *rt_commit(void) { return RT_COMMIT; }
