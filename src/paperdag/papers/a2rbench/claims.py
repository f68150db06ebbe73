"""The paper's claims restated for our scale: a pure function from measured numbers to ``Claim``s.

Across-benchmark statements use t-intervals over the independent benchmarks (paperdag.common.stats) at level
``confidence``; a difference holds when its whole interval lies beyond the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.claims import Claim
from paperdag.common.stats import mean_ci, paired_diff_ci

from .params import ClaimParams


POOLED_REASON = ("pooled over rules, the count varies mostly with each rule's own redundancy (how many DSL programs "
                 "spell it), which the inputs do not change; the within-rule claim holds the rule fixed")


@dataclass(frozen=True)
class Measured:
    """What evaluate measured. acc[solver][phase] and acc_dim[dim] (search, P0) hold one value per benchmark."""

    acceptance: dict[str, dict[str, float]]  # verifier -> {"lossy", "invertible"} -> accepted fraction
    rechecked: int
    recheck_failed: int
    ambiguous_rejected: int
    rho: np.ndarray  # within-rule (information ladder), one per benchmark
    rho_pooled: np.ndarray  # across tasks, confounded by rule redundancy, one per benchmark
    ladder_gmean: dict[str, dict[int, float]]  # dim -> m -> geometric mean of #consistent (effect size)
    acc: dict[str, dict[str, np.ndarray]]
    acc_dim: dict[int, np.ndarray]


def claims(m: Measured, p: ClaimParams) -> list[Claim]:
    """The seven verdicts (see each statement)."""
    c = p.confidence
    a = m.acceptance
    rho, pooled = mean_ci(m.rho, c), mean_ci(m.rho_pooled, c)
    drop = paired_diff_ci(m.acc["search"]["P0"], m.acc["search"]["P1"], c)
    drop_relabel = paired_diff_ci(m.acc["search_relabel"]["P0"], m.acc["search_relabel"]["P1"], c)
    learned = paired_diff_ci(m.acc["search"]["P0"], m.acc["identity"]["P0"], c)
    easier = np.minimum(m.acc_dim[1], m.acc_dim[2])
    gap3 = paired_diff_ci(easier, m.acc_dim[3], c)
    return [
        Claim("cycle_check_rejects_lossy_rules",
              "cycle consistency + property tests (all demos, query, every 4-cell grid, random grids) reject every "
              "injected lossy rule and accept every invertible one, while a single-sample cycle check accepts some "
              "lossy rules (and a forward-only check accepts them all)",
              "theorem: g(f(x)) = x (cycle consistency) guarantees a unique solution; unverified generation "
              "hallucinates", {v: a[v] for v in a},
              a["cycle"]["lossy"] == 0.0 and a["cycle"]["invertible"] == 1.0 and a["single"]["lossy"] > 0.0),
        Claim("accepted_tasks_have_one_answer",
              "every exported task, re-enumerated from the benchmark file, has exactly one answer among all DSL "
              "programs consistent with its demos, and it is the stored answer",
              "verification guarantees a unique solution",
              {"rechecked": m.rechecked, "failed": m.recheck_failed,
               "cycle_valid_but_ambiguous_rejected": m.ambiguous_rejected},
              m.rechecked > 0 and m.recheck_failed == 0),
        Claim("information_simplifies_reasoning_pooled",
              f"across tasks, inputs with more information (sum |x| H(x) bits) admit fewer consistent programs: "
              f"Spearman rho (bits, log #consistent) over the original tasks, {c:.0%} CI over benchmarks below 0",
              "finding (3): higher information complexity can simplify reasoning (qualitative)",
              pooled.rounded(), pooled.hi < 0.0,
              reason="" if pooled.hi < 0.0 else POOLED_REASON),
        Claim("information_simplifies_reasoning_within_rule",
              f"for a fixed rule, inputs with more information admit fewer consistent programs: Spearman rho of the "
              f"within-rule centred (bits, log #consistent) over each validated rule re-posed with m symbols, "
              f"{c:.0%} CI over benchmarks below 0",
              "finding (3): higher information complexity can simplify reasoning (qualitative)",
              {"rho": rho.rounded(), "gmean_consistent_by_dim_and_m": {
                  d: {sym: round(v, 3) for sym, v in by_m.items()} for d, by_m in m.ladder_gmean.items()}},
              rho.hi < 0.0),
        Claim("accuracy_drops_under_symbol_remapping",
              f"enumerative search accuracy drops from P0 to P1 (symbols renamed): {c:.0%} CI of the paired drop "
              f"above {p.min_drop:g}",
              "P1 (remapped symbols) below P0: symbolic dependency (no number in the abstract)",
              {"search_drop": drop.rounded(), "search_relabel_drop": drop_relabel.rounded()},
              drop.lo > p.min_drop),
        Claim("search_beats_trivial_baseline",
              f"sanity: enumerative search solves more P0 tasks than copying the query ({c:.0%} CI of the "
              "paired gain above 0)",
              "top LLM 39.8% vs humans 68.5% on a representative subset (no trivial baseline reported)",
              {"gain": learned.rounded(), "search_P0": mean_ci(m.acc["search"]["P0"], c).rounded(),
               "identity_P0": mean_ci(m.acc["identity"]["P0"], c).rounded()},
              learned.lo > 0.0),
        Claim("three_d_tasks_are_hardest",
              f"under the same search budget, 3D tasks are solved less often than the easier of 1D and 2D "
              f"({c:.0%} CI of the paired gap above 0)",
              "finding (2): LLMs fall far short on 3D vs 2D and 1D tasks (qualitative)",
              {"gap": gap3.rounded(), **{f"acc_{d}d": mean_ci(v, c).rounded() for d, v in m.acc_dim.items()}},
              gap3.lo > 0.0),
    ]
