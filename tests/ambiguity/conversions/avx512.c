/* AVX-512's conversions, run on the device machine's Intel Xeon (avx512f):
   gcc 12 -O2 -mavx512f -mavx512vl -ftree-vectorize.  u, w: vcvttsd2usi
   (UINT32, UINT64); b: vcvttsd2si (UINT8, through int32); L: vcvttpd2udq
   (UINT32, vectorised).  Output (avx512.txt): value, u, w, b, L. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
double V[] = {NAN, INFINITY, -INFINITY, -1, -300, 70000, -3e9, 3e9, 5e9, -1e19, 1e19, 3e38};
__attribute__((noinline)) uint32_t u(double x) { return x; }
__attribute__((noinline)) uint64_t w(double x) { return x; }
__attribute__((noinline)) uint8_t b(double x) { return x; }
__attribute__((noinline)) void L(double *x, uint32_t *o) { for (int i = 0; i < 16; i++) o[i] = x[i]; }
int main(void) {
    double x[16];
    uint32_t o[16];
    for (int i = 0; i < 12; i++) {
        for (int j = 0; j < 16; j++) x[j] = V[i];
        L(x, o);
        printf("%g %u %llu %u %u\n", V[i], u(V[i]), (unsigned long long)w(V[i]), b(V[i]), o[15]);
    }
}
