#!/bin/sh
# What the device machine's CPU and GPU give for casts.c and casts.cu (docs/ambiguities.md).
set -x
here=$(dirname "$0"); out=${OUT:-/tmp}
grep -o -w 'avx512[a-z]*' /proc/cpuinfo | sort -u | tr '\n' ' '; grep -m1 'model name' /proc/cpuinfo
gcc --version | head -1; nvcc --version | tail -2
for flags in "-O2" "-O3" "-O2 -mavx512f" "-O3 -mavx512f -mavx512vl" "-O3 -march=native"; do
  name=$(echo "$flags" | tr -d ' -='); gcc $flags -w -o /tmp/casts_$name "$here/casts.c" -lm \
    && /tmp/casts_$name > "$out/x86_$name.txt"
  objdump -d --no-show-raw-insn /tmp/casts_$name | grep -o -E 'v?cvtt[a-z0-9]+' | sort | uniq -c | tr '\n' ' '; echo " <- $flags"
done
objdump -d --no-show-raw-insn /tmp/casts_O2mavx512f | awk '/<conv_double_uint8_t>:|<conv_double_uint32_t>:|<conv_double_uint64_t>:/,/ret/' | head -80
nvcc -O3 -arch=sm_90 -o /tmp/casts_cu "$here/casts.cu" && /tmp/casts_cu > "$out/cuda.txt"
nvcc -O3 -arch=sm_90 -ptx -o "$out/casts.ptx" "$here/casts.cu"; grep -o -E 'cvt\.[a-z0-9.]+' "$out/casts.ptx" | sort | uniq -c
python3 - <<'PY' > "$out/torch_numpy.txt"
import numpy as np, torch
vals = [float("nan"), float("inf"), float("-inf"), -0.5, -1.0, -1.5, 255.5, -300.0, 300.0, 70000.0, -70000.0,
        2147483647.0, -2147483648.0, -2147483649.0, -3e9, 2147483648.0, 3e9, 4294967295.0, 4294967296.0, 5e9,
        -1e19, 9223372036854775808.0, 1.3835058055282164e19, 18446744073709551616.0, 3.4e38]
print("numpy", np.__version__, "torch", torch.__version__)
for src in ("float32", "float64"):
    for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        a = np.repeat(np.array(vals, src), 64).reshape(len(vals), 64)
        n = a.astype(name)
        for dev in ("cuda", "cpu"):
            try:
                t = torch.tensor(a, device=dev).to(getattr(torch, name)).cpu().numpy()
            except Exception as exc:
                t = None; print("torch", dev, src, name, "refused", type(exc).__name__)
            for v, row in zip(vals, range(len(vals))):
                if t is not None:
                    print("torch-" + dev, src, name.upper(), repr(float(np.array(v, src))), int(t[row, 0]), int(t[row, -1]))
        for v, row in zip(vals, range(len(vals))):
            print("numpy", src, name.upper(), repr(float(np.array(v, src))), int(n[row, 0]), int(np.array([a[row, 0]]).astype(name)[0]))
PY
ls -la "$out"
