"""sketchrefine science against independent oracles (brute-force evaluation of the definitions, hand-built
sketches); the platform contract (imports, params, smoke run, claims file) is checked by
tests/test_paper_contract.py."""

from __future__ import annotations

import re
import shutil
from fractions import Fraction

import numpy as np
import pytest

from paperdag.common.plans import SamplePlan
from paperdag.common.verdicts import resolve
from paperdag.io import read_table, write_json, write_table
from paperdag.papers.sketchrefine.analysis import Runs
from paperdag.papers.sketchrefine.benchmark import (
    direct_proof,
    draw_level,
    reference_checks,
)
from paperdag.papers.sketchrefine.checker import (
    COARSE,
    FALSE,
    PROVED,
    Checker,
    check_step,
)
from paperdag.papers.sketchrefine.claims import FIRST, Measured, claims, grid_reading
from paperdag.papers.sketchrefine.grid import POINTS, grid_theorems, point_rates
from paperdag.papers.sketchrefine.params import ClaimParams, GridParams, Plans, RateParams
from paperdag.papers.sketchrefine.proofcheck import verify_proof
from paperdag.papers.sketchrefine.proposer import ErrorRates, Feedback, Proposer
from paperdag.papers.sketchrefine.reverify import (
    CERTIFICATE_FILE,
    MAX_RLIMIT,
    PROOFS,
)
from paperdag.papers.sketchrefine.search import Search
from paperdag.papers.sketchrefine.sketch import GOAL, EditableSketch, n_tokens
from paperdag.papers.sketchrefine.theorems import (
    Definition,
    Theorem,
    theorem_rows,
    theorems_from_rows,
)
from paperdag.papers.sketchrefine.verify import VERIFIED_FILE
from paperdag.verification import Outcome
from paperdag.verification import reverify as verify_folder

SLUG = "sketchrefine"
RLIMIT = 4000
# y0 = x0 x1 + 1, y1 = y0 x0 - 2, y2 = y1 x1 + 3, y3 = y2 x0 (goal): three hidden lemmas y0, y1, y2
CHAIN = Theorem("chain", {"x0": (-2, 2), "x1": (-1, 3)},
                (Definition("y0", "x0", "x1", 1), Definition("y1", "y0", "x0", -2), Definition("y2", "y1", "x1", 3),
                 Definition("y3", "y2", "x0", 0)))
NO_ERRORS = ErrorRates(0.0, 0.0, 0.0, 0.0, (0.5,))


def _values(t: Theorem, n: int = 9) -> dict[str, np.ndarray]:
    """Every variable on an n^d grid of the input box (the brute-force oracle)."""
    grids = np.meshgrid(*(np.linspace(lo, hi, n) for lo, hi in t.inputs.values()))
    vals = {x: g.ravel() for x, g in zip(t.inputs, grids, strict=True)}
    for d in t.defs:
        vals[d.var] = vals[d.a] * vals[d.b] + d.c
    return vals


def test_interval_boxes_contain_every_value_and_single_steps_are_tight():
    """The reference lemmas are sound (brute force) and the first step's box is attained (corners of the box)."""
    boxes, vals = CHAIN.boxes(), _values(CHAIN)
    for d in CHAIN.defs:
        assert boxes[d.var][0] <= vals[d.var].min() and vals[d.var].max() <= boxes[d.var][1]
    assert (vals["y0"].min(), vals["y0"].max()) == boxes["y0"]


def test_checker_accepts_a_correct_step_and_rejects_a_wrong_one_with_a_true_counterexample():
    boxes = CHAIN.boxes()
    assert check_step(CHAIN, "y1", boxes["y1"], {"y0": boxes["y0"]}, RLIMIT).status == PROVED
    lo, hi = boxes["y1"]
    wrong = check_step(CHAIN, "y1", (lo, hi - 1), {"y0": boxes["y0"]}, RLIMIT)
    assert wrong.status == FALSE
    cex = {k: float(eval(v.rstrip("?"))) for k, v in re.findall(r"(\w+)=([-\d/.?]+)", wrong.error)}
    assert boxes["y0"][0] <= cex["y0"] <= boxes["y0"][1] and -2 <= cex["x0"] <= 2
    assert abs(cex["y1"] - (cex["y0"] * cex["x0"] - 2)) < 1e-9 and cex["y1"] > hi - 1
    assert wrong.value == cex["y1"] and lo <= wrong.value <= hi  # reachable: inside the sound reference box


