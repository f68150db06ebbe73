"""Stage ``grid_<rate>_<low|high>``: the four searches at one point of the error-rate grid, every solved proof
re-checked from scratch.

The proposer is a seeded error model, not an LLM (proposer.py): its three rates p_wrong, p_skip and p_spurious are
the stand-in's free parameters, so every claim is re-judged with one rate scaled by ``grid.low`` or ``grid.high``
(capped at 1) and the others at their default (a one-at-a-time design: 6 points around the default, 7 with it). A
point uses the first ``grid.per_level`` theorems of each level and proposer seeds 0 .. ``grid.seeds`` - 1, seeded as
in prove.py, so the x1 point is a subset of the default's runs (evaluate.py takes it from there).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.io import read_table, write_table
from paperdag.stage import StageContext

from .checker import Checker
from .params import GridParams, Params, RateParams
from .prepare import THEOREMS_FILE
from .proofcheck import verify_proof
from .proposer import ErrorRates, Proposer
from .prove import EDITS
from .search import METHODS, Search
from .theorems import Theorem, theorems_from_rows

RATES = ("p_wrong", "p_skip", "p_spurious")
SIDES = ("low", "high")
POINTS = tuple(f"{r}_{s}" for r in RATES for s in SIDES)
GRID_FILE = "runs.parquet"


def point_rates(rates: RateParams, grid: GridParams, point: str) -> ErrorRates:
    """The default rates with one of them scaled (``point`` = "<rate>_<low|high>"), capped at 1; the skip
    probability below a coarse step stays at most p_skip."""
    rate, side = point.rsplit("_", 1)
    if rate not in RATES or side not in SIDES:
        raise ValueError(f"unknown grid point {point!r}")
    values = rates.model_dump() | {"tighten": tuple(rates.tighten)}
    values[rate] = min(1.0, values[rate] * getattr(grid, side))
    values["p_skip_after_coarse"] = min(values["p_skip_after_coarse"], values["p_skip"])
    return ErrorRates(**values)


def grid_theorems(theorems: list[Theorem], per_level: int) -> list[tuple[int, Theorem]]:
    """(index in the benchmark, theorem) of the first ``per_level`` theorems of each level (lemma count)."""
    seen: dict[int, int] = {}
    out = []
    for j, t in enumerate(theorems):
        k = len(t.lemma_vars)
        if seen.get(k, 0) < per_level:
            seen[k] = seen.get(k, 0) + 1
            out.append((j, t))
    return out


def grid(ctx: StageContext[Params], point: str) -> dict[str, float]:
    """runs.parquet: one row per (method, theorem, proposer seed), ``solved`` only for a proof a fresh checker
    accepts from its rows."""
    p = ctx.params
    rates = point_rates(p.rates, p.grid, point)
    chosen = grid_theorems(theorems_from_rows(read_table(ctx.input("prepare", THEOREMS_FILE)).to_pylist()),
                           p.grid.per_level)
    checker, recheck, rows = Checker(p.rlimit), Checker(p.rlimit), []
    todo = [(m, s, jt) for m in METHODS for s in range(p.grid.seeds) for jt in chosen]
    for method, seed, (j, t) in ctx.progress(todo, desc=point):
        run = Search(Proposer(t, rates, np.random.default_rng([p.seed, seed, j])), checker, p.max_budget).run(method)
        ok = run.solved and verify_proof(t, run.sketch.proof_rows(), recheck) == ""
        rows.append({"method": method, "theorem": t.name, "lemmas": len(t.lemma_vars), "seed": seed,
                     "solved": ok, "reported": run.solved, "tokens": run.tokens, "read": run.read,
                     "rounds": run.rounds, "proved_before": run.proved_before, "preserved": run.preserved}
                    | {e: run.edits[e] for e in EDITS})
    write_table(ctx.output(GRID_FILE), pa.Table.from_pylist(rows))
    return {"runs": float(len(rows)), "rejected": float(sum(r["reported"] and not r["solved"] for r in rows))}
