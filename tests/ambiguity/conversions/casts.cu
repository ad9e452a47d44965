// Float -> integer conversions on an NVIDIA GPU (docs/ambiguities.md, "Float to
// integer, platform by platform"): CUDA's round-toward-zero intrinsics and C casts
// in device code, over the values of casts.c.  Build: nvcc -O3 -o casts casts.cu
// (nvcc -ptx shows the cvt instruction of each cast).  Output: one line per
// (source, target, value): "<source> <target> <value> <result>".
#include <cmath>
#include <cstdint>
#include <cstdio>

static const double VALUES[] = {
    NAN, INFINITY, -INFINITY, -0.5, -1.0, -1.5, 255.5, -300.0, 300.0, 70000.0, -70000.0,
    2147483647.0, -2147483648.0, -2147483649.0, -3e9, 2147483648.0, 3e9, 4294967295.0,
    4294967296.0, 5e9, -1e19, 9223372036854775808.0, 1.3835058055282164e19,
    18446744073709551616.0, 3.4e38};
constexpr int COUNT = sizeof VALUES / sizeof VALUES[0];
constexpr int KINDS = 24;  // 8 casts and 4 intrinsics per source type

template <typename S>
__global__ void convert(const S *in, long long *out) {
    int i = threadIdx.x;
    if (i >= COUNT) return;
    S x = in[i];
    long long *o = out + i * KINDS;
    o[0] = (int8_t)x; o[1] = (int16_t)x; o[2] = (int32_t)x; o[3] = (int64_t)x;
    o[4] = (uint8_t)x; o[5] = (uint16_t)x; o[6] = (uint32_t)x; o[7] = (long long)(uint64_t)x;
    if constexpr (sizeof(S) == 4) {
        o[8] = __float2int_rz(x); o[9] = __float2uint_rz(x); o[10] = __float2ll_rz(x);
        o[11] = (long long)__float2ull_rz(x);
    } else {
        o[8] = __double2int_rz(x); o[9] = __double2uint_rz(x); o[10] = __double2ll_rz(x);
        o[11] = (long long)__double2ull_rz(x);
    }
}

template <typename S>
void run(const char *source) {
    static const char *NAMES[] = {"INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
                                  "INT32:rz", "UINT32:rz", "INT64:rz", "UINT64:rz"};
    S host[COUNT];
    for (int i = 0; i < COUNT; i++) host[i] = (S)VALUES[i];
    S *in; long long *out;
    cudaMalloc(&in, sizeof host);
    cudaMalloc(&out, sizeof(long long) * COUNT * KINDS);
    cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
    convert<S><<<1, 64>>>(in, out);
    long long result[COUNT * KINDS];
    cudaMemcpy(result, out, sizeof result, cudaMemcpyDeviceToHost);
    for (int k = 0; k < 12; k++)
        for (int i = 0; i < COUNT; i++)
            printf("%s %s %.17g %lld\n", source, NAMES[k], (double)host[i], result[i * KINDS + k]);
    cudaFree(in); cudaFree(out);
}

int main() {
    run<float>("float");
    run<double>("double");
    return cudaDeviceSynchronize() != cudaSuccess;
}
