/*
 * blur1d.cl -- rooftune's own small OpenCL example kernel for T1 files
 * (blur1d.json): a [1 2 1] smoothing stencil over int16 samples, blended
 * into a float32 signal that is read and written:
 *
 *     y[i] = beta * y[i] + alpha * (x'[i] + 2*x'[i+1] + x'[i+2]),  0 <= i < N
 *
 * where x' = x + offset (an int scalar)
 *
 * x has N + 3 elements (the kernel reads them from x + offset, offset 1 in
 * blur1d.json), y has N. Every configuration computes the same y
 * bit for bit: the stencil sum of int16 values is exact in both accumulator
 * types (|sum| <= 4 * 32767 < 2^24), and the blend is the same two float
 * products and one sum, contraction off.
 *
 * Defined before this source (rooftune's `#define` lines): the tuning
 * parameters WG (work-group size), PER_ITEM (outputs per work-item),
 * ACC (the accumulator's type: `int` or `float`, a string parameter),
 * USE_LOCAL (1: stage the group's samples in __local memory; 0: read
 * them from global memory), and the problem variable N.
 *
 * Launch: work-groups of WG items, ceil(N / (WG * PER_ITEM)) groups; group
 * g computes y[g*WG*PER_ITEM ...] in PER_ITEM strided rounds (item l
 * writes base + l + r*WG, so that a round's stores are contiguous).
 * `tile` is __local memory of at least WG * PER_ITEM + 2 int16 values.
 *
 * Written for rooftune (the project's own code, not third-party).
 */
#pragma OPENCL FP_CONTRACT OFF

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void blur1d(__global float *y, __global const short *x, __local short *tile,
            const float alpha, const float beta, const int offset)
{
    const int l = (int)get_local_id(0);
    const int base = (int)get_group_id(0) * (WG * PER_ITEM);
    __global const short *xs = x + offset;
#if USE_LOCAL
    /* The group's WG*PER_ITEM + 2 samples, clipped to the N + 2 there are. */
    for (int j = l; j < WG * PER_ITEM + 2; j += WG)
        if (base + j < N + 2)
            tile[j] = xs[base + j];
    barrier(CLK_LOCAL_MEM_FENCE);
    #define SAMPLE(j) tile[(j) - base]
#else
    #define SAMPLE(j) xs[j]
#endif
    for (int r = 0; r < PER_ITEM; r++) {
        const int i = base + l + r * WG;
        if (i < N) {
            ACC s = (ACC)SAMPLE(i) + (ACC)2 * (ACC)SAMPLE(i + 1) + (ACC)SAMPLE(i + 2);
            float a = alpha * (float)s;
            float b = beta * y[i];
            y[i] = b + a;
        }
    }
}
