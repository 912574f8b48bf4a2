/*
** tg_table.c -- the one table of backends: one row each, in the order
** `rooftune targets` lists them and names are resolved (tg.h). Adding a
** backend is a folder under targets/ and a line here.
*/
#include "tg_backend.h"

#include "cuda/gd.h"
#include "host/hw.h"
#include "model/tm.h"
#include "opencl/oc.h"
#include "rvv/rv.h"

const tg_backend *const tg_backends[] = {
  &hw_backend,
  &gd_backend,
  &oc_backend,
  &rv_backend,
  &tm_backend,
  NULL,
};
