/*
 * fir.cu -- rooftune's own small CUDA example kernel for T1 files
 * (fir.json): a 16-tap FIR filter whose taps live in constant memory,
 * accumulated into a float64 signal that is read and written:
 *
 *     y[i] = beta * y[i] + sum_{k<16} taps[k] * x[i + shift + k],  0 <= i < N
 *
 * x (float32) has N + shift + 15 elements, y (float64) has N; beta
 * (double) and shift (int) are scalars, taps (float32, 16) a __constant__
 * symbol that rooftune fills before the runs. Each product taps[k]*x[j] is
 * a float product converted to double and summed in double, k ascending,
 * in every configuration, so all configurations agree to the last bit
 * wherever the compiler contracts the same way (the T1 file's tolerance is
 * numpy's allclose default, which also covers a contraction difference).
 *
 * Defined before this source (rooftune's `#define` lines): the tuning
 * parameters BLOCK (threads per block), ITEMS (outputs per thread),
 * UNROLL (1: the tap loop fully unrolled; 0: kept as a loop), READ (the
 * function that loads x: `__ldg`, through the read-only cache, or
 * `ld_plain`, an ordinary load; a string parameter naming a function) and
 * the problem variable N. No `extern "C"`: rooftune wraps the source in
 * one (Kernel Tuner's rule), so `fir` and `taps` keep their names.
 *
 * Launch: blocks of BLOCK threads, ceil(N / (BLOCK * ITEMS)) blocks; block
 * b computes y[b*BLOCK*ITEMS ...] in ITEMS strided rounds (thread t writes
 * base + t + r*BLOCK, so that a round's accesses are coalesced).
 *
 * Written for rooftune (the project's own code, not third-party).
 */
#define TAPS 16

__constant__ float taps[TAPS];

__device__ __forceinline__ float ld_plain(const float *p) { return *p; }

__global__ void __launch_bounds__(BLOCK)
fir(double *y, const float *__restrict__ x, const double beta, const int shift)
{
    const int base = blockIdx.x * (BLOCK * ITEMS);
    const float *xs = x + shift;
    for (int r = 0; r < ITEMS; r++) {
        const int i = base + (int)threadIdx.x + r * BLOCK;
        if (i < N) {
            double s = 0.0;
#if UNROLL
            #pragma unroll
#else
            #pragma unroll 1
#endif
            for (int k = 0; k < TAPS; k++)
                s += (double)(taps[k] * READ(&xs[i + k]));
            y[i] = beta * y[i] + s;
        }
    }
}
