"""What a stage function receives: ``fn(ctx: StageContext[Params], **args) -> dict[str, float] | None``.

A stage is a plain function of (validated params, upstream artifacts, an output folder, a seeded RNG, device,
the stage's declared ``args``). It writes files through ``ctx.output(name)`` and returns scalar summary metrics. It never touches Prefect, Ray or MLflow:
curves go through ``ctx.log_metric`` into ``_curves.jsonl`` in the output, which the tracking layer logs by step.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ContextManager, Generic, TypeVar

if TYPE_CHECKING:
    import numpy as np


T = TypeVar("T")
P = TypeVar("P")
CURVES_FILE = "_curves.jsonl"


@dataclass
class StageContext(Generic[P]):
    """Everything a stage may use.

    params: the paper's validated params object restricted to the keys the stage declares (``ctx.params.n_grid``,
        a sub-model as ``ctx.params.cegis``); reading an undeclared key raises AttributeError.
    out: an empty folder; everything written here becomes the stage's versioned output (use ``ctx.output``).
    rng: numpy Generator seeded from (seed, stage name); torch's global RNG is seeded the same way.
    device: "cuda" when the stage's process sees a GPU (``--local``, ``paperdag stage``) or Ray gave it one, else
        "cpu"; on CUDA kernels are deterministic where torch has them (``paperdag.device``).
    Upstream outputs are read with ``ctx.input(stage, name)``, which checks the upstream declaration.
    """

    params: P
    out: Path
    rng: np.random.Generator
    device: str = "cpu"
    label: str = ""
    outputs: tuple[str, ...] = ()
    inputs: dict[str, Path] = field(default_factory=dict)  # upstream stage -> its (read-only) output folder
    upstream_outputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _curves: list[dict[str, Any]] = field(default_factory=list)
    _t0: float = field(default_factory=time.monotonic)
    _last_report: float = field(default_factory=time.monotonic)

    def input(self, stage: str, name: str) -> Path:
        """The path of ``name`` (a file or folder, or a path inside a declared folder) in upstream ``stage``'s output.

        Raises unless ``stage`` is a declared upstream stage and ``name``'s first part is one of its declared outputs.
        """
        if stage not in self.inputs:
            raise KeyError(f"{self.label} reads from {stage!r}, which is not among its upstream stages "
                           f"{sorted(self.inputs)}")
        if name.split("/", 1)[0] not in self.upstream_outputs.get(stage, ()):
            raise KeyError(f"{self.label} reads {name!r} from {stage!r}, which declares only "
                           f"{list(self.upstream_outputs.get(stage, ()))}")
        return self.inputs[stage] / name

    def output(self, name: str) -> Path:
        """The path to write ``name`` to (a declared output, or a path inside a declared folder)."""
        if name.split("/", 1)[0] not in self.outputs:
            raise KeyError(f"{self.label} writes {name!r}, which is not among its declared outputs {list(self.outputs)}")
        return self.out / name

    def autocast(self) -> ContextManager[Any]:
        """``with ctx.autocast(): loss = model(x)``: bf16 autocast on the stage's device where the paper declares
        ``precision: bf16`` (a ``paperdag.device.Precision`` param the stage declares), else nothing (fp32)."""
        from paperdag.device import autocast, declared_precision

        return autocast(self.device, declared_precision(self.params))

    def log_metric(self, name: str, value: float, step: int | None = None, run: str | None = None,
                   params: dict[str, Any] | None = None) -> None:
        """Record one point of a curve (e.g. validation loss at a training step).

        A stage that trains several configurations labels each one's points with ``run`` (and its ``params``): in
        MLflow each label becomes a child run with shared metric names, so configurations overlay in comparisons.
        """
        point: dict[str, Any] = {"name": name, "value": float(value), "step": 0 if step is None else int(step)}
        if run is not None:
            point |= {"run": run, "params": params or {}}
        self._curves.append(point)

    def progress(self, items: Iterable[T], total: int | None = None, desc: str = "") -> Iterator[T]:
        """Yield ``items`` with a rich progress bar in a terminal, else (e.g. inside a Ray worker, whose output the
        driver forwards) a ``[label] desc i/total`` line on stderr at most every 5 s."""
        total = total if total is not None else (len(items) if hasattr(items, "__len__") else None)
        if sys.stderr.isatty() and threading.current_thread() is threading.main_thread():
            from rich.console import Console
            from rich.progress import track

            yield from track(items, total=total, description=f"{self.label} {desc}", transient=True,
                             console=Console(stderr=True))
            return
        for i, item in enumerate(items, 1):
            yield item
            self.report(desc, i, total)

    def report(self, desc: str, done: int, total: int | None = None) -> None:
        """A ``[label] desc done/total (elapsed)`` line on stderr, at most every 5 s: for long loops that
        ``progress`` cannot wrap (e.g. a training loop inside science code, through a callback)."""
        now = time.monotonic()
        if now - self._last_report < 5.0:
            return
        self._last_report = now
        of = f"/{total}" if total else ""
        print(f"[{self.label}] {desc} {done}{of} ({int(now - self._t0)}s)", file=sys.stderr, flush=True)

    def flush_curves(self) -> None:
        """Write the logged curve points to ``out/_curves.jsonl`` (called by the platform after the stage)."""
        if self._curves:
            with open(self.out / CURVES_FILE, "w") as f:
                for row in self._curves:
                    f.write(json.dumps(row) + "\n")
