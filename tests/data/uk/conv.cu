/* tests/data/uk/conv.cu -- test_uk's CUDA kernel: a 1-D convolution of
** width filter_width (max(filter_width) coefficients in constant memory),
** each thread tile_x outputs, the input staged through dynamic shared
** memory when use_shared; T is the element type (a string parameter),
** SCALE a float parameter. */
__constant__ float d_filter[MAXF];

__global__ void conv(T *out, const T *in, int nout) {
  extern __shared__ T sh[];
  const int x0 = (blockIdx.x * block_size_x + threadIdx.x) * tile_x;
  for (int t = 0; t < tile_x; t++) {
    const int x = x0 + t;
    if (x >= nout) return;
    T acc = 0;
    for (int f = 0; f < filter_width; f++) acc += in[x + f] * d_filter[f];
    if (use_shared) sh[threadIdx.x] = acc;
    out[x] = acc * (T)SCALE;
  }
}
