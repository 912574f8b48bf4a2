/* tests/data/uk/e2e.cl -- test_uk's end-to-end OpenCL kernel: c = a +
** alpha * b, unroll elements per work item; the configurations with bug 1
** get the last element wrong (wrong_result), the others match the given
** reference (constant inputs: 1.5 + 2.5 * 2 = 6.5 everywhere). */
__kernel void vadd(__global const float *a, __global const float *b, __global float *c,
                   const float alpha) {
  const int base = get_global_id(0) * unroll;
  for (int u = 0; u < unroll; u++) {
    const int i = base + u;
    if (i < n) c[i] = a[i] + alpha * b[i] + (bug && i == n - 1 ? 1.0f : 0.0f);
  }
}