def test_repair_conditioned_on_a_counterexample_is_the_bayes_posterior_and_never_worse_than_a_fresh_draw():
    """Oracle: rejection sampling from the feedback-free distribution (keep draws whose box contains the
    counterexample) and the closed form (1 - p) / ((1 - p) + p q); both >= 1 - p."""
    rates = ErrorRates(0.4, 0.0, 0.0, 0.0, (0.1, 0.25, 0.5))
    prop = Proposer(CHAIN, rates, np.random.default_rng(0))
    lo, hi = CHAIN.boxes()["y2"]
    for x in (Fraction(hi), Fraction(2 * lo + 1, 2), Fraction(lo + hi, 2)):
        boxes, p = prop.distribution("y2", Feedback(counterexamples={"y2": [x]}))
        wrong = prop.tightened("y2")
        q = np.mean([b[0] <= x <= b[1] for b in wrong])
        assert p[0] == pytest.approx(0.6 / (0.6 + 0.4 * q)) and p[0] >= 0.6
        draws = [prop.lemma("y2", Feedback()) for _ in range(20_000)]
        kept = [b for b in draws if b[0] <= x <= b[1]]
        assert np.mean([b == (lo, hi) for b in kept]) == pytest.approx(p[0], abs=0.02)
    boxes, p = prop.distribution("y2", Feedback())
    assert p[0] == pytest.approx(0.6) and boxes[0] == (lo, hi)


def test_benchmark_theorems_need_a_sketch_and_have_one():
    """Kept theorems: z3 alone runs out of budget on the goal, the reference sketch checks, and the rlimit verdict
    is reproducible (no wall clock in it)."""
    level = draw_level(np.random.default_rng(3), 5, 1, 50, RLIMIT, 2, 3, 5, 0.7)
    t = level.theorems[0]
    assert not direct_proof(t, RLIMIT) and reference_checks(t, RLIMIT)
    verdicts = {check_step(t, t.goal_var, t.goal(), {}, RLIMIT).status for _ in range(2)}
    assert verdicts == {COARSE}
    assert theorems_from_rows(theorem_rows(t)) == [t]


def _checked(s: EditableSketch, checker: Checker) -> None:
    for i in s.pending():
        s.record(i, checker(s.theorem, s.nodes[i].var, s.nodes[i].box,
                            {s.nodes[c].var: s.nodes[c].box for c in s.cites(i)}))


def test_editing_one_node_keeps_the_other_proofs():
    """Replace the middle lemma: only it, its dependent and the goal are re-checked (3 checker calls); y0 keeps its
    proof. A weaker y1 breaks y2's proof (re-checking dependents matters); restoring it repairs y2."""
    boxes, checker = CHAIN.boxes(), Checker(RLIMIT)
    s = EditableSketch.new(CHAIN, {v: boxes[v] for v in CHAIN.lemma_vars}, [])
    _checked(s, checker)
    assert s.solved() and s.cites("h_y2") == ("h_y1",) and s.cites(GOAL) == ("h_y2",)
    kept = dict(s.nodes)
    s.replace("h_y1", (boxes["y1"][0] - 1, boxes["y1"][1]))
    assert s.pending() == ["h_y1", "h_y2", GOAL] and s.valid("h_y0")
    calls = checker.calls
    _checked(s, checker)
    assert checker.calls - calls == 3 and s.nodes["h_y0"] is kept["h_y0"] and s.valid("h_y0")
    assert s.nodes["h_y1"].status == PROVED and s.nodes["h_y2"].status == FALSE and not s.solved()
    s.replace("h_y1", boxes["y1"])
    _checked(s, checker)
    assert s.solved() and s.nodes["h_y2"] is kept["h_y2"] and s.nodes["h_y0"] is kept["h_y0"]


