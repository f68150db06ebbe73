"""Per-seed statistics of the searches, from the run tables (solved = solved and re-verified by ``verify``).

pass rate at budget b (one proposer seed s):  P_s(b) = (1 / |T|) sum_t 1[solved(t, s) and tokens(t, s) <= b]
tokens per solved theorem (methods A, B, seed s): mean of tokens over the theorems both solve with that seed,
    compared per seed (paired), so a method is not rewarded for solving only easy theorems;
subgoal reuse: sum of proved lemmas that kept their proof through an edit round / sum of proved lemmas before it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from paperdag.common.stats import Interval, mean_ci


@dataclass(frozen=True)
class Runs:
    """The runs of one method as aligned arrays, sorted by (seed, theorem)."""

    seed: np.ndarray
    theorem: np.ndarray
    lemmas: np.ndarray
    tokens: np.ndarray
    solved: np.ndarray
    calls: np.ndarray
    proved_before: np.ndarray
    preserved: np.ndarray

    @classmethod
    def from_tables(cls, runs: pa.Table, verified: pa.Table) -> Runs:
        """A run counts as solved only if its proof passed ``verify``."""
        ok = {(t, s) for t, s, v in zip(*(verified[c].to_pylist() for c in ("theorem", "seed", "ok")), strict=True)
              if v}
        rows = sorted(runs.to_pylist(), key=lambda r: (r["seed"], r["theorem"]))
        col = {k: np.array([r[k] for r in rows]) for k in rows[0]}
        solved = np.array([r["solved"] and (r["theorem"], r["seed"]) in ok for r in rows], dtype=bool)
        return cls(col["seed"], col["theorem"], col["lemmas"], col["tokens"], solved, col["checker_calls"],
                   col["proved_before"], col["preserved"])

    def seeds(self) -> np.ndarray:
        return np.unique(self.seed)

    def pass_rates(self, budget: float) -> np.ndarray:
        """P_s(budget) for every seed s."""
        hit = self.solved & (self.tokens <= budget)
        return np.array([hit[self.seed == s].mean() for s in self.seeds()])

    def reuse(self) -> float:
        return float(self.preserved.sum() / max(1, self.proved_before.sum()))


def pass_curve(runs: Runs, budgets: np.ndarray) -> list[Interval]:
    """Mean over seeds of P_s(b), with its 95% CI, for each budget b."""
    return [mean_ci(runs.pass_rates(b)) for b in budgets]


def token_means(a: Runs, b: Runs) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the mean tokens of a and of b over the theorems both solved with that seed."""
    out_a, out_b = [], []
    for s in a.seeds():
        sa, sb = a.seed == s, b.seed == s
        if not np.array_equal(a.theorem[sa], b.theorem[sb]):
            raise ValueError("runs of the two methods cover different theorems")
        both = a.solved[sa] & b.solved[sb]
        out_a.append(a.tokens[sa][both].mean() if both.any() else np.nan)
        out_b.append(b.tokens[sb][both].mean() if both.any() else np.nan)
    return np.array(out_a), np.array(out_b)


def tokens_by_level(runs: Runs) -> dict[int, float]:
    """Mean tokens of the solved runs at each difficulty (number of hidden lemmas)."""
    return {int(k): float(runs.tokens[runs.solved & (runs.lemmas == k)].mean())
            for k in np.unique(runs.lemmas) if (runs.solved & (runs.lemmas == k)).any()}
