"""How a stage computes on its device: which device it gets, deterministic kernels on CUDA (and the
nondeterministic ones that ran anyway), and the precision its paper declares.

``visible`` is the device of a stage run in this process (``--local``, ``paperdag stage``): ``cuda`` whenever torch
sees a GPU, whatever the stage's ``Resources``; where no GPU driver is present (``/dev/nvidiactl``, ``/dev/kfd``,
``/dev/dxg``) it answers ``cpu`` without importing torch. On Ray a stage gets ``cuda`` when the scheduler gave it a GPU
(``ray_exec``). ``deterministic`` runs a stage on CUDA with torch's deterministic algorithms in warn-only mode (cuBLAS
given the workspace setting they need before CUDA starts; the previous settings restored afterwards) and collects
the ops torch warns have no deterministic kernel, which the stage's environment records. ``autocast`` is bf16
autocast where a paper declares ``precision: bf16`` (a param, so it enters the key of the stages that declare it),
and nothing where it declares fp32 or no precision at all.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ContextManager, Literal

Precision = Literal["fp32", "bf16"]  # the type of a paper's ``precision`` param
PRECISIONS: tuple[str, ...] = ("fp32", "bf16")
DEFAULT_PRECISION = "fp32"
CUBLAS_WORKSPACE = ":4096:8"  # what cuBLAS needs for deterministic results (CUBLAS_WORKSPACE_CONFIG)
GPU_DRIVERS = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")  # NVIDIA, ROCm, WSL
ALERT = re.compile(r"(?s)(.+?) does not have a deterministic implementation, but you set "
                   r"'torch\.use_deterministic_algorithms\(True, warn_only=True\)'")


def _cublas_workspace() -> None:
    """Set CUBLAS_WORKSPACE_CONFIG (unless the user did) while cuBLAS has not started in this process."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)


def visible() -> str:
    """``cuda`` when this process sees a GPU, else ``cpu`` (module docstring)."""
    _cublas_workspace()
    if "torch" not in sys.modules and not any(Path(p).exists() for p in GPU_DRIVERS):
        return "cpu"
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


@contextlib.contextmanager
def deterministic(device: str) -> Iterator[list[str]]:
    """Run the block deterministically where torch can (CUDA) and yield the list of the ops torch warned have no
    deterministic kernel, filled (sorted, each once) when the block ends; other warnings are shown as usual."""
    ops: set[str] = set()
    found: list[str] = []
    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        if match := ALERT.match(str(message)):
            ops.add(match.group(1).strip())
        else:
            shown(message, category, filename, lineno, file, line)

    try:
        with _deterministic_kernels(device), warnings.catch_warnings():
            warnings.filterwarnings("always", message=ALERT.pattern)  # every op, however often it warned before
            warnings.showwarning = show
            yield found
    finally:
        found.extend(sorted(ops))


@contextlib.contextmanager
def _deterministic_kernels(device: str) -> Iterator[None]:
    """On CUDA: torch's deterministic algorithms (warn-only) and no cuDNN autotuning for the block, the previous
    settings restored after it; elsewhere nothing."""
    if not device.startswith("cuda"):
        yield
        return
    _cublas_workspace()
    import torch

    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.benchmark)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
        torch.backends.cudnn.benchmark = saved[2]


def _checked(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    return precision


def declared_precision(params: Any) -> str:
    """The precision a stage's params declare: ``fp32`` where the paper has no ``precision`` param; an
    AttributeError where the paper has one that the stage does not declare (it would not be in the stage's key)."""
    if "precision" not in getattr(type(params), "model_fields", {}):
        return DEFAULT_PRECISION
    if "precision" not in params.model_fields_set:
        raise AttributeError("param 'precision' is not declared by this stage: add it to Stage(params=...), so that "
                             "it enters the stage's cache key")
    return _checked(str(params.precision))


def autocast(device: str, precision: str) -> ContextManager[Any]:
    """``torch.autocast(<device type>, dtype=torch.bfloat16)`` for ``bf16``, a no-op for ``fp32``."""
    if _checked(precision) == DEFAULT_PRECISION:
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type=device.split(":", 1)[0], dtype=torch.bfloat16)