def test_incremental_checking_equals_checking_from_scratch_after_any_edits():
    """The invariant behind subgoal reuse: after random replace / insert / delete edits and a re-check of only the
    pending nodes, every node's status is the one a from-scratch check of its current step gives, and a node whose
    statement and premises no edit touched keeps its proof object."""
    rng, checker = np.random.default_rng(1), Checker(RLIMIT)
    prop = Proposer(CHAIN, ErrorRates(0.5, 0.0, 0.0, 0.0, (0.25, 0.5)), rng)
    for _ in range(20):
        s = EditableSketch.new(CHAIN, {v: prop.lemma(v, Feedback()) for v in CHAIN.lemma_vars if rng.random() < 0.7},
                               [])
        _checked(s, checker)
        for _ in range(4):
            before = {i: (n, s.premises(i)) for i, n in s.nodes.items() if s.valid(i)}
            var = str(rng.choice(list(CHAIN.lemma_vars)))
            if s.nodes.get(f"h_{var}") is None:
                s.insert(var, prop.lemma(var, Feedback()))
            elif rng.random() < 0.5 or s.dependents(f"h_{var}"):
                s.replace(f"h_{var}", prop.lemma(var, Feedback()))
            else:
                s.delete(f"h_{var}")
            untouched = [i for i, (n, prem) in before.items() if s.nodes.get(i) is n and s.premises(i) == prem]
            _checked(s, checker)
            for i in s.nodes:
                fresh = check_step(CHAIN, s.nodes[i].var, s.nodes[i].box,
                                   {s.nodes[c].var: s.nodes[c].box for c in s.cites(i)}, RLIMIT)
                assert s.nodes[i].status == fresh.status and s.valid(i) == (fresh.status == PROVED)
            assert all(s.valid(i) and s.nodes[i] is before[i][0] for i in untouched)


def test_insert_decompose_and_delete_rewire_citations():
    boxes = CHAIN.boxes()
    s = EditableSketch.new(CHAIN, {"y0": boxes["y0"]}, [("y1", (0, 0))])
    assert s.cites(GOAL) == ("h_y0",)  # a coarse step unfolding y2 and y1
    s.decompose({"y1": boxes["y1"], "y2": boxes["y2"]})
    assert s.cites(GOAL) == ("h_y2",) and s.cites("h_y2") == ("h_y1",)
    with pytest.raises(ValueError):
        s.delete("h_y1")
    s.delete("s0")
    assert "s0" not in s.nodes


def test_proofcheck_accepts_a_reference_proof_and_rejects_tampered_ones():
    boxes = CHAIN.boxes()
    s = EditableSketch.new(CHAIN, {v: boxes[v] for v in CHAIN.lemma_vars}, [])
    rows = s.proof_rows()
    assert verify_proof(CHAIN, rows, Checker(RLIMIT)) == ""
    wrong = [r | {"hi": str(int(r["hi"]) - 1)} if r["node"] == "h_y1" else r for r in rows]
    circular = [r | {"cites": ["h_y2"]} if r["node"] == "h_y1" else r for r in rows]
    weak_goal = [r | {"hi": str(int(r["hi"]) + 100)} if r["node"] == GOAL else r for r in rows]
    for bad in (wrong, circular, weak_goal, rows[1:]):
        assert verify_proof(CHAIN, bad, Checker(RLIMIT)) != ""


@pytest.mark.parametrize("method", ["sketchrefine", "hilbert", "immutable", "whole_proof"])
def test_an_error_free_proposer_solves_in_one_sketch(method):
    run = Search(Proposer(CHAIN, NO_ERRORS, np.random.default_rng(0)), Checker(RLIMIT), 10_000).run(method)
    assert run.solved and run.rounds == 0 and run.tokens == run.sketch.tokens()


