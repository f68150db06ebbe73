"""What a stage function receives: ``fn(ctx: StageContext) -> dict[str, float] | None``.

A stage is a plain function of (validated params, upstream artifacts, an output folder, a seeded RNG, device).
It writes files into ``ctx.out`` and returns scalar summary metrics. It never touches Prefect, Ray or MLflow:
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
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")
CURVES_FILE = "_curves.jsonl"


class ParamsView:
    """Read-only attribute access to the params keys a stage declared; any other key raises AttributeError.

    This keeps the cache key honest: a stage cannot read a param that does not enter its key.
    """

    def __init__(self, values: dict[str, Any], paper: str, stage: str):
        self._values = values
        self._where = f"{paper}.{stage}"

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(
                f"{self._where} reads param {key!r} but does not declare it in Stage(params=...)"
            ) from None


@dataclass
class StageContext:
    """Everything a stage may use.

    params: the declared params slice (attribute access, e.g. ``ctx.params.n_grid``).
    inputs: upstream stage name -> its (read-only) output folder.
    out: an empty folder; everything written here becomes the stage's versioned output.
    rng: numpy Generator seeded from (seed, stage name); torch's global RNG is seeded the same way.
    device: "cuda" when the executor gave the stage a GPU, else "cpu".
    """

    params: ParamsView
    inputs: dict[str, Path]
    out: Path
    rng: np.random.Generator
    device: str = "cpu"
    label: str = ""
    _curves: list[dict[str, Any]] = field(default_factory=list)

    def log_metric(self, name: str, value: float, step: int | None = None) -> None:
        """Record one point of a curve (e.g. validation loss at a training step)."""
        self._curves.append({"name": name, "value": float(value), "step": 0 if step is None else int(step)})

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
        last = time.monotonic()
        for i, item in enumerate(items, 1):
            yield item
            now = time.monotonic()
            if now - last > 5.0:
                last = now
                of = f"/{total}" if total else ""
                print(f"[{self.label}] {desc} {i}{of}", file=sys.stderr, flush=True)

    def flush_curves(self) -> None:
        """Write the logged curve points to ``out/_curves.jsonl`` (called by the platform after the stage)."""
        if self._curves:
            with open(self.out / CURVES_FILE, "w") as f:
                for row in self._curves:
                    f.write(json.dumps(row) + "\n")
