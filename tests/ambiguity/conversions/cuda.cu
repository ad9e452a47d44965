// CUDA's conversions, run on an H100 (nvcc 13, -arch=sm_90): C casts in
// device code; nvcc -ptx shows cvt.rzi.s32.f32, cvt.rzi.u32.f32 (shared by
// the UINT8, UINT16 and UINT32 casts of f), cvt.rzi.s32.f64, cvt.rzi.u32.f64
// and cvt.rzi.u64.f64.  Output (cuda.txt): the value, then INT8 of f, UINT8
// of f, INT32 of d, UINT32 of d, UINT32 of f, UINT64 of d, INT16 of d, UINT16
// of f (d the double value, f its float).
#include <cmath>
#include <cstdint>
#include <cstdio>
__global__ void k(const double *v, long long *o) {
    int i = threadIdx.x;
    double d = v[i];
    float f = (float)d;
    long long *p = o + i * 8;
    p[0] = (int8_t)f; p[1] = (uint8_t)f; p[2] = (int32_t)d; p[3] = (uint32_t)d;
    p[4] = (uint32_t)f; p[5] = (long long)(uint64_t)d; p[6] = (int16_t)d; p[7] = (uint16_t)f;
}
int main() {
    double h[12] = {NAN, INFINITY, -INFINITY, -1, -300, 70000, -3e9, 3e9, 5e9, -1e19, 1e19, 3e38};
    double *v;
    long long *o, r[96];
    cudaMalloc(&v, 96);
    cudaMalloc(&o, 768);
    cudaMemcpy(v, h, 96, cudaMemcpyHostToDevice);
    k<<<1, 12>>>(v, o);
    cudaMemcpy(r, o, 768, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 12; i++) {
        printf("%g", h[i]);
        for (int j = 0; j < 8; j++) printf(" %lld", r[i * 8 + j]);
        printf("\n");
    }
}
