"""The environment a stage ran in: what can make a recompute with the same key give other bytes.

``capture`` runs in the process that ran the stage, right after it (inside its thread limits): the device it ran on
(the GPU's name on CUDA, else the CPU model), the precision its params declare (fp32 where none) and its wall time, the
versions of the numerical stack and of the paper's own extra, the CPU model and the ISA extensions numerical kernels
dispatch on, the BLAS libraries loaded (library, version, kernel architecture, threads), and, where the stage used
torch, its CPU kernel level, BLAS, threads and CUDA version (on CUDA also cuDNN's, and ``nondeterministic``: the ops
torch warned ran without a deterministic kernel, ``[]`` when none did). A store entry's run.json holds its stage's
environment and those of the stages upstream of it, so the metrics stage's run.json describes every stage behind a
result; ``summarise`` folds them into the block ``metrics/<slug>.json`` carries (one value per field, or one per
stage where stages differ; wall time always per stage) and ``differences`` names the fields other than wall time in
which two environments differ (``paperdag compare``).
"""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

STACK = ("paperdag", "numpy", "scipy", "torch", "pyarrow", "pandas", "scikit-learn")  # every paper's numerics
PER_STAGE = ("wall_s",)  # fields that describe one run: in its run.json only, never in a result nor compared
ISA = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512_vnni",
       "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve", "sve2")


def _cpu() -> dict[str, Any]:
    """The CPU model and the ISA extensions of ``ISA`` it has (from /proc/cpuinfo; the machine type elsewhere)."""
    model, flags = "", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name" and not model:
                model = value.strip()
            elif name.strip() in ("flags", "Features") and not flags:
                flags = set(value.split())
    except OSError:
        pass
    return {"model": model or platform.processor() or platform.machine(), "isa": [f for f in ISA if f in flags]}


def _blas() -> list[str]:
    """The BLAS libraries loaded in this process: ``<library> <version> <kernel architecture> threads <n>``."""
    from threadpoolctl import threadpool_info

    return sorted({f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} threads {i.get('num_threads')}"
                   for i in threadpool_info() if i.get("user_api") == "blas"})


def _torch(device: str) -> dict[str, Any] | None:
    """torch's CPU kernel level, BLAS, threads and CUDA version (on CUDA also cuDNN's), if the stage imported torch."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    config = torch.__config__.show()
    blas = next((part.split("=", 1)[1] for part in config.replace(",", " ").split() if part.startswith("BLAS_INFO=")),
                "?")
    found = {"capability": torch.backends.cpu.get_cpu_capability(), "blas": blas, "threads": torch.get_num_threads(),
             "cuda": torch.version.cuda}
    if device.startswith("cuda"):
        found["cudnn"] = torch.backends.cudnn.version()
    return found


def _device_name(device: str, cpu: dict[str, Any]) -> str:
    """The GPU's name on CUDA (``torch.cuda.get_device_name``), else the CPU model."""
    if device.startswith("cuda"):
        import torch

        return str(torch.cuda.get_device_name(torch.device(device)))
    return str(cpu["model"])


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@cache
def _packages(slug: str) -> tuple[tuple[str, str], ...]:
    """(name, version) of the stack and of the paper's extra; looked up once per process (tens of ms: metadata
    lookups scan every installed distribution)."""
    from paperdag.extras import extra_requirements

    names = [*STACK, *sorted(r.name for r in extra_requirements(slug))]
    return tuple((n, v) for n in names if (v := _version(n)) is not None)


def capture(slug: str, device: str = "cpu", precision: str = "fp32", wall_s: float | None = None,
            nondeterministic: Sequence[str] | None = None) -> dict[str, Any]:
    """This process's environment (module docstring): call it where the stage ran, right after it ran on ``device``
    at ``precision`` in ``wall_s`` seconds; ``nondeterministic``: the ops ``device.deterministic`` collected."""
    cpu = _cpu()
    env: dict[str, Any] = {"device": _device_name(device, cpu), "precision": precision,
                           "python": platform.python_version(), "packages": dict(_packages(slug)), "cpu": cpu,
                           "blas": _blas()}
    if wall_s is not None:
        env["wall_s"] = round(wall_s, 3)
    torch = _torch(device)
    if torch is not None:
        env["torch"] = torch
    if nondeterministic or device.startswith("cuda"):
        env["nondeterministic"] = sorted(nondeterministic or ())
    return env


def flatten(env: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"packages.numpy": "2.3.1", "cpu.isa": [...], ...}``: one dotted field per leaf."""
    flat: dict[str, Any] = {}
    for key, value in env.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def summarise(environments: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The environment block of a result from its stages' environments (stage -> ``capture``): each field once
    where every stage that has it agrees, else ``{stage: value}``; ``stages`` lists the stages described. The
    per-run fields (``PER_STAGE``: wall time) stay in each stage's run.json: a result is a function of its keys, so a
    recompute of the same keys on the same machine publishes the same bytes."""
    flat = {stage: flatten(env) for stage, env in sorted(environments.items())}
    block: dict[str, Any] = {"stages": list(flat)}
    for key in sorted({k for f in flat.values() for k in f} - set(PER_STAGE)):
        values = {stage: f[key] for stage, f in flat.items() if key in f}
        distinct = {json.dumps(v, sort_keys=True) for v in values.values()}
        block[key] = next(iter(values.values())) if len(distinct) == 1 else values
    return block


def differences(mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """The fields in which two environments differ (wall time left out), one short note each (``packages.numpy
    2.3.1 -> 2.3.2``, ``cpu.isa +avx512f``); ``["environment not recorded"]`` when either is missing."""
    if not mine or not theirs:
        return ["environment not recorded"]
    a, b = flatten(mine), flatten(theirs)
    notes = []
    for key in sorted((a.keys() | b.keys()) - set(PER_STAGE)):
        x, y = a.get(key), b.get(key)
        if x == y:
            continue
        if isinstance(x, list) and isinstance(y, list):
            change = [f"+{v}" for v in y if v not in x] + [f"-{v}" for v in x if v not in y]
            notes.append(f"{key} {' '.join(change)}")
        else:
            notes.append(f"{key} {x} -> {y}")
    return notes
