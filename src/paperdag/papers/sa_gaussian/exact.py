"""Stage ``exact_<setting>`` (2-D settings): exact W1 of the steady state to N(0, Sigma) on disjoint groups of the
chains quantized on a fixed grid (transport.py), with its floor, beside the sliced W1 of verify."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.io import load_tensors, read_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import SETTINGS_FILE
from .problems import Problem
from .train import SAMPLES_FILE, STEADY_FILE
from .transport import Grid, group_w1

EXACT_FILE = "exact.parquet"


def exact(ctx: StageContext[Params], setting: str) -> dict[str, float]:
    """exact.parquet: per stepsize the exact W1 of the groups and its floor (mean, 95% CI), group size, groups, bins."""
    p = ctx.params.transport
    pr = Problem.from_json(read_json(ctx.input("prepare", SETTINGS_FILE))[setting])
    samples = load_tensors(ctx.input(f"train_{setting}", SAMPLES_FILE))
    steady = read_json(ctx.input(f"train_{setting}", STEADY_FILE))["stepsizes"]
    chol = np.linalg.cholesky(np.array(pr.sigma))
    grid = Grid.for_limit(np.array(pr.sigma), p.bins, p.span)

    def draw(m: int) -> np.ndarray:
        return ctx.rng.standard_normal((m, pr.dim)) @ chol.T

    rows = []
    for i, st in enumerate(ctx.progress(steady, desc=f"{setting} exact W1")):
        w, floor, m = group_w1(samples[f"y_{i}"].double().numpy(), draw, p.subsample, p.repeats, grid, ctx.rng)
        rows.append(dict(alpha=st["alpha"], w1=w.mean, w1_lo=w.lo, w1_hi=w.hi, floor=floor.mean, floor_lo=floor.lo,
                         floor_hi=floor.hi, subsample=m, repeats=p.repeats, bins=p.bins))
    write_table(ctx.output(EXACT_FILE), pa.Table.from_pylist(rows))
    return {"w1_largest_alpha": rows[0]["w1"], "floor_smallest_alpha": rows[-1]["floor"]}