def test_tokens_counted_both_ways_on_a_hand_worked_repair():
    """One wrong lemma (h_y1 too tight) in an otherwise reference sketch. SketchRefine emits the sketch, reads the
    statement; then replaces h_y1 (emits one line) after reading the statement, the sketch and the error line of
    every failure so far (h_y1 false; h_y2 above it is proved from the tighter premise). Whole-proof sampling reads
    only the statement per attempt."""
    boxes = CHAIN.boxes()
    lo, hi = boxes["y1"]
    first = {v: boxes[v] for v in CHAIN.lemma_vars} | {"y1": (lo, hi - 1)}

    class Scripted(Proposer):
        def lemmas(self, variables, feedback):
            return {v: first[v] for v in variables}

        def lemma(self, var, feedback):
            return boxes[var]

    run = Search(Scripted(CHAIN, NO_ERRORS, np.random.default_rng(0)), Checker(RLIMIT), 10_000).run("sketchrefine")
    sketch = EditableSketch.new(CHAIN, first, [])
    statement = n_tokens(CHAIN.statement())
    error = check_step(CHAIN, "y1", (lo, hi - 1), {"y0": boxes["y0"]}, RLIMIT)
    line = n_tokens(f"h_y1 {error.status}: {error.error}")
    assert run.solved and run.rounds == 1 and error.status == FALSE
    assert run.tokens == sketch.tokens() + sketch.tokens(["h_y1"])
    assert run.read == statement + (statement + sketch.tokens() + line)
    rates = ErrorRates(0.5, 0.5, 0.0, 0.0, (0.25, 0.5))
    for seed in range(3):
        whole = Search(Proposer(CHAIN, rates, np.random.default_rng(seed)), Checker(RLIMIT), 300).run("whole_proof")
        assert whole.read == (whole.rounds + whole.solved) * statement  # one statement per paid attempt


def test_area_under_pass_vs_budget_matches_numerical_integration():
    """A_s(B) in closed form against a Riemann sum of the step function P_s(b) on a fine grid."""
    rng = np.random.default_rng(0)
    n = 40
    runs = Runs(seed=np.repeat([0, 1], n), theorem=np.tile(np.arange(n), 2), lemmas=np.full(2 * n, 3),
                tokens=rng.integers(10, 400, 2 * n), read=rng.integers(0, 900, 2 * n), solved=rng.random(2 * n) < 0.7,
                rounds=np.zeros(2 * n, int), proved_before=np.zeros(2 * n, int), preserved=np.zeros(2 * n, int))
    grid = np.linspace(0, 1000, 200_001)[1:]
    for count in ("emitted", "total"):
        riemann = np.mean([runs.pass_rates(b, count) for b in grid[::50]], axis=0)
        assert runs.auc(1000, count) == pytest.approx(riemann, abs=2e-3)
    assert np.all(runs.auc(1000, "total") <= runs.auc(1000, "emitted"))


def test_refine_repairs_errors_with_local_edits_and_its_proofs_verify():
    """With every lemma skipped or wrong at first, SketchRefine needs edits; its final proof re-checks, and it never
    spends more tokens than regenerating from scratch on the same first sketch."""
    rates = ErrorRates(0.5, 0.5, 1.0, 0.0, (0.25, 0.5))
    for seed in range(4):
        runs = {m: Search(Proposer(CHAIN, rates, np.random.default_rng(seed)), Checker(RLIMIT), 10_000).run(m)
                for m in ("sketchrefine", "immutable")}
        assert runs["sketchrefine"].solved and runs["sketchrefine"].rounds >= 1
        assert verify_proof(CHAIN, runs["sketchrefine"].sketch.proof_rows(), Checker(RLIMIT)) == ""
        assert runs["sketchrefine"].preserved <= runs["sketchrefine"].proved_before


PARAMS = ClaimParams(budget=100, emitted_budget=50, pass_tol=0.05, min_reuse=0.9)
PLANS = Plans(**{name: SamplePlan(unit=unit, n=n, basis="design", effect=None, power=None, pilot_n=0, pilot_sd=None,
                                  looks=1, spending="none", why=f"the {n} {unit}s of the test inputs")
                 for name, unit, n in (("seeds", "seed", 3), ("runs", "run", 100), ("grid", "seed", 3))})
