/*
 * pnpoly.cu -- point-in-polygon by the crossing number (even-odd rule),
 * written for rooftune from the algorithm, with the tuning parameters of
 * the benchmark hub's pnpoly space (data/t1/pnpoly.json; the hub ships no
 * source): for each of n points p, bitmap[i] = 1 when a ray from p towards
 * +x crosses the polygon's boundary an odd number of times, else 0.
 *
 * An edge (vj, vk) is crossed when it straddles the ray's line,
 * exactly one of vj.y > p.y and vk.y > p.y holds (so vk.y != vj.y), and
 * the edge meets that line right of p:
 *     p.x < vj.x + (vk.x - vj.x) * (p.y - vj.y) / (vk.y - vj.y).
 * The polygon (VERTICES float2 vertices, closed: the last joins the first)
 * is the __constant__ symbol d_vertices, which the host fills.
 *
 * Tuning parameters (`#define` lines before this source):
 *   block_size_x    threads per block;
 *   tile_size       points per thread, kept in registers while the
 *                   vertices are read once (strided: thread t of block b
 *                   takes b*block_size_x*tile_size + t + s*block_size_x);
 *   between_method  how "straddles" is computed: 0 (a > y) != (b > y);
 *                   1 min(a, b) <= y && y < max(a, b); 2 the sum of the two
 *                   comparisons == 1; 3 the exclusive or of the comparisons
 *                   as integers;
 *   use_method      how a crossing is counted: 0 a branch that flips a
 *                   flag (the right-of-p test evaluated only for straddling
 *                   edges); 1 branch-free: flag ^= straddles & right-of-p
 *                   (the test evaluated for every edge; its division by
 *                   zero on a horizontal edge gives inf or NaN, whose
 *                   comparison is false and is masked anyway); 2 a count
 *                   of crossings whose parity is taken at the end.
 * All variants are the same predicate on IEEE floats: the four straddle
 * tests agree for every non-NaN input, and the right-of-p test is the one
 * inline function below, so every configuration computes the same bitmap.
 *
 * Written for rooftune (the project's own code, not third-party).
 */
#define VERTICES 600

__constant__ float2 d_vertices[VERTICES];

__device__ __forceinline__ int straddles(float a, float b, float y)
{
#if between_method == 0
    return (a > y) != (b > y);
#elif between_method == 1
    return fminf(a, b) <= y && y < fmaxf(a, b);
#elif between_method == 2
    return ((int)(a > y) + (int)(b > y)) == 1;
#elif between_method == 3
    return (int)(a > y) ^ (int)(b > y);
#else
#error between_method must be 0, 1, 2 or 3
#endif
}

__device__ __forceinline__ int right_of(float2 p, float2 vj, float2 vk)
{
    return p.x < vj.x + (vk.x - vj.x) * (p.y - vj.y) / (vk.y - vj.y);
}

__global__ void __launch_bounds__(block_size_x)
cn_pnpoly(int *bitmap, const float2 *points, int n)
{
    const int first = blockIdx.x * block_size_x * tile_size + threadIdx.x;
    float2 p[tile_size];
    int c[tile_size];
    #pragma unroll
    for (int s = 0; s < tile_size; s++) {
        const int i = first + s * block_size_x;
        p[s] = i < n ? points[i] : make_float2(0.0f, 0.0f);
        c[s] = 0;
    }
    for (int k = 0, j = VERTICES - 1; k < VERTICES; j = k++) {
        const float2 vj = d_vertices[j];
        const float2 vk = d_vertices[k];
        #pragma unroll
        for (int s = 0; s < tile_size; s++) {
#if use_method == 0
            if (straddles(vj.y, vk.y, p[s].y) && right_of(p[s], vj, vk))
                c[s] = !c[s];
#elif use_method == 1
            c[s] ^= straddles(vj.y, vk.y, p[s].y) & right_of(p[s], vj, vk);
#elif use_method == 2
            c[s] += straddles(vj.y, vk.y, p[s].y) && right_of(p[s], vj, vk);
#else
#error use_method must be 0, 1 or 2
#endif
        }
    }
    #pragma unroll
    for (int s = 0; s < tile_size; s++) {
        const int i = first + s * block_size_x;
        if (i < n)
            bitmap[i] = c[s] & 1;
    }
}
