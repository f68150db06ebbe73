"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

All comparisons are paired over proposer seeds (same theorems, same first sketch; unit ``seed``), with t-intervals
judged under the ``seeds`` plan declared in params.yaml. Costs are counted two ways (search.py): emitted tokens, and
total = emitted + read (the statement, the revised sketch and the checker's error log that each call reads). Every
claim judges the total and reports both; pass rate is judged as the area under pass-vs-total-budget up to the claims'
budget B (the pass rate averaged over every budget <= B).

Preconditions (the regime): every method beats the strongest trivial prover of the ladder (z3 on the goal without a
sketch, 0 on the benchmark by construction; the first sketch unrevised, the same for every method), paired over
seeds at B; no method is saturated at B (a pass rate at 0 or 1 leaves "better" without an interval: each method's
interval strictly inside (0, 1)); checker feedback does not make repair worse than a fresh attempt (immutable
sketches, repaired with feedback, are not below feedback-free whole-proof sampling at the searches' cap, in emitted
tokens: both emit a whole sketch per attempt, so the count isolates the error model); and the first sketch usually
fails, so revisions, the mechanism compared, happen (a Clopper-Pearson interval over runs, plan ``runs``). Checks:
subgoal reuse (an invariant of the edit operations, judged over seeds) and that every reported proof re-verifies
(z3, from scratch).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    Judgement,
    Ladder,
    all_of,
    check,
    equivalence,
    evidence,
    exact,
    noninferiority,
    precondition,
    proportion_ci,
    superiority,
)

from .params import ClaimParams, Plans

FIRST = "the first sketch unrevised (the same for every method)"
DIRECT = "z3 on the goal without a sketch (0 on every benchmark theorem: kept only if it fails)"
REF = "sketchrefine"


@dataclass(frozen=True)
class Measured:
    """Per-seed values of every method (arrays aligned by proposer seed) and the run-level counts."""

    at_budget: dict[str, np.ndarray]  # P_s(B), total tokens
    auc: dict[str, dict[str, np.ndarray]]  # count -> method -> A_s(B)
    at_cap: dict[str, np.ndarray]  # P_s(cap), emitted tokens
    tokens: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # count -> baseline -> (SketchRefine, baseline)
    first_sketch: np.ndarray  # P_s(B) of the first sketch unrevised, total tokens
    first_sketch_fails: tuple[int, int]  # runs whose first sketch is not a proof, all runs
    reuse: dict[str, np.ndarray]  # per seed, share of proved subgoals kept across edit rounds
    rejected_proofs: int  # proofs verify rejected


def _seeds(v: np.ndarray) -> Interval:
    return mean_ci(v, unit="seed")


