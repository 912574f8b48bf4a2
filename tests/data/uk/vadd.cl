/* tests/data/uk/vadd.cl -- test_uk's OpenCL kernel: c = a + alpha * b,
** each work item UNROLL consecutive elements (n, block_size_x and unroll
** come from rooftune's #define lines). */
__kernel void vadd(__global const float *a, __global const float *b, __global float *c,
                   const float alpha) {
  const int base = get_global_id(0) * unroll;
  for (int u = 0; u < unroll; u++)
    if (base + u < n) c[base + u] = a[base + u] + alpha * b[base + u];
}
