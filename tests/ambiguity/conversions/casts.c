/* Float -> integer conversions as C casts compile them (docs/ambiguities.md,
   "Float to integer, platform by platform"): one loop per (source, target)
   type over N copies of each value, so that -O3 vectorises it (the first
   and the last element are printed: a vectorised body and no scalar tail,
   N being a multiple of every vector width).  C leaves an out-of-range
   value undefined (C11 6.3.1.4); what each instruction sequence gives is
   what this program measures.  Output: one line per (source, target,
   value): "<source> <target> <value> <first> <last>". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define N 64
static const double VALUES[] = {
    NAN, INFINITY, -INFINITY, -0.5, -1.0, -1.5, 255.5, -300.0, 300.0, 70000.0, -70000.0,
    2147483647.0, -2147483648.0, -2147483649.0, -3e9, 2147483648.0, 3e9, 4294967295.0,
    4294967296.0, 5e9, -1e19, 9223372036854775808.0, 1.3835058055282164e19,
    18446744073709551616.0, 3.4e38};
#define COUNT (sizeof VALUES / sizeof VALUES[0])

#define LOOP(S, T)                                                                  \
    __attribute__((noinline)) void conv_##S##_##T(const S *restrict in, T *restrict out) { \
        for (int i = 0; i < N; i++) out[i] = (T)in[i];                              \
    }
#define BOTH(T) LOOP(float, T) LOOP(double, T)
BOTH(int8_t) BOTH(int16_t) BOTH(int32_t) BOTH(int64_t) BOTH(uint8_t) BOTH(uint16_t) BOTH(uint32_t) BOTH(uint64_t)

#define RUN(S, T, NAME)                                                             \
    do {                                                                            \
        static S in[N];                                                             \
        static T out[N];                                                            \
        for (unsigned v = 0; v < COUNT; v++) {                                      \
            for (int i = 0; i < N; i++) in[i] = (S)VALUES[v];                       \
            conv_##S##_##T(in, out);                                                \
            printf("%s %s %.17g %lld %lld\n", #S, NAME, (double)(S)VALUES[v],        \
                   (long long)out[0], (long long)out[N - 1]);                       \
        }                                                                           \
    } while (0)
#define TYPE(T, NAME) RUN(float, T, NAME); RUN(double, T, NAME)

int main(void) {
    TYPE(int8_t, "INT8"); TYPE(int16_t, "INT16"); TYPE(int32_t, "INT32"); TYPE(int64_t, "INT64");
    TYPE(uint8_t, "UINT8"); TYPE(uint16_t, "UINT16"); TYPE(uint32_t, "UINT32"); TYPE(uint64_t, "UINT64");
    return 0;
}