def _preconditions(m: Measured, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence against the trivial provers, no saturation, repair not worse than a fresh attempt, revisions
    needed."""
    plan = plans.seeds
    ci = {k: _seeds(r) for k, r in m.at_budget.items()}
    rungs = {FIRST: m.first_sketch, DIRECT: np.zeros_like(m.first_sketch)}  # ties: the first sketch is the stronger
    ladder = Ladder.of("higher", {FIRST: _seeds(m.first_sketch), DIRECT: 0.0})
    strongest = ladder.strongest.name
    gain = {k: paired_diff_ci(r, rungs[strongest], unit="seed") for k, r in m.at_budget.items()}
    repair = paired_diff_ci(m.at_cap["immutable"], m.at_cap["whole_proof"], unit="seed")
    fails, runs = m.first_sketch_fails
    first = proportion_ci(fails, runs, unit="run")
    rates = {"pass_rate_total_tokens": {k: c.rounded() for k, c in ci.items()}}
    return [
        precondition("methods_beat_trivial_provers", f"every method's pass rate at {p.budget} total tokens is above "
                     "the strongest trivial prover's (the first sketch unrevised; z3 on the goal alone beside), "
                     "paired over seeds", strongest,
                     rates | {"first_sketch": _seeds(m.first_sketch).rounded(), "direct_z3": 0.0,
                              "gain_over_strongest": {k: g.rounded() for k, g in gain.items()}},
                     all_of({k: superiority(g, what=f"{k} - {strongest} pass rate", plan=plan)
                             for k, g in gain.items()}), ladder=ladder),
        precondition("benchmark_not_saturated", f"every method's pass-rate interval at {p.budget} total tokens lies "
                     "strictly inside (0, 1)", "the bounds 0 and 1 of a pass rate", rates,
                     all_of({k: equivalence(c, margin=0.5, center=0.5, what=f"{k} pass rate", plan=plan)
                             for k, c in ci.items()})),
        precondition("repair_not_worse_than_fresh_attempt", "immutable sketches repaired with checker feedback pass "
                     f"no more than {p.pass_tol:g} below feedback-free whole-proof sampling at the searches' cap "
                     "(emitted tokens: one whole sketch per attempt for both)",
                     "whole-proof sampling (no feedback) at the searches' cap",
                     {"immutable_minus_whole_proof": repair.rounded(),
                      "immutable": _seeds(m.at_cap["immutable"]).rounded(),
                      "whole_proof": _seeds(m.at_cap["whole_proof"]).rounded()},
                     noninferiority(repair, margin=p.pass_tol, direction="above",
                                    what="immutable - whole-proof pass rate", plan=plan)),
        precondition("revisions_needed", "the first sketch (the same for every method) is not a proof on a share of "
                     "runs above 0, so the revision strategies compared have something to do",
                     "a benchmark whose first sketches are proofs (share 0)",
                     {"first_sketch_fails": first.rounded(), "runs": runs},
                     superiority(first, what="share of first sketches that fail", plan=plans.runs)),
    ]


def _pass(m: Measured, base: str) -> tuple[dict[str, object], Interval]:
    """Measured values of a pass-rate comparison; the judged interval: the paired difference of total-token AUCs."""
    diff = {c: paired_diff_ci(v[REF], v[base], unit="seed") for c, v in m.auc.items()}
    return {"auc_total": {REF: _seeds(m.auc["total"][REF]).rounded(), base: _seeds(m.auc["total"][base]).rounded(),
                          "diff": diff["total"].rounded()},
            "auc_emitted": {REF: _seeds(m.auc["emitted"][REF]).rounded(),
                            base: _seeds(m.auc["emitted"][base]).rounded(), "diff": diff["emitted"].rounded()},
            "pass_rate_at_budget": {REF: _seeds(m.at_budget[REF]).rounded(),
                                    base: _seeds(m.at_budget[base]).rounded()}}, diff["total"]


def _tokens(m: Measured, base: str) -> tuple[dict[str, object], Interval]:
    """Measured values of a token comparison (both counts); the judged interval: the paired total-token difference."""
    out, diff = {}, {}
    for count, pairs in m.tokens.items():
        a, b = pairs[base]
        diff[count] = paired_diff_ci(a, b, unit="seed")
        out[count] = {"tokens_per_solved": [round(float(np.nanmean(a)), 1), round(float(np.nanmean(b)), 1)],
                      "diff": diff[count].rounded(1), "ratio": round(float(np.nanmean(a) / np.nanmean(b)), 3)}
    return out, diff["total"]


def _reuse(m: Measured, p: ClaimParams, plan: SamplePlan) -> tuple[dict[str, object], Judgement]:
    """Subgoal reuse over seeds: SketchRefine's above ``min_reuse``, above Hilbert's, Hilbert's above immutable's
    (each an interval over seeds; all three must hold)."""
    r = m.reuse
    ref = _seeds(r[REF])
    over = {"hilbert": paired_diff_ci(r[REF], r["hilbert"], unit="seed"),
            "immutable": paired_diff_ci(r["hilbert"], r["immutable"], unit="seed")}
    measured = {k: _seeds(v).rounded() for k, v in r.items()} | {
        "sketchrefine_minus_hilbert": over["hilbert"].rounded(), "hilbert_minus_immutable": over["immutable"].rounded()}
    return measured, all_of({
        "sketchrefine": superiority(ref, reference=p.min_reuse, what="SketchRefine reuse", plan=plan),
        "vs hilbert": superiority(over["hilbert"], what="SketchRefine - Hilbert reuse", plan=plan),
        "hilbert vs immutable": superiority(over["immutable"], what="Hilbert - immutable reuse", plan=plan)})


def claims(m: Measured, p: ClaimParams, plans: Plans) -> list[Claim]:
    """The preconditions, the five evidence claims and the two checks (see the module docstring)."""
    plan = plans.seeds
    auc = f"(area under pass rate vs total-token budget up to {p.budget}, paired difference)"
    passing = ["methods_beat_trivial_provers", "benchmark_not_saturated", "repair_not_worse_than_fresh_attempt",
               "revisions_needed"]
    costing = ["methods_beat_trivial_provers", "repair_not_worse_than_fresh_attempt", "revisions_needed"]
    ge_imm, d_ge_imm = _pass(m, "immutable")
    ge_hil, d_ge_hil = _pass(m, "hilbert")
    ge_whole, d_ge_whole = _pass(m, "whole_proof")
    tok_imm, d_imm = _tokens(m, "immutable")
    tok_hil, d_hil = _tokens(m, "hilbert")
    reuse, reuse_judged = _reuse(m, p, plan)
    per_solved = ("per solved theorem in total tokens, emitted + read (theorems both solve within the searches' cap, "
                  "paired by seed; interval of the difference below 0; emitted tokens reported too)")
    return [
        *_preconditions(m, p, plans),
        evidence("pass_rate_ge_immutable", f"SketchRefine's pass rate is no more than {p.pass_tol:g} below immutable "
                 f"sketches' {auc}", "76.0% pass on FormalMath-Lite; immutable sketches rebuild on every revision",
                 ge_imm, noninferiority(d_ge_imm, margin=p.pass_tol, direction="above",
                                        what="SketchRefine - immutable pass-rate AUC", plan=plan), requires=passing),
        evidence("fewer_tokens_than_immutable", f"SketchRefine costs fewer tokens than immutable sketches {per_solved}",
                 "cost of the proof process reduced (no number in the abstract)", tok_imm,
                 superiority(d_imm, direction="below", what="SketchRefine - immutable total tokens", plan=plan),
                 requires=costing),
        evidence("pass_rate_comparable_to_hilbert", f"SketchRefine's pass rate is no more than {p.pass_tol:g} below "
                 f"Hilbert-like recursive regeneration's {auc}", "comparable performance to Hilbert", ge_hil,
                 noninferiority(d_ge_hil, margin=p.pass_tol, direction="above",
                                what="SketchRefine - Hilbert pass-rate AUC", plan=plan), requires=passing),
        evidence("fewer_tokens_than_hilbert", f"SketchRefine costs fewer tokens than Hilbert-like regeneration "
                 f"{per_solved}", "significantly reduced token overhead vs Hilbert", tok_hil,
                 superiority(d_hil, direction="below", what="SketchRefine - Hilbert total tokens", plan=plan),
                 requires=costing),
        evidence("beats_whole_proof_sampling", f"SketchRefine's pass rate exceeds whole-proof sampling's (pass@k) {auc}",
                 "76.0% vs 61.9% for DeepSeek-Prover-V2-671B (+14.1 pp)", ge_whole,
                 superiority(d_ge_whole, what="SketchRefine - whole-proof pass-rate AUC", plan=plan),
                 requires=passing),
        check("subgoal_reuse", f"SketchRefine keeps more than {p.min_reuse:g} of proved subgoals across edits, more "
              "than Hilbert-like regeneration, which keeps more than immutable sketches (per seed, over seeds; an "
              "invariant of the edit operations: a local edit re-checks only what depends on it)",
              "EditableSketch preserves previously proved subgoals (no number in the abstract)", reuse, reuse_judged),
        check("reported_proofs_verify", "every proof a search reports is accepted when re-checked from scratch",
              "(soundness of our pipeline)", {"rejected": m.rejected_proofs},
              exact(m.rejected_proofs == 0, f"{m.rejected_proofs} reported proofs rejected by z3 re-checked from "
                    "scratch", basis="exact solver")),
    ]