REUSE = {"sketchrefine": [0.5, 0.52, 0.48], "hilbert": [0.6, 0.62, 0.58], "immutable": [0.0, 0.0, 0.0]}
METHODS = ("sketchrefine", "hilbert", "immutable", "whole_proof")
COUNTS = ("emitted", "total")
PASS_CLAIMS = ("pass_rate_ge_immutable", "pass_rate_comparable_to_hilbert", "beats_whole_proof_sampling")
TOKEN_CLAIMS = ("fewer_tokens_than_immutable", "fewer_tokens_than_hilbert")


def _measured(refine: list[float], refine_tokens: list[float], first_fails: int = 90,
              reuse: dict[str, list[float]] = REUSE, rejected: int = 1,
              first: tuple[float, ...] = (0.1, 0.12, 0.08), emitted: dict[str, list[float]] | None = None,
              emitted_tokens: list[float] | None = None) -> Measured:
    """Hilbert and immutable at 0.68-0.72 on every per-seed rate, whole-proof sampling at 0.6-0.64, 100 +- 10 tokens,
    the first sketch unrevised at ``first``; SketchRefine as given; ``emitted`` overrides methods' emitted-count
    rates, ``emitted_tokens`` SketchRefine's emitted tokens."""
    rates = {"sketchrefine": np.array(refine), **{m: np.array([0.68, 0.7, 0.72]) for m in METHODS[1:3]},
             "whole_proof": np.array([0.6, 0.64, 0.61])}
    by_count = {"total": rates, "emitted": rates | {m: np.array(v) for m, v in (emitted or {}).items()}}
    base = np.array([100.0, 110, 90])
    pairs = {"total": (np.array(refine_tokens), base),
             "emitted": (np.array(emitted_tokens if emitted_tokens is not None else refine_tokens), base)}
    return Measured(at_budget=by_count, auc=by_count, at_cap=rates,
                    tokens={c: {m: pairs[c] for m in METHODS[1:]} for c in COUNTS},
                    first_sketch={c: np.array(first) for c in COUNTS}, first_sketch_fails=(first_fails, 100),
                    reuse={m: np.array(v) for m, v in reuse.items()}, rejected_proofs=rejected)


def _claims(m: Measured) -> dict[str, object]:
    return {c.id: c for c in resolve(claims(m, PARAMS, PLANS))}


def test_every_pass_claim_is_judged_in_both_counts_and_token_claims_in_both():
    out = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45]))
    for cid in PASS_CLAIMS:
        assert {cid, cid + "_emitted"} <= set(out)
        assert "emitted tokens" in out[cid + "_emitted"].statement and "total tokens" in out[cid].statement
    for c in out.values():
        if c.kind == "evidence" or c.id.startswith(("methods_beat", "beats_first")):
            assert "a seeded error model, not an LLM" in c.statement
    assert set(out["fewer_tokens_than_hilbert"].measured) == set(COUNTS)


def test_claims_fail_when_refine_is_worse_and_costs_more():
    """Regime reached (inside (0, 1), repair no worse than sampling, revisions needed): a worse, costlier
    SketchRefine fails every evidence claim in both counts; the checks fail on bad reuse and a rejected proof."""
    out = _claims(_measured([0.47, 0.5, 0.52], [200.0, 215, 190]))
    assert all(c.holds for c in out.values() if c.kind == "precondition")
    evidence = [c for c in out.values() if c.kind == "evidence"]
    assert len(evidence) == 8
    for c in evidence:
        assert c.verdict == "fails", (c.id, c.reason)
    assert out["subgoal_reuse"].verdict == out["reported_proofs_verify"].verdict == "fails"


def test_claims_hold_when_refine_is_better_and_cheaper():
    out = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45], reuse={
        "sketchrefine": [0.99, 0.995, 0.985], "hilbert": [0.4, 0.42, 0.38], "immutable": [0.0, 0.0, 0.0]}, rejected=0))
    assert all(c.holds for c in out.values()), [(c.id, c.reason) for c in out.values() if not c.holds]


def test_a_token_claim_cheaper_in_one_count_only_does_not_hold():
    """Cheaper in total tokens, costlier in emitted ones: the token claims are not "holds" (all_of over the counts)."""
    out = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45], emitted_tokens=[200.0, 215, 190]))
    for cid in TOKEN_CLAIMS:
        assert out[cid].verdict == "fails" and "emitted tokens" in out[cid].reason


