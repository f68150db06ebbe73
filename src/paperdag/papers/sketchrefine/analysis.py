"""Per-seed statistics of the searches, from the run tables (solved = solved and re-verified by ``verify``).

Cost c(t, s) of run (theorem t, proposer seed s), in one of two counts (search.py): "emitted" tokens, or "total" =
emitted + read.
pass rate at budget b:      P_s(b) = (1 / |T|) sum_t 1[solved(t, s) and c(t, s) <= b]
area under pass-vs-budget:  A_s(B) = (1 / B) int_0^B P_s(b) db = (1 / |T|) sum_t 1[solved(t, s)] (1 - c(t, s) / B)^+
    (exact: P_s is a step function of b), the pass rate averaged over every budget up to B;
tokens per solved theorem (methods A, B, seed s): mean of c over the theorems both solve with that seed, compared
    per seed (paired), so a method is not rewarded for solving only easy theorems;
the first sketch unrevised: P_s(b) of the runs solved by their first sketch (round 0), the same sketch for every
    method: the strongest trivial prover (no revision at all) besides z3 on the goal alone;
subgoal reuse: sum of proved lemmas that kept their proof through an edit round / sum of proved lemmas before it
    (pooled over runs, or per seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa

from paperdag.common.stats import Interval, mean_ci

from .claims import Measured

Count = Literal["emitted", "total"]
COUNTS: tuple[Count, ...] = ("emitted", "total")


@dataclass(frozen=True)
class Runs:
    """The runs of one method as aligned arrays, sorted by (seed, theorem)."""

    seed: np.ndarray
    theorem: np.ndarray
    lemmas: np.ndarray
    tokens: np.ndarray
    read: np.ndarray
    solved: np.ndarray
    rounds: np.ndarray
    proved_before: np.ndarray
    preserved: np.ndarray

    @classmethod
    def from_tables(cls, runs: pa.Table, verified: pa.Table) -> Runs:
        """A run counts as solved only if its proof passed ``verify``."""
        ok = {(t, s) for t, s, v in zip(*(verified[c].to_pylist() for c in ("theorem", "seed", "ok")), strict=True)
              if v}
        return cls.from_rows([r | {"solved": bool(r["solved"]) and (r["theorem"], r["seed"]) in ok}
                              for r in runs.to_pylist()])

    @classmethod
    def from_rows(cls, rows: list[dict[str, object]]) -> Runs:
        """Runs from rows whose ``solved`` already means solved and re-verified (grid.py)."""
        rows = sorted(rows, key=lambda r: (r["seed"], r["theorem"]))
        col = {k: np.array([r[k] for r in rows]) for k in rows[0]}
        return cls(col["seed"], col["theorem"], col["lemmas"], col["tokens"], col["read"],
                   col["solved"].astype(bool), col["rounds"], col["proved_before"], col["preserved"])

    def subset(self, theorems: set[str], seeds: int) -> Runs:
        """The runs on ``theorems`` with proposer seeds below ``seeds`` (the default's share of a grid point)."""
        keep = np.isin(self.theorem, list(theorems)) & (self.seed < seeds)
        return Runs(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))

    def seeds(self) -> np.ndarray:
        return np.unique(self.seed)

    def cost(self, count: Count) -> np.ndarray:
        """c(t, s): emitted tokens, or emitted + read."""
        return self.tokens if count == "emitted" else self.tokens + self.read

    def per_seed(self, values: np.ndarray) -> np.ndarray:
        return np.array([values[self.seed == s].mean() for s in self.seeds()])

    def pass_rates(self, budget: float, count: Count) -> np.ndarray:
        """P_s(budget) for every seed s."""
        return self.per_seed(self.solved & (self.cost(count) <= budget))

    def auc(self, budget: float, count: Count) -> np.ndarray:
        """A_s(budget) for every seed s."""
        return self.per_seed(np.where(self.solved, np.clip(1 - self.cost(count) / budget, 0, None), 0.0))

    def first_sketch_pass_rates(self, budget: float, count: Count) -> np.ndarray:
        """P_s(budget) of the first sketch unrevised: runs solved in round 0 within the budget, for every seed s."""
        return self.per_seed(self.solved & (self.rounds == 0) & (self.cost(count) <= budget))

    def first_sketch_fails(self) -> tuple[int, int]:
        """Runs whose first sketch (the same for every method) is not a proof, and all runs."""
        return int((~(self.solved & (self.rounds == 0))).sum()), len(self.solved)

    def reuse(self) -> float:
        return float(self.preserved.sum() / max(1, self.proved_before.sum()))

    def reuse_per_seed(self) -> np.ndarray:
        """Subgoal reuse of each seed's runs (0 for a seed with no proved lemma before an edit round)."""
        return np.array([self.preserved[self.seed == s].sum() / max(1, self.proved_before[self.seed == s].sum())
                         for s in self.seeds()], dtype=float)


