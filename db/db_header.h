/*
** db_header.h -- export the pinned schedules of one kernel on one target
** as a self-contained C header (the CLBlast-database idea): generated code
** includes it and looks schedules up with the same exact / nearest /
** default rule as rtdb_lookup, with no SQLite at run time.
*/
#ifndef DB_HEADER_H
#define DB_HEADER_H

#include "../common/rt.h"

/* Append to out the header for kernel on target (tag NULL: the current
** pins; else that release's). The API of the generated header is
** described at its top and in db_header.c. Variables that distinguish
** the pinned workloads must be numeric; 0, or -1 with err. */
int db_export_header(const char *db_path, const char *target, const char *kernel,
                     const char *tag, rt_str *out, rt_err *err);

#endif
