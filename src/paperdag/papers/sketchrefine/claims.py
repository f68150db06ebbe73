"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

The proposer is a seeded error model, not an LLM (proposer.py): every claim tests the sketch/edit strategies'
bookkeeping under that error model, never a language model's skill, and every statement says so. All comparisons
are paired over proposer seeds (same theorems, same first sketch; unit ``seed``), with t-intervals judged under the
``seeds`` plan declared in params.yaml. Costs are counted two ways (search.py): emitted tokens (the paper's unit)
and total = emitted + read (the statement, the revised sketch and the checker's error log that each call reads),
each with its own judged budget: E emitted tokens, B total tokens. A pass-rate claim is judged once per count (the
area under pass-vs-budget up to that count's budget: the pass rate averaged over every budget up to it; ids ending
``_emitted`` for E), each gated by the regime in its own count; a token claim (per solved theorem) is judged in
both counts and holds only if it holds in both (``all_of``, an intersection-union test).

Preconditions (the regime), per count: every compared model beats the strongest trivial prover of the ladder
z3 alone -> the first sketch unrevised (z3 on the goal without a sketch is 0 on the benchmark by construction; the
first sketch is the same for every method), paired over seeds; whole-proof sampling, the next rung up, is a compared
method and reported beside, not judged against. In total tokens one precondition covers every method; in emitted
tokens one per method (``beats_first_sketch_emitted_<method>``), so a comparison is gated by the two models it
uses. No method is saturated (each pass-rate interval strictly inside (0, 1)) at B and, separately, at E. Checker
feedback does not make repair worse than a fresh attempt (immutable sketches, repaired with feedback, not below
feedback-free whole-proof sampling at the searches' cap, in emitted tokens: both emit a whole sketch per attempt, so
that count isolates the error model while a revision reads more); and the first sketch usually fails, so revisions,
the mechanism compared, happen (a Clopper-Pearson interval over runs, plan ``runs``). Checks: subgoal reuse (an
invariant of the edit operations, judged over seeds) and that every reported proof re-verifies (z3, from scratch).

Error-rate grid (grid.py): every claim is re-judged at each point with the ``grid`` plan; a claim whose verdicts
over the points (the default's share included) contain both holds and fails is reported as sensitive, read twice
for evidence: as published (preconditions gating) and judged alone (its own rule), so that a point where the regime
is not shown still says which way the comparison goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

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
WHOLE = "whole-proof sampling (pass@k; a compared method, the next rung up: reported beside, not judged against)"
PROPOSER = "proposer: a seeded error model, not an LLM"
COUNTS = ("emitted", "total")


@dataclass(frozen=True)
class Measured:
    """Per-seed values of every method (arrays aligned by proposer seed) and the run-level counts; ``count`` is
    "emitted" (judged at E) or "total" (judged at B)."""

    at_budget: dict[str, dict[str, np.ndarray]]  # count -> method -> P_s at the count's budget
    auc: dict[str, dict[str, np.ndarray]]  # count -> method -> A_s up to the count's budget
    at_cap: dict[str, np.ndarray]  # P_s(cap), emitted tokens
    tokens: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # count -> baseline -> (SketchRefine, baseline)
    first_sketch: dict[str, np.ndarray]  # count -> P_s of the first sketch unrevised at the count's budget
    first_sketch_fails: tuple[int, int]  # runs whose first sketch is not a proof, all runs
    reuse: dict[str, np.ndarray]  # per seed, share of proved subgoals kept across edit rounds
    rejected_proofs: int  # proofs verify rejected


def grid_reading(verdicts: Mapping[str, str]) -> str:
    """How a claim's verdicts over the error-rate grid read: sensitive if they contain both holds and fails."""
    seen = set(verdicts.values())
    if {"holds", "fails"} <= seen:
        return "sensitive: holds at " + ", ".join(k for k, v in verdicts.items() if v == "holds") + "; fails at " + \
            ", ".join(k for k, v in verdicts.items() if v == "fails")
    if len(seen) == 1:
        return f"{seen.pop()} at every point"
    return (f"{'holds' if 'holds' in seen else 'fails'} where decided, inconclusive at "
            + ", ".join(k for k, v in verdicts.items() if v == "inconclusive"))


def _seeds(v: np.ndarray) -> Interval:
    return mean_ci(v, unit="seed")


def _budgets(p: ClaimParams) -> dict[str, str]:
    return {"emitted": f"{p.emitted_budget} emitted tokens", "total": f"{p.budget} total tokens"}


def _competence(m: Measured, count: str, methods: list[str], p: ClaimParams, plan: SamplePlan
                ) -> tuple[Ladder, dict[str, object], Judgement]:
    """``methods`` against the strongest trivial rung at the count's budget (paired over seeds); the ladder, the
    measured values (whole-proof sampling beside) and the judgement (all_of over the methods)."""
    at = _budgets(p)[count]
    first = _seeds(m.first_sketch[count])
    ladder = Ladder.of("higher", {FIRST: first, DIRECT: 0.0})  # ties: the first sketch is the stronger
    strongest = ladder.strongest.name
    rung = m.first_sketch[count] if strongest == FIRST else np.zeros_like(m.first_sketch[count])
    gain = {k: paired_diff_ci(m.at_budget[count][k], rung, unit="seed") for k in methods}
    measured = {f"pass_rate_at_{count}_budget": {k: _seeds(m.at_budget[count][k]).rounded() for k in methods},
                "first_sketch": first.rounded(), "direct_z3": 0.0,
                "beside": {WHOLE: _seeds(m.at_budget[count]["whole_proof"]).rounded()},
                "gain_over_strongest": {k: g.rounded() for k, g in gain.items()}}
    return ladder, measured, all_of({k: superiority(g, what=f"{k} - {strongest} pass rate at {at}", plan=plan)
                                     for k, g in gain.items()})


def _saturation(m: Measured, count: str, p: ClaimParams, plan: SamplePlan) -> tuple[dict[str, object], Judgement]:
    at = _budgets(p)[count]
    ci = {k: _seeds(r) for k, r in m.at_budget[count].items()}
    return ({f"pass_rate_at_{count}_budget": {k: v.rounded() for k, v in ci.items()}},
            all_of({k: equivalence(v, margin=0.5, center=0.5, what=f"{k} pass rate at {at}", plan=plan)
                    for k, v in ci.items()}))


def _preconditions(m: Measured, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence against the trivial provers and no saturation in each count, repair not worse than a fresh
    attempt, revisions needed."""
    plan, at = plans.seeds, _budgets(p)
    methods = list(m.at_budget["total"])
    ladder, competent, judged = _competence(m, "total", methods, p, plan)
    out = [precondition("methods_beat_trivial_provers", f"every method's pass rate at {at['total']} is above the "
                        "strongest trivial prover's (the first sketch unrevised; z3 on the goal alone below it, "
                        f"whole-proof sampling above it beside), paired over seeds; {PROPOSER}",
                        ladder.strongest.name, competent, judged, ladder=ladder)]
    for k in methods:
        ladder, competent, judged = _competence(m, "emitted", [k], p, plan)
        out.append(precondition(f"beats_first_sketch_emitted_{k}", f"{k}'s pass rate at {at['emitted']} is above "
                                "the strongest trivial prover's (the first sketch unrevised; z3 on the goal alone "
                                f"below it, whole-proof sampling beside), paired over seeds; {PROPOSER}",
                                ladder.strongest.name, competent, judged, ladder=ladder))
    for count, suffix in (("total", ""), ("emitted", "_emitted")):
        measured, judged = _saturation(m, count, p, plan)
        out.append(precondition(f"benchmark_not_saturated{suffix}", f"every method's pass-rate interval at "
                                f"{at[count]} lies strictly inside (0, 1)", "the bounds 0 and 1 of a pass rate",
                                measured, judged))
    repair = paired_diff_ci(m.at_cap["immutable"], m.at_cap["whole_proof"], unit="seed")
    fails, runs = m.first_sketch_fails
    share = proportion_ci(fails, runs, unit="run")
    return [
        *out,
        precondition("repair_not_worse_than_fresh_attempt", "immutable sketches repaired with checker feedback pass "
                     f"no more than {p.pass_tol:g} below feedback-free whole-proof sampling at the searches' cap "
                     "(emitted tokens only: one whole sketch per attempt for both, so the count isolates the error "
                     "model)", "whole-proof sampling (no feedback) at the searches' cap",
                     {"immutable_minus_whole_proof": repair.rounded(),
                      "immutable": _seeds(m.at_cap["immutable"]).rounded(),
                      "whole_proof": _seeds(m.at_cap["whole_proof"]).rounded()},
                     noninferiority(repair, margin=p.pass_tol, direction="above",
                                    what="immutable - whole-proof pass rate", plan=plan)),
        precondition("revisions_needed", "the first sketch (the same for every method) is not a proof on a share of "
                     "runs above 0, so the revision strategies compared have something to do",
                     "a benchmark whose first sketches are proofs (share 0)",
                     {"first_sketch_fails": share.rounded(), "runs": runs},
                     superiority(share, what="share of first sketches that fail", plan=plans.runs)),
    ]


def _pass(m: Measured, base: str, count: str, p: ClaimParams, plan: SamplePlan
          ) -> tuple[dict[str, object], Interval]:
    """Measured values of a pass-rate comparison in one count; the judged interval: the paired difference of areas
    up to the count's budget."""
    diff = paired_diff_ci(m.auc[count][REF], m.auc[count][base], unit="seed")
    return {f"auc_{count}": {REF: _seeds(m.auc[count][REF]).rounded(), base: _seeds(m.auc[count][base]).rounded(),
                             "diff": diff.rounded(), "up_to": _budgets(p)[count]},
            f"pass_rate_at_{count}_budget": {REF: _seeds(m.at_budget[count][REF]).rounded(),
                                             base: _seeds(m.at_budget[count][base]).rounded()}}, diff


def _tokens(m: Measured, base: str, plan: SamplePlan) -> tuple[dict[str, object], Judgement]:
    """A token comparison: the paired difference per solved theorem, below 0 in both counts."""
    out, diff = {}, {}
    for count, pairs in m.tokens.items():
        a, b = pairs[base]
        diff[count] = paired_diff_ci(a, b, unit="seed")
        out[count] = {"tokens_per_solved": [round(float(np.nanmean(a)), 1), round(float(np.nanmean(b)), 1)],
                      "diff": diff[count].rounded(1), "ratio": round(float(np.nanmean(a) / np.nanmean(b)), 3)}
    return out, all_of({c: superiority(diff[c], direction="below", what=f"SketchRefine - {base} {c} tokens",
                                       plan=plan) for c in COUNTS})


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


def claims(m: Measured, p: ClaimParams, plans: Plans, grid: Mapping[str, Mapping[str, str]] | None = None,
           alone: Mapping[str, Mapping[str, str]] | None = None) -> list[Claim]:
    """The preconditions, the evidence claims (three pass-rate claims per count, two token claims judged in both
    counts) and the two checks (see the module docstring); ``grid``: point -> claim id -> verdict over the error-rate
    grid (preconditions applied), recorded beside each claim with how it reads; ``alone``: the same before the
    preconditions gate the evidence (each evidence claim's own rule at the point), recorded beside evidence."""
    plan, at = plans.seeds, _budgets(p)
    regime = ["repair_not_worse_than_fresh_attempt", "revisions_needed"]
    gates = {"total": lambda base: ["methods_beat_trivial_provers", "benchmark_not_saturated", *regime],
             "emitted": lambda base: [f"beats_first_sketch_emitted_{REF}", f"beats_first_sketch_emitted_{base}",
                                      "benchmark_not_saturated_emitted", *regime]}
    costing = ["methods_beat_trivial_provers", *regime]
    per_solved = ("per solved theorem in emitted tokens and in total tokens, emitted + read (theorems both solve "
                  f"within the searches' cap, paired by seed; the interval of the difference below 0 in both; "
                  f"{PROPOSER})")
    out = _preconditions(m, p, plans)
    for count, suffix in (("total", ""), ("emitted", "_emitted")):
        auc = f"(area under pass rate vs budget up to {at[count]}, paired difference; {PROPOSER})"
        for cid, base, statement, paper in (
                ("pass_rate_ge_immutable", "immutable", f"no more than {p.pass_tol:g} below immutable sketches'",
                 "76.0% pass on FormalMath-Lite; immutable sketches rebuild on every revision"),
                ("pass_rate_comparable_to_hilbert", "hilbert",
                 f"no more than {p.pass_tol:g} below Hilbert-like recursive regeneration's",
                 "comparable performance to Hilbert"),
                ("beats_whole_proof_sampling", "whole_proof", "above whole-proof sampling's (pass@k)",
                 "76.0% vs 61.9% for DeepSeek-Prover-V2-671B (+14.1 pp; an LLM result this error model cannot "
                 "test)")):
            measured, diff = _pass(m, base, count, p, plan)
            what = f"SketchRefine - {base} pass-rate area up to {at[count]}"
            judged = (superiority(diff, what=what, plan=plan) if base == "whole_proof" else
                      noninferiority(diff, margin=p.pass_tol, direction="above", what=what, plan=plan))
            out.append(evidence(cid + suffix, f"SketchRefine's pass rate is {statement} {auc}", paper, measured,
                                judged, requires=gates[count](base)))
    tok_imm, d_imm = _tokens(m, "immutable", plan)
    tok_hil, d_hil = _tokens(m, "hilbert", plan)
    reuse, reuse_judged = _reuse(m, p, plan)
    out += [
        evidence("fewer_tokens_than_immutable", f"SketchRefine costs fewer tokens than immutable sketches {per_solved}",
                 "cost of the proof process reduced (no number in the abstract)", tok_imm, d_imm, requires=costing),
        evidence("fewer_tokens_than_hilbert", f"SketchRefine costs fewer tokens than Hilbert-like regeneration "
                 f"{per_solved}", "significantly reduced token overhead vs Hilbert", tok_hil, d_hil, requires=costing),
        check("subgoal_reuse", f"SketchRefine keeps more than {p.min_reuse:g} of proved subgoals across edits, more "
              "than Hilbert-like regeneration, which keeps more than immutable sketches (per seed, over seeds; an "
              "invariant of the edit operations: a local edit re-checks only what depends on it)",
              "EditableSketch preserves previously proved subgoals (no number in the abstract)", reuse, reuse_judged),
        check("reported_proofs_verify", "every proof a search reports is accepted when re-checked from scratch",
              "(soundness of our pipeline)", {"rejected": m.rejected_proofs},
              exact(m.rejected_proofs == 0, f"{m.rejected_proofs} reported proofs rejected by z3 re-checked from "
                    "scratch", basis="exact solver")),
    ]
    if grid is None:
        return out
    at_points = {c.id: {k: v[c.id] for k, v in grid.items()} for c in out}
    if alone is None:
        return [replace(c, measured=c.measured | {"error_grid": at_points[c.id],
                                                  "error_grid_reading": grid_reading(at_points[c.id])}) for c in out]
    own = {c.id: {k: v[c.id] for k, v in alone.items()} for c in out}
    return [replace(c, measured=c.measured | {
        "error_grid": at_points[c.id], "error_grid_reading": grid_reading(at_points[c.id])} | ({
            "error_grid_judged_alone": own[c.id], "error_grid_judged_alone_reading": grid_reading(own[c.id])}
            if c.kind == "evidence" else {})) for c in out]
