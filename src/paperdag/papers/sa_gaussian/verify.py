"""Stage ``verify_<setting>``: per stepsize the W1 of the steady state to each limit law with its MC floor and
bootstrap replicates (analysis.py; the distances and every bootstrap on the stage's device, distance.py), tails
against the Gaussian limit, and the stationarity / exact-covariance checks."""

from __future__ import annotations

import pyarrow as pa

from paperdag.io import load_tensors, read_json, write_table
from paperdag.stage import StageContext

from .analysis import PRIMARY, checks, distances, tails
from .params import Params
from .prepare import SETTINGS_FILE
from .problems import Problem
from .train import SAMPLES_FILE, STEADY_FILE

DISTANCES_FILE, TAILS_FILE, CHECKS_FILE = "distances.parquet", "tails.parquet", "checks.parquet"
TAIL_SCHEMA = pa.schema([(c, pa.float64()) for c in ("alpha", "t", "empirical", "gaussian", "se")])


def verify(ctx: StageContext[Params], setting: str) -> dict[str, float]:
    """distances.parquet, tails.parquet and checks.parquet for one setting."""
    p = ctx.params.analysis
    pr = Problem.from_json(read_json(ctx.input("prepare", SETTINGS_FILE))[setting])
    samples = load_tensors(ctx.input(f"train_{setting}", SAMPLES_FILE))
    steady = read_json(ctx.input(f"train_{setting}", STEADY_FILE))["stepsizes"]
    dist, tail, check = [], [], []
    for i, st in enumerate(ctx.progress(steady, desc=f"{setting} distances")):
        y = samples[f"y_{i}"].double().numpy()
        dist += distances(pr, st["alpha"], y, p, ctx.rng, ctx.device)
        tail += tails(pr, st["alpha"], y, p.tail_levels)
        check.append({"setting": setting} | checks(pr, st["alpha"], y, st["m2_three_quarters"], st["m2_end"],
                                                   st["steps"], p.bootstrap, ctx.rng, ctx.device))
    table = pa.Table.from_pylist(dist)
    write_table(ctx.output(DISTANCES_FILE), table.append_column("setting", pa.array([setting] * table.num_rows)))
    write_table(ctx.output(TAILS_FILE), pa.Table.from_pylist(tail, schema=TAIL_SCHEMA))  # empty for the quartic
    write_table(ctx.output(CHECKS_FILE), pa.Table.from_pylist(check))
    primary = [r for r in dist if r["target"] == PRIMARY.get(pr.drift, "gaussian")]
    return {"w1_smallest_alpha": primary[-1]["w1"], "floor_smallest_alpha": primary[-1]["floor"],
            "max_drift": max(c["drift"] for c in check)}
