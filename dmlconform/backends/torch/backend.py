"""PyTorch as a backend, on the CPU or a CUDA device.

DESIGN.md, "Backends" (``torch``; issue 8).  Each spec with a torch function
of the same meaning maps to it (`TORCH_OPS`).  Tensors are bound as DirectML
binds them: each case buffer becomes one torch tensor (copied to the device
for ``device=cuda``, and back after the run) and every tensor is an
``as_strided`` view of its buffer, so padded and broadcast (stride 0) layouts
reach torch as they are.  An in-place case runs the ``_`` variant of the
function on the input's view, which shares the output's storage.

Where torch's function differs from the doc (hardsigmoid's fixed slope,
softshrink/hardshrink against shrink, selu's fixed constants), the mapping
takes only the cases it expresses exactly and rejects the rest with
`NotSupportedError`: never an approximation.  Options (``--backend-arg``):
``device`` (``cpu`` default, ``cuda``, ``cuda:1``...), ``feature_level``,
``tf32`` (``off`` default, ``on``: ``torch.backends.cuda.matmul.allow_tf32``
for the contractions, `backends.torch.contraction`, and
``torch.backends.cudnn.allow_tf32`` for the convolutions,
`backends.torch.window`; the backend info says which).

The info declares, per device, the operators whose torch kernels keep
FLOAT16 sums in FLOAT16 (`FLOAT16_ACCUMULATION`): they are judged by the
float16 reading of ``float16-accumulator``, the others by float32's.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from typing import Any

import numpy as np

from dmlconform.backends.base import BackendInfo, NotSupportedError, Support, level_option, unknown_options
from dmlconform.backends.mapping import Attrs, check_divisor, implements, mapping_for, support_of
from dmlconform.backends.torch import contraction as torch_contraction
from dmlconform.backends.torch import elementwise as torch_elementwise
from dmlconform.backends.torch import index_map as torch_index_map
from dmlconform.backends.torch import index_map_generated as torch_index_map_generated
from dmlconform.backends.torch import interpolation as torch_interpolation
from dmlconform.backends.torch import normalization as torch_normalization
from dmlconform.backends.torch import reduction as torch_reduction
from dmlconform.backends.torch import roi as torch_roi
from dmlconform.backends.torch import sequence as torch_sequence
from dmlconform.backends.torch import softmax as torch_softmax
from dmlconform.backends.torch import value_scale as torch_value_scale
from dmlconform.backends.torch import window as torch_window
from dmlconform.backends.torch.ops import TorchOp
from dmlconform.cases.model import Case, array_tensors
from dmlconform.errors import InputError
from dmlconform.spec.model import FeatureLevel, Spec, field_name

INSTALL_HINT = "pip install 'dmlconform[torch]'"


#: Every spec operator this backend maps: the element-wise adapter's, then each family's
#: (`backends.torch.<family>.TORCH_OPS`: the keyword arguments of a `TorchOp`), in this order.
TORCH_OPS: Mapping[str, TorchOp] = {
    **torch_elementwise.TORCH_OPS,
    **{op: TorchOp(**kwargs) for family in (torch_softmax, torch_sequence, torch_reduction, torch_contraction,
                                            torch_value_scale, torch_index_map, torch_window,
                                            torch_normalization, torch_interpolation, torch_index_map_generated,
                                            torch_roi)
       for op, kwargs in family.TORCH_OPS.items()},
}


#: Messages with which torch refuses an input cleanly (a type without a
#: kernel, an attribute it cannot hold in the tensor's type, alpha = 0).
_REFUSALS = ("not implemented for", "not supported", "Unsupported", "without overflow", "ZeroDivisionError")


#: Device kind -> the operators whose torch kernels accumulate FLOAT16 in FLOAT16
#: (`BackendInfo.float16_accumulation`), each measured (torch 2.13 CPU) or read
#: in torch's source (CUDA); the others keep float32 (``at::opmath_type``).
#: * cpu, log-softmax: the last-dimension kernel (the mapping reduces the
#:   last dimension) keeps the sum of exp and its log in ``scalar_t`` arrays
#:   (``tmp_sum_scalar``, ``serial_vec_log_softmax_lastdim_range`` in
#:   aten/src/ATen/native/cpu/LogSoftmaxKernelImpl.h): log_softmax([0, -7.18])
#:   in FLOAT16 is -9.76e-4 where the value is -7.62e-4 (with
#:   ``dtype=float32``, right).  Softmax keeps float32 and passes.
#: * cpu, REDUCE's MULTIPLY alone: ``prod`` multiplies in ``scalar_t``
#:   (``prod_kernel_impl``, aten/src/ATen/native/cpu/ReduceOpsKernel.cpp: 2000
#:   factors 1 + 2^-10 give 6.89 for 7.04), while REDUCE's other functions sum
#:   in float32 (10,000 ones sum to 10,000): declared for that Function value
#:   only, so SUM's bounds stay float32's.  cumsum/cumprod keep
#:   ``at::acc_type`` (float32) and pass; so does GEMM.
#: * cpu, CONVOLUTION BACKWARD: ``conv_transpose{d}d`` in FLOAT16 sums the taps'
#:   overlapping columns in ``scalar_t`` (col2im): measured (torch 2.13 CPU), every
#:   FLOAT16 backward random case beyond float32's bound, within FLOAT16's;
#:   FORWARD passes float32's.
#: * cpu, LP_POOLING(1): ``lp_pool{d}d`` is ``x.pow(P)``, ``avg_pool * K`` and
#:   ``.pow(1/P)`` each rounded to ``scalar_t`` (torch/nn/functional.py): measured
#:   (torch 2.13 CPU), FLOAT16 P 3 windows beyond float32's bound, within FLOAT16's.
#: * cuda, CONVOLUTION: cuDNN (on by default) picks FLOAT16 convolution kernels
#:   that accumulate in FLOAT16: measured (torch on an H100), 32 FLOAT16 cases
#:   beyond float32's bound (15 ULP at n = 61), all within float32's with
#:   ``torch.backends.cudnn.enabled = False``.
#: * cuda, cumsum/cumprod: ``scan_dim<scalar_t>`` with ``std::plus<scalar_t>``
#:   and ``std::multiplies<scalar_t>`` (aten/src/ATen/native/cuda/CumsumKernel.cu,
#:   CumprodKernel.cu): every running value rounded to at::Half.  CUDA's
#:   ``prod`` and ``sum`` accumulate at::Half in float (``reduce_dispatch``,
#:   ReduceSumProdKernel.cu), its softmax in ``acc_type`` (float32).
#: * cuda, LP_POOLING(1): the same Python composition as on the cpu (each step rounded
#:   to ``scalar_t``): measured (torch 2.11 on an H100), 21 FLOAT16 cases beyond float32's
#:   bound.
#: * cuda, LOCAL_RESPONSE_NORMALIZATION: ``local_response_norm`` is Python too
#:   (torch/nn/functional.py): ``x * x``, ``avg_pool``, ``mul(alpha).add(k).pow(beta)``
#:   and the division each rounded to ``scalar_t``: measured (torch 2.11 on an H100), one
#:   FLOAT16 element 2 ULP beyond float32's bound (the cpu's avg_pool happens to pass it).
#: * cpu and cuda, ROI_ALIGN(1): torchvision's roi_align kernels (csrc/ops/cpu and
#:   cuda/roi_align_kernel) compute in ``scalar_t`` throughout: the region, bin and sample
#:   coordinates, the bilinear weights and the running sum each rounded to at::Half.
#:   Measured (torchvision on an H100), 32 FLOAT16 cases beyond float32's bound (30,000 ULP
#:   against the primary reading; they take the ``band`` reading of ``out-of-bounds``), and a
#:   float16 emulation of the kernel reproduces its values; declared, all 76 computed ROI_ALIGN(1)
#:   cases PASS (torch 2.11, torchvision 0.26 on an H100).
FLOAT16_ACCUMULATION: Mapping[str, frozenset[str]] = {
    "cpu": frozenset({"ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1", "REDUCE:DML_REDUCE_FUNCTION_MULTIPLY",
                      "CONVOLUTION:DML_CONVOLUTION_DIRECTION_BACKWARD", "LP_POOLING", "LP_POOLING1",
                      # instance_norm (Axes 2,3 at 4-D; CrossChannel FALSE, the one BOOL at False in the cases torch
                      # runs) rounds FLOAT16 statistics to FLOAT16 (backends/torch/normalization.py)
                      "MEAN_VARIANCE_NORMALIZATION1:2,3", "MEAN_VARIANCE_NORMALIZATION2:2,3",
                      "MEAN_VARIANCE_NORMALIZATION:False",
                      # col2im adds each column into the image in scalar_t (aten/src/ATen/native/im2col.h): measured
                      # (torch 2.13 CPU), 6 FLOAT16 FOLD cases beyond float32's bound, within FLOAT16's
                      "FOLD",
                      # batch_norm(training=True) likewise keeps a FLOAT16 input's mean and inverse deviation in
                      # FLOAT16 before the normalization step (backends/torch/batch_normalization.py)
                      "BATCH_NORMALIZATION_TRAINING", "ROI_ALIGN", "ROI_ALIGN1"}),
    "cuda": frozenset({"CUMULATIVE_SUMMATION", "CUMULATIVE_PRODUCT", "CONVOLUTION", "LP_POOLING", "LP_POOLING1",
                       "LOCAL_RESPONSE_NORMALIZATION", "ROI_ALIGN", "ROI_ALIGN1"}),
}


def float16_accumulation(device: str) -> frozenset[str]:
    """The operators torch accumulates FLOAT16 in FLOAT16 on ``device``
    (``cpu``, ``cuda``, ``cuda:1``...; another kind declares none)."""
    return FLOAT16_ACCUMULATION.get(device.partition(":")[0], frozenset())


class TorchBackend:
    """torch on ``device`` (``cpu`` or ``cuda[:N]``)."""

    def __init__(self, device: str = "cpu", feature_level: str | None = None, tf32: str = "off",
                 **options: str) -> None:
        if options:
            raise InputError(f"torch backend: {unknown_options(options, ('device', 'feature_level', 'tf32'))}")
        if tf32 not in ("on", "off"):
            raise InputError(f"torch backend: tf32={tf32!r}; write tf32=on or tf32=off")
        self.device = device
        self.level = level_option("torch", feature_level) or max(FeatureLevel)
        self.tf32 = tf32 == "on"  # torch.backends.cuda.matmul.allow_tf32, set before each run
        self._torch, self._reason = _import(device)

    def info(self) -> BackendInfo:
        t = self._torch
        version = getattr(t, "__version__", "not installed")
        where = platform.machine()
        if t is not None and self._reason is None and self.device.startswith("cuda"):
            where = t.cuda.get_device_name(t.device(self.device))
        tf32 = f", tf32 matmul and cudnn {'on' if self.tf32 else 'off'}"
        return BackendInfo(name="torch", device=f"torch {version} {self.device} on {where}{tf32}", version=version,
                           feature_level=self.level, flush_subnormals=False,
                           available=self._reason is None, reason=self._reason,
                           float16_accumulation=float16_accumulation(self.device),
                           subset=True)  # torch's functions, not DirectML's: a mapping covers part of each table

    def implements(self, spec: Spec) -> str | None:
        """Why torch does not implement ``spec``'s operator at all
        (`backends.base.ImplementingBackend`), from the function table."""
        return implements(TORCH_OPS, spec, "torch has no function for")

    def supports(self, spec: Spec, case: Case) -> Support:
        return support_of(_resolve, spec, case)

    def run(self, spec: Spec, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        op, a = _resolve(spec, case)
        if op.divisor is not None:
            check_divisor(case, buffers, op.divisor, spec.operator)
        t = self._torch
        t.backends.cuda.matmul.allow_tf32 = self.tf32  # the process-wide switch, as this backend's option says
        try:
            self._run(t, op, a, case, buffers)
        except (TypeError, RuntimeError, NotImplementedError) as exc:
            text = str(exc)
            if any(m in text for m in _REFUSALS):
                raise NotSupportedError(f"torch {t.__version__} ({self.device}): {text.splitlines()[0]}") from exc
            raise

    def _run(self, t: Any, op: TorchOp, a: Attrs, case: Case, buffers: Mapping[str, np.ndarray]) -> None:
        storage: dict[int, Any] = {}   # one tensor per distinct buffer (an in-place pair shares one)

        def tensor(name: str) -> Any:
            buf = buffers[name]
            if id(buf) not in storage:
                host = t.from_numpy(buf)
                storage[id(buf)] = host if self.device == "cpu" else host.to(self.device)
            return storage[id(buf)]

        def view(td: Any) -> Any:
            return tensor(td.name).as_strided(td.sizes, td.strides)

        out = case.outputs[0]
        aliased = dict(case.aliases).get(out.name)
        if aliased is not None and op.inplace is not None and case.input(aliased).strides == out.strides:
            op.inplace(view(case.input(aliased)), a)
        else:
            given = {i.name for i in case.inputs}  # an optional tensor the case leaves out: None
            args = [view(case.input(n)) if n in given else [view(x) for x in array_tensors(case.inputs, n)] or None
                    for n in op.inputs]  # a tensor array (JOIN's InputTensors[k]): a list of its views in order
            result = op.fn(t, args, a, out.sizes) if op.sizes else op.fn(t, args, a)
            # several outputs: a tuple; a tensor array's (SPLIT's OutputTensors[k]): a list, in index order
            if isinstance(result, list):
                pairs = zip(array_tensors(case.outputs, field_name(case.outputs[0].name)), result)
            else:
                pairs = zip(case.outputs, result if op.outputs > 1 else (result,))
            for o, r in pairs:
                view(o).copy_(r.to(view(o).dtype))
        if self.device != "cpu":  # copy the output buffers back from device memory
            for o in case.outputs:
                buffers[o.name][...] = storage[id(buffers[o.name])].cpu().numpy()


def _resolve(spec: Spec, case: Case) -> tuple[TorchOp, Attrs]:
    op = mapping_for(TORCH_OPS, spec, case, "torch has no function for")
    a = Attrs(spec, case)
    if op.check is not None:
        op.check(a)
    return op, a


def _import(device: str) -> tuple[Any, str | None]:
    """torch, and why ``device`` cannot be used (None when it can)."""
    try:
        import torch  # noqa: PLC0415 - torch is optional (the [torch] extra): the backend reports itself unavailable
    except ImportError:
        return None, f"torch is not installed ({INSTALL_HINT})"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            return torch, (f"device={device}: torch {torch.__version__} sees no CUDA device "
                           f"(built with CUDA {torch.version.cuda or 'none'})")
    elif device != "cpu":
        return torch, f"device={device!r}: use cpu or cuda[:N]"
    return torch, None