def test_a_saturated_benchmark_leaves_the_pass_rate_claims_inconclusive():
    """SketchRefine at 1.0 on every seed: its interval [1, 1] has no width, so the benchmark is not shown to be
    unsaturated and "better" is not judged; the token claims do not need an unsaturated pass rate and are still
    judged. First sketches that all prove: nothing is judged."""
    out = _claims(_measured([1.0, 1.0, 1.0], [50.0, 55, 45]))
    for suffix in ("", "_emitted"):
        saturated = out["benchmark_not_saturated" + suffix]
        assert saturated.verdict == "inconclusive" and "sketchrefine pass rate at" in saturated.reason
        for cid in PASS_CLAIMS:
            assert out[cid + suffix].verdict == "inconclusive"
            assert "benchmark_not_saturated" + suffix in out[cid + suffix].reason
    assert out["fewer_tokens_than_immutable"].holds
    out = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45], first_fails=0))
    assert out["revisions_needed"].verdict != "holds"
    assert all(c.verdict == "inconclusive" for c in out.values() if c.kind == "evidence")


def test_saturation_in_emitted_tokens_only_gates_only_the_emitted_claims():
    """SketchRefine at 1.0 in emitted tokens (the reviewer's finding at the old cap), inside (0, 1) in total: the
    emitted pass-rate claims are inconclusive, the total-token ones are judged."""
    out = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45], emitted={"sketchrefine": [1.0, 1.0, 1.0]}))
    assert out["benchmark_not_saturated"].holds and out["benchmark_not_saturated_emitted"].verdict != "holds"
    for cid in PASS_CLAIMS:
        assert out[cid].holds and out[cid + "_emitted"].verdict == "inconclusive"


def test_competence_is_judged_against_the_first_sketch_unrevised_per_method_in_emitted_tokens():
    """The ladder: the first sketch unrevised above z3 alone (0), whole-proof sampling beside. Methods below the
    first sketch fail the competence precondition and every evidence claim is inconclusive. In emitted tokens a
    baseline at its first sketch's rate gates only the comparison that uses it."""
    row = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45]))["methods_beat_trivial_provers"].row()
    assert row["verdict"] == "holds" and row["baseline"] == FIRST
    assert [r["baseline"] for r in row["ladder"]][0] == FIRST and row["ladder"][1]["value"] == 0.0
    assert "whole-proof sampling" in next(iter(row["measured"]["beside"]))
    out = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45], first=(0.9, 0.92, 0.88)))
    assert out["methods_beat_trivial_provers"].verdict == "fails"
    assert all(c.verdict == "inconclusive" for c in out.values() if c.kind == "evidence")
    out = _claims(_measured([0.87, 0.9, 0.92], [50.0, 55, 45], emitted={"whole_proof": [0.1, 0.12, 0.08]}))
    assert out["beats_first_sketch_emitted_whole_proof"].verdict != "holds"
    assert out["beats_whole_proof_sampling_emitted"].verdict == "inconclusive"
    assert out["pass_rate_comparable_to_hilbert_emitted"].holds and out["beats_whole_proof_sampling"].holds


def test_grid_verdicts_are_recorded_and_a_flip_reads_sensitive():
    assert grid_reading({"a": "holds", "b": "holds"}) == "holds at every point"
    assert grid_reading({"a": "holds", "b": "fails", "c": "inconclusive"}).startswith("sensitive: holds at a")
    assert grid_reading({"a": "holds", "b": "inconclusive"}) == "holds where decided, inconclusive at b"
    m = _measured([0.87, 0.9, 0.92], [50.0, 55, 45])
    plain = claims(m, PARAMS, PLANS)
    grid = {"x": {c.id: "holds" for c in plain}, "y": {c.id: "fails" for c in plain}}
    for c in claims(m, PARAMS, PLANS, grid=grid):
        assert c.measured["error_grid"] == {"x": "holds", "y": "fails"}
        assert c.measured["error_grid_reading"].startswith("sensitive")
    alone = {"x": {c.id: "holds" for c in plain}, "y": {c.id: "holds" for c in plain}}
    for c in claims(m, PARAMS, PLANS, grid=grid, alone=alone):
        assert c.measured["error_grid_reading"].startswith("sensitive")
        assert (c.measured.get("error_grid_judged_alone_reading") == "holds at every point") == (c.kind == "evidence")


