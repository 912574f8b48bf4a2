/*
** cm_stated.c -- the model of a kernel whose work is stated, not derived
** from its schedule: a T1 kernel (targets/user/uk.h) states its FLOPs and
** DRAM bytes per launch (rooftune.Flops, rooftune.Bytes). What the model
** still sees of the schedule is the launch: its blocks (work-groups) run
** over the device's units (SMs, compute units, cores: m->units) in rounds,
** so a launch of fewer blocks than units uses only part of the device's
** ceilings, and a last round that is partly empty costs a whole round
** (imbalance). The roofline combination, the coefficients' meaning and
** calibration are every model's (cm.h); the defaults are the GPU models'.
*/
#include <math.h>

#include "cm.h"

const cm_coef cm_stated_coefs[CM_STATED_NCOEF] = {CM_GPU_GENERIC_COEFS};

void cm_stated_work(double flops, double bytes, double blocks, const cm_machine *m, cm_work *w) {
  double units = m->units > 0 ? m->units : 1;
  if (!(blocks >= 1)) blocks = 1;
  w->flops = flops > 0 ? flops : 0;
  w->bytes[CM_DRAM - CM_L1] = bytes > 0 ? bytes : 0;
  w->threads = (int)(blocks < units ? blocks : units);
  w->imbalance = blocks > units ? ceil(blocks / units) / (blocks / units) : 1;
  w->launches = 1;
  w->trips = blocks;
}
