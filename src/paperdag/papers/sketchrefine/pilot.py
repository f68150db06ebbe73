"""The pilot sweep behind the lemma range and the judged budgets (params.yaml), run once before the default and
committed as ``pilot.json``: ``python -m paperdag.papers.sketchrefine.pilot [--rates-scale S] [--out FILE]``.

Its streams are never reused by a judged run: theorems from numpy PCG64 seeded by (PILOT_SEED, level), proposer
from (PILOT_SEED, proposer seed, theorem index); the default (seed 0) and the replicate (seed 1) draw theorems from
(seed, stage) and proposers from (seed, proposer seed, theorem). It reports, per lemma count and method, the pass
rate at a few emitted and total budgets (pass rate vs budget comes from one run at the largest budget, search.py),
nothing about the paired differences the evidence claims judge.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from .benchmark import draw_level
from .checker import Checker
from .proposer import ErrorRates, Proposer
from .search import METHODS, Search
from .sketch import EditableSketch

PILOT_SEED = 100
LEVELS = (3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
EMITTED = (240, 270, 300, 330, 360, 390, 420, 450, 600, 900, 1200, 1600)
TOTAL = (600, 900, 1200, 1600, 2400)


def sweep(levels: tuple[int, ...], per_level: int, seeds: int, cap: int, scale: float,
          rlimit: int = 4000) -> dict[str, object]:
    """Per level and method: pass rates at the EMITTED and TOTAL budgets (mean over runs), the first sketch's."""
    rates = ErrorRates(min(1.0, 0.15 * scale), min(1.0, 0.35 * scale), min(1.0, 0.15 * scale),
                       min(0.1 * scale, min(1.0, 0.35 * scale)), (0.1, 0.25, 0.5))
    out: dict[str, object] = {"seed": PILOT_SEED, "scale": scale, "per_level": per_level, "seeds": seeds, "cap": cap,
                              "rates": rates.__dict__ | {"tighten": list(rates.tighten)}, "levels": {}}
    for k in levels:
        level = draw_level(np.random.default_rng([PILOT_SEED, k]), k, per_level, 200, rlimit, 2, 3, 5, 0.7)
        rows = {m: [] for m in METHODS}
        for m in METHODS:
            checker = Checker(rlimit)
            for s in range(seeds):
                for j, t in enumerate(level.theorems):
                    run = Search(Proposer(t, rates, np.random.default_rng([PILOT_SEED, s, k * 1000 + j])), checker,
                                 cap).run(m)
                    rows[m].append((run.solved, run.tokens, run.tokens + run.read, run.rounds))
        sketch = max(EditableSketch.new(t, {v: t.boxes()[v] for v in t.lemma_vars}, []).tokens()
                     for t in level.theorems)
        out["levels"][k] = {"reference_sketch_tokens_max": sketch} | {m: {
            "emitted": {b: round(float(np.mean([sv and e <= b for sv, e, _, _ in r])), 3) for b in EMITTED},
            "total": {b: round(float(np.mean([sv and tt <= b for sv, _, tt, _ in r])), 3) for b in TOTAL},
            "first_sketch": round(float(np.mean([sv and rd == 0 for sv, _, _, rd in r])), 3)}
            for m, r in rows.items()}
        print(k, json.dumps(out["levels"][k]), flush=True)
    return out


def reading(sweep: dict[str, object], window: int = 6, b: int = 1600, e: int = 300) -> dict[str, object]:
    """What params.yaml's lemma range and E rest on (``sweep`` as read back from JSON): SketchRefine's pooled pass
    rate at B total tokens over each window of ``window`` consecutive levels, and over the last window every
    method's (and the first sketch's) pooled pass rate at each emitted budget."""
    levels = {int(k): v for k, v in sweep["levels"].items()}
    ks = sorted(levels)
    windows = [ks[i:i + window] for i in range(len(ks) - window + 1)]
    pooled = {f"{w[0]}-{w[-1]}": round(float(np.mean([levels[k]["sketchrefine"]["total"][str(b)] for k in w])), 3)
              for w in windows}
    last = windows[-1]

    def rate(m: str, budget: int) -> float:
        return round(float(np.mean([levels[k][m]["emitted"][str(budget)] for k in last])), 3)

    return {f"sketchrefine_pass_at_{b}_total_by_window": pooled,
            f"pass_at_emitted_budget_levels_{last[0]}-{last[-1]}": {m: {bb: rate(m, bb) for bb in EMITTED}
                                                                    for m in METHODS},
            f"first_sketch_levels_{last[0]}-{last[-1]}": round(float(np.mean(
                [levels[k]["sketchrefine"]["first_sketch"] for k in last])), 3),
            "largest_reference_sketch_tokens": max(v["reference_sketch_tokens_max"] for v in levels.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rates-scale", type=float, default=1.0, help="every rate scaled (capped at 1)")
    ap.add_argument("--per-level", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cap", type=int, default=1600)
    ap.add_argument("--levels", type=int, nargs="*", default=list(LEVELS))
    ap.add_argument("--combine", type=Path, nargs="*", help="sweeps to combine (with their readings) into --out")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    if a.combine:
        sweeps = {f"x{json.loads(f.read_text())['scale']:g}": json.loads(f.read_text()) for f in a.combine}
        a.out.write_text(json.dumps({k: v | {"reading": reading(v)} for k, v in sweeps.items()}, indent=1) + "\n")
        return
    t0 = time.time()
    res = sweep(tuple(a.levels), a.per_level, a.seeds, a.cap, a.rates_scale)
    res["wall_s"] = round(time.time() - t0, 1)
    a.out.write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