def test_grid_points_scale_one_rate_and_take_the_first_theorems_of_each_level():
    rates = RateParams(p_wrong=0.15, p_skip=0.35, p_spurious=0.6, p_skip_after_coarse=0.1, tighten=[0.5])
    grid = GridParams(low=0.5, high=2.0, per_level=2, seeds=3)
    assert set(POINTS) == {f"{r}_{s}" for r in ("p_wrong", "p_skip", "p_spurious") for s in ("low", "high")}
    assert point_rates(rates, grid, "p_wrong_high") == ErrorRates(0.3, 0.35, 0.6, 0.1, (0.5,))
    assert point_rates(rates, grid, "p_spurious_high").p_spurious == 1.0  # capped
    low = point_rates(rates, grid, "p_skip_low")
    assert low.p_skip == 0.175 and low.p_skip_after_coarse == 0.1
    assert point_rates(rates, GridParams(low=0.1, high=2.0, per_level=1, seeds=2), "p_skip_low"
                       ).p_skip_after_coarse == pytest.approx(0.035)  # never above p_skip
    with pytest.raises(ValueError):
        point_rates(rates, grid, "tighten_high")
    ts = [Theorem(f"t{i}", CHAIN.inputs, CHAIN.defs[: 2 + i % 2]) for i in range(6)]
    assert [j for j, _ in grid_theorems(ts, 2)] == [0, 1, 2, 3]


def test_first_sketch_rates_and_reuse_per_seed_match_a_loop_over_runs():
    """Runs.first_sketch_pass_rates and reuse_per_seed against a plain loop over the runs of each seed."""
    rng = np.random.default_rng(1)
    n, seeds = 30, 3
    runs = Runs(seed=np.repeat(np.arange(seeds), n), theorem=np.tile(np.arange(n), seeds),
                lemmas=np.full(seeds * n, 3), tokens=rng.integers(10, 400, seeds * n),
                read=rng.integers(0, 900, seeds * n), solved=rng.random(seeds * n) < 0.7,
                rounds=rng.integers(0, 3, seeds * n), proved_before=rng.integers(0, 5, seeds * n),
                preserved=rng.integers(0, 3, seeds * n))
    for s in range(seeds):
        rows = [i for i in range(seeds * n) if runs.seed[i] == s]
        first = sum(bool(runs.solved[i]) and runs.rounds[i] == 0 and runs.tokens[i] + runs.read[i] <= 700
                    for i in rows) / n
        assert runs.first_sketch_pass_rates(700, "total")[s] == pytest.approx(first)
        kept = sum(int(runs.preserved[i]) for i in rows) / max(1, sum(int(runs.proved_before[i]) for i in rows))
        assert runs.reuse_per_seed()[s] == pytest.approx(kept)


def test_smoke_pipeline_reports_only_verified_proofs(smoke_runs):
    runs = smoke_runs(SLUG)
    verified = read_table(runs["verify"] / VERIFIED_FILE).to_pylist()
    assert verified and all(r["ok"] for r in verified)
    metrics = runs.metrics()["metrics"]
    assert metrics["rejected_proofs"] == 0 and 0 < metrics["pass_rate_cap_sketchrefine"] <= 1
    assert metrics["subgoal_reuse_immutable"] == 0.0
    assert metrics["theorems"] >= 2
    assert {"pass_rate_L3_emitted_sketchrefine", "pass_rate_L4_total_whole_proof",
            f"grid_{POINTS[0]}_pass_rate_emitted_hilbert", "grid_default_x1_auc_total_diff_immutable"} <= set(metrics)
    claims_ = runs.metrics()["claims"]
    points = {"default_x1", *POINTS}
    assert all(set(c["measured"]["error_grid"]) == points for c in claims_)
    grid_rows = read_table(runs[f"grid_{POINTS[0]}"] / "runs.parquet").to_pylist()
    assert {r["method"] for r in grid_rows} == set(METHODS) and all(r["reported"] or not r["solved"]
                                                                      for r in grid_rows)