def pass_curve(runs: Runs, budgets: np.ndarray, count: Count) -> list[Interval]:
    """Mean over seeds of P_s(b), with its 95% CI, for each budget b."""
    return [mean_ci(runs.pass_rates(b, count)) for b in budgets]


def token_means(a: Runs, b: Runs, count: Count) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the mean cost of a and of b over the theorems both solved with that seed (within the search cap)."""
    out_a, out_b = [], []
    for s in a.seeds():
        sa, sb = a.seed == s, b.seed == s
        if not np.array_equal(a.theorem[sa], b.theorem[sb]):
            raise ValueError("runs of the two methods cover different theorems")
        both = a.solved[sa] & b.solved[sb]
        out_a.append(a.cost(count)[sa][both].mean() if both.any() else np.nan)
        out_b.append(b.cost(count)[sb][both].mean() if both.any() else np.nan)
    return np.array(out_a), np.array(out_b)


def pass_by_level(runs: Runs, budget: float, count: Count) -> dict[int, float]:
    """Pass rate within ``budget`` at each difficulty (number of hidden lemmas), over every run of the level."""
    ok = runs.solved & (runs.cost(count) <= budget)
    return {int(k): float(ok[runs.lemmas == k].mean()) for k in np.unique(runs.lemmas)}


def tokens_by_level(runs: Runs, count: Count) -> dict[int, float]:
    """Mean cost of the solved runs at each difficulty (number of hidden lemmas)."""
    cost = runs.cost(count)
    return {int(k): float(cost[runs.solved & (runs.lemmas == k)].mean())
            for k in np.unique(runs.lemmas) if (runs.solved & (runs.lemmas == k)).any()}


def measure(runs: dict[str, Runs], emitted_budget: int, budget: int, cap: int, rejected: int,
            ref: str = "sketchrefine") -> Measured:
    """The per-seed values the claims judge (claims.Measured): pass rates and areas at E emitted and B total
    tokens, pass rates at the searches' cap (emitted), tokens per solved theorem in both counts (paired with
    SketchRefine's), the first sketch unrevised, subgoal reuse and the count of rejected proofs."""
    at = {"emitted": emitted_budget, "total": budget}
    return Measured(
        at_budget={c: {m: r.pass_rates(at[c], c) for m, r in runs.items()} for c in COUNTS},
        auc={c: {m: r.auc(at[c], c) for m, r in runs.items()} for c in COUNTS},
        at_cap={m: r.pass_rates(cap, "emitted") for m, r in runs.items()},
        tokens={c: {m: token_means(runs[ref], runs[m], c) for m in runs if m != ref} for c in COUNTS},
        first_sketch={c: runs[ref].first_sketch_pass_rates(at[c], c) for c in COUNTS},
        first_sketch_fails=runs[ref].first_sketch_fails(),
        reuse={m: runs[m].reuse_per_seed() for m in runs if m != "whole_proof"},
        rejected_proofs=rejected)
