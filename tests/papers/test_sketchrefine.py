"""sketchrefine science against independent oracles (brute-force evaluation of the definitions, hand-built
sketches); the platform contract (imports, params, smoke run, claims file) is checked by
tests/test_paper_contract.py."""

from __future__ import annotations

import re

import numpy as np
import pytest

from paperdag.common.verdicts import resolve
from paperdag.io import read_table
from paperdag.papers.sketchrefine.benchmark import direct_proof, draw_level, reference_checks
from paperdag.papers.sketchrefine.checker import COARSE, FALSE, PROVED, Checker, check_step
from paperdag.papers.sketchrefine.claims import claims
from paperdag.papers.sketchrefine.params import ClaimParams
from paperdag.papers.sketchrefine.proofcheck import verify_proof
from paperdag.papers.sketchrefine.proposer import ErrorRates, Proposer
from paperdag.papers.sketchrefine.search import Search
from paperdag.papers.sketchrefine.sketch import GOAL, EditableSketch
from paperdag.papers.sketchrefine.theorems import Definition, Theorem, theorem_rows, theorems_from_rows
from paperdag.papers.sketchrefine.verify import VERIFIED_FILE

SLUG = "sketchrefine"
RLIMIT = 4000
# y0 = x0 x1 + 1, y1 = y0 x0 - 2, y2 = y1 x1 + 3, y3 = y2 x0 (goal): three hidden lemmas y0, y1, y2
CHAIN = Theorem("chain", {"x0": (-2, 2), "x1": (-1, 3)},
                (Definition("y0", "x0", "x1", 1), Definition("y1", "y0", "x0", -2), Definition("y2", "y1", "x1", 3),
                 Definition("y3", "y2", "x0", 0)))
NO_ERRORS = ErrorRates(0.0, 0.0, 0.0, 1.0, 0.0, (0.5,))


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
    wrong = [r | {"hi": r["hi"] - 1} if r["node"] == "h_y1" else r for r in rows]
    circular = [r | {"cites": ["h_y2"]} if r["node"] == "h_y1" else r for r in rows]
    weak_goal = [r | {"hi": r["hi"] + 100} if r["node"] == GOAL else r for r in rows]
    for bad in (wrong, circular, weak_goal, rows[1:]):
        assert verify_proof(CHAIN, bad, Checker(RLIMIT)) != ""


@pytest.mark.parametrize("method", ["sketchrefine", "hilbert", "immutable", "whole_proof"])
def test_an_error_free_proposer_solves_in_one_sketch(method):
    run = Search(Proposer(CHAIN, NO_ERRORS, np.random.default_rng(0)), Checker(RLIMIT), 10_000).run(method)
    assert run.solved and run.rounds == 0 and run.tokens == run.sketch.tokens()


def test_refine_repairs_errors_with_local_edits_and_its_proofs_verify():
    """With every lemma skipped or wrong at first, SketchRefine needs edits; its final proof re-checks, and it never
    spends more tokens than regenerating from scratch on the same first sketch."""
    rates = ErrorRates(0.5, 0.5, 1.0, 0.9, 0.0, (0.25, 0.5))
    for seed in range(4):
        runs = {m: Search(Proposer(CHAIN, rates, np.random.default_rng(seed)), Checker(RLIMIT), 10_000).run(m)
                for m in ("sketchrefine", "immutable")}
        assert runs["sketchrefine"].solved and runs["sketchrefine"].rounds >= 1
        assert verify_proof(CHAIN, runs["sketchrefine"].sketch.proof_rows(), Checker(RLIMIT)) == ""
        assert runs["sketchrefine"].preserved <= runs["sketchrefine"].proved_before


PARAMS = ClaimParams(budget=100, pass_tol=0.05, min_reuse=0.9)
TOKENS = (np.array([200.0, 210, 190]), np.array([100.0, 110, 90]))
REUSE = {"sketchrefine": 0.5, "hilbert": 0.6, "immutable": 0.0}


def _rates(refine: list[float]) -> dict[str, np.ndarray]:
    return {"sketchrefine": np.array(refine), **{m: np.array([0.68, 0.7, 0.72])
                                                  for m in ("hilbert", "immutable", "whole_proof")}}


def test_claims_fail_when_refine_is_worse():
    """Regime reached for the pass rates (inside (0, 1), repair no worse than sampling): a worse SketchRefine fails
    them; the token claims stay inconclusive because only emitted tokens are counted."""
    out = {c.id: c for c in resolve(claims(_rates([0.48, 0.5, 0.52]), _rates([0.9, 0.92, 0.94]), {
        "hilbert": TOKENS, "immutable": TOKENS}, REUSE, 1, PARAMS))}
    assert out["benchmark_not_saturated"].holds and out["repair_not_worse_than_fresh_attempt"].holds
    for cid in ("pass_rate_ge_immutable", "pass_rate_comparable_to_hilbert", "beats_whole_proof_sampling"):
        assert out[cid].verdict == "fails", (cid, out[cid].reason)
    for cid in ("fewer_tokens_than_immutable", "fewer_tokens_than_hilbert"):
        assert out[cid].verdict == "inconclusive" and "tokens_count_context" in out[cid].reason
    assert out["subgoal_reuse"].verdict == out["reported_proofs_verify"].verdict == "fails"


def test_a_saturated_benchmark_leaves_the_pass_rate_claims_inconclusive():
    """SketchRefine at 1.0 on every seed: its interval touches 1, so "better" is not judged."""
    out = {c.id: c for c in resolve(claims(_rates([1.0, 1.0, 1.0]), _rates([1.0, 1.0, 1.0]), {
        "hilbert": TOKENS, "immutable": TOKENS}, {"sketchrefine": 0.99, "hilbert": 0.4, "immutable": 0.0}, 0,
        PARAMS))}
    assert out["benchmark_not_saturated"].verdict == "fails" and "reaches 1" in out["benchmark_not_saturated"].reason
    for cid in ("pass_rate_ge_immutable", "pass_rate_comparable_to_hilbert", "beats_whole_proof_sampling"):
        assert out[cid].verdict == "inconclusive" and "benchmark_not_saturated" in out[cid].reason
    assert out["subgoal_reuse"].holds and out["reported_proofs_verify"].holds


def test_smoke_pipeline_reports_only_verified_proofs(smoke_runs):
    runs = smoke_runs(SLUG)
    verified = read_table(runs["verify"] / VERIFIED_FILE).to_pylist()
    assert verified and all(r["ok"] for r in verified)
    metrics = runs.metrics()["metrics"]
    assert metrics["rejected_proofs"] == 0 and 0 < metrics["pass_rate_max_budget_sketchrefine"] <= 1
    assert metrics["subgoal_reuse_immutable"] == 0.0
    assert metrics["theorems"] >= 2
