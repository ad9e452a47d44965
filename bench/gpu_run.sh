#!/usr/bin/env bash
# Issue 8, part 4: the default suite on the GPU machine (torch with CUDA, and
# onnxruntime's CUDAExecutionProvider when the installed build has it).
# Run from the repository root in an environment that already has torch+CUDA,
# onnxruntime, onnx, numpy, click, pyyaml, rich, ml_dtypes, jsonschema, mpmath:
#     OUT=/some/folder bash bench/gpu_run.sh
# Then bring $OUT/*.report.json back and regenerate the page:
#     dmlconform results docs/results/*.summary.json torch-cuda.report.json [onnxruntime-cuda.report.json] \
#         -o docs/results/README.md --summaries docs/results
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:?set OUT to a folder for the reports}"
PY="${PYTHON:-python}"
mkdir -p "$OUT"
# --no-build-isolation first: the GPU machine has no network, and an isolated build would
# try to download setuptools; fall back to the plain command where setuptools is missing.
"$PY" -m pip install --no-deps --no-build-isolation -e . >"$OUT/pip.log" 2>&1 \
  || "$PY" -m pip install --no-deps -e . >>"$OUT/pip.log" 2>&1 || { tail -20 "$OUT/pip.log"; exit 2; }
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available())"
"$PY" -m dmlconform backends | tee "$OUT/backends.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee "$OUT/gpu.txt" || true
run() {  # label, then dmlconform run arguments; exit 1 (FAILs found) is expected
  local label=$1; shift
  "$PY" -m dmlconform run --no-progress "$@" -o "$OUT/$label" >"$OUT/$label.log" 2>&1
  local rc=$?
  tail -4 "$OUT/$label.log"
  if [ -f "$OUT/$label/report.json" ]; then cp "$OUT/$label/report.json" "$OUT/$label.report.json"; fi
  echo "$label: exit $rc"
}
run torch-cuda --backend torch --backend-arg device=cuda
run torch-cpu --backend torch
if "$PY" -c "import onnxruntime as o, sys; sys.exit('CUDAExecutionProvider' not in o.get_available_providers())"; then
  run onnxruntime-cuda --backend onnxruntime --backend-arg provider=CUDAExecutionProvider
else
  echo "onnxruntime has no CUDAExecutionProvider here: skipped"
fi
ls -la "$OUT"
