/*
** ms_int.h -- inside the measurement harness: the workload, the report a
** worker child sends back, and the worker plumbing shared by the host
** worker (ms_worker.c) and the CUDA worker (ms_cuda.c). Included only by
** measure/.
*/
#ifndef MS_INT_H
#define MS_INT_H

#include "ms.h"

/* Device workloads up to this many flops also get the host reference. */
#define MS_HOST_CHECK_FLOPS 2e8

struct ms_workload {
  const hk_kernel *k;
  hk_problem pb;           /* its strings point into the caller's space */
  int nbuf;
  hk_buf b[HK_MAXBUF];
  float *in[HK_MAXBUF];    /* input values (NULL for outputs) */
  float *ref[HK_MAXBUF];   /* reference outputs (NULL for inputs); device
                           ** kernels: the host reference's outputs for
                           ** small workloads (checks the device reference),
                           ** else all NULL */
  double tol;
};

/* What a worker sends back through its pipe, whole. */
typedef struct ms__report {
  int status;
  char msg[256];
  ms_stats t;
  double max_err, verify_s, bench_s;
  double ev[MS_MAXEV];
} ms__report;

size_t ms__buf_bytes(const hk_buf *b);
/* Worst relative error of the outputs bufs against ref (hk.h invariant
** 3); msg gets the first output beyond tolerance. NaN/Inf: infinitely
** wrong. */
double ms__verify(const ms_workload *w, float *const *bufs, float *const *ref, char *msg,
                  size_t cap);
/* In a child: its own process group, default signal dispositions. */
void ms__child_setup(void);
/* In a child: send rep whole and _exit(0). */
void ms__send(int fd, const ms__report *rep) __attribute__((noreturn));
/* Fork child(fd, ctx), which must ms__send a report; wait for it until
** timeout seconds, killing its process group then. 0: rep filled (status
** timeout or runtime_error when the child died without a report); -1:
** fork/pipe failed (rep->msg says). */
int ms__run_worker(void (*child)(int fd, void *ctx), void *ctx, double timeout,
                   ms__report *rep);

/* ms_measure of a device kernel (hk_kernel.device_reference set). */
int ms__measure_cuda(ms_workload *w, const char *src, const ms_opts *o, ms_result *r);
/* ms_build_key for CUDA source (o->device >= 0). */
void ms__cuda_key(const char *src, const ms_opts *o, char key[33]);

#endif