def test_smoke_certificate_reverifies_and_tampered_copies_are_refuted(smoke_runs, tmp_path):
    """``paperdag verify`` accepts the verify folder as stored (VERIFIED); a lemma made false (an empty box) and a
    deleted proof (the stored verdict has no proof behind it) are REFUTED, an rlimit beyond the paper's bound is
    REFUSED naming it, a foreign folder is REFUSED naming the file it lacks, and a budget of one proof leaves the
    certificate UNDECIDED."""
    folder = smoke_runs(SLUG)["verify"]
    result = verify_folder(SLUG, folder)
    assert result.outcome is Outcome.VERIFIED, result

    def tampered(name: str) -> tuple:
        copy = tmp_path / name
        shutil.copytree(folder, copy, copy_function=shutil.copyfile)  # writable copies (the store's may not be)
        return copy, read_table(copy / PROOFS)

    copy, proofs = tampered("tight")
    rows = proofs.to_pylist()
    i = next(k for k, r in enumerate(rows) if r["node"].startswith("h_"))
    rows[i] = rows[i] | {"hi": str(int(rows[i]["lo"]) - 1)}  # an empty box: the lemma is false
    write_table(copy / PROOFS, proofs.from_pylist(rows, schema=proofs.schema))
    result = verify_folder(SLUG, copy)
    assert result.outcome is Outcome.REFUTED and "rejected" in result.message, result
    copy, proofs = tampered("missing")
    first = proofs.to_pylist()[0]
    write_table(copy / PROOFS, proofs.from_pylist(
        [r for r in proofs.to_pylist() if (r["method"], r["theorem"], r["seed"]) !=
         (first["method"], first["theorem"], first["seed"])], schema=proofs.schema))
    assert verify_folder(SLUG, copy).outcome is Outcome.REFUTED
    copy, _ = tampered("rlimit")
    write_json(copy / CERTIFICATE_FILE, {"rlimit": MAX_RLIMIT + 1})
    result = verify_folder(SLUG, copy)
    assert result.outcome is Outcome.REFUSED and result.message.startswith("rlimit"), result
    (tmp_path / "foreign").mkdir()
    write_json(tmp_path / "foreign" / "meta.json", {"kind": "network"})
    result = verify_folder(SLUG, tmp_path / "foreign")
    assert result.outcome is Outcome.REFUSED and result.message.startswith(CERTIFICATE_FILE), result
    result = verify_folder(SLUG, folder, budget=1)
    assert result.outcome is Outcome.UNDECIDED and result.message.startswith("--budget 1 spent: 1 of "), result


def test_runs_subset_is_the_default_share_of_a_grid_point():
    """Runs.subset keeps exactly the runs on the named theorems with proposer seeds below the grid's count."""
    rng = np.random.default_rng(2)
    n, seeds = 6, 4
    runs = Runs(seed=np.repeat(np.arange(seeds), n), theorem=np.tile(np.array([f"t{i}" for i in range(n)]), seeds),
                lemmas=np.full(seeds * n, 3), tokens=rng.integers(10, 400, seeds * n),
                read=rng.integers(0, 900, seeds * n), solved=rng.random(seeds * n) < 0.7,
                rounds=rng.integers(0, 3, seeds * n), proved_before=rng.integers(0, 5, seeds * n),
                preserved=rng.integers(0, 3, seeds * n))
    sub = runs.subset({"t1", "t4"}, 2)
    rows = [i for i in range(seeds * n) if runs.theorem[i] in ("t1", "t4") and runs.seed[i] < 2]
    assert list(sub.tokens) == [runs.tokens[i] for i in rows] and set(sub.seeds()) == {0, 1}
    assert sub.pass_rates(1e9, "total") == pytest.approx([runs.solved[[i for i in rows if runs.seed[i] == s]].mean()
                                                          for s in (0, 1)])
