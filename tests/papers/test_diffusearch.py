"""diffusearch science against independent oracles (Python's own evaluation of the programs, a perfect-knowledge
scorer, hand-computed PUCT), and the smoke pipeline's decoder table. The platform contract (imports, params, smoke
run, claims file) is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch

from paperdag.common.masked_diffusion import MASK_ID, MaskedDiffusionLM, mask_tokens
from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.tokenizer import decode
from paperdag.common.transformer import GPT, GPTConfig
from paperdag.common.verdicts import resolve
from paperdag.io import read_table
from paperdag.papers.diffusearch.analysis import STUDY_ORDERS, StudySummary, Summary
from paperdag.papers.diffusearch.claims import claims
from paperdag.papers.diffusearch.decoding import (
    ALPHABET,
    ALPHABET_INDEX,
    drive,
    mdm_confidence,
    plan_infill,
)
from paperdag.papers.diffusearch.experiment import (
    random_sequential_expectation,
    sequential_fraction,
)
from paperdag.papers.diffusearch.mcts import Conventions, Node, diffusearch
from paperdag.common.plans import SamplePlan
from paperdag.papers.diffusearch.params import ClaimParams, Plans
from paperdag.papers.diffusearch.reference import (
    count_table_hits,
    dependency_order,
    fit_count_table,
    ordered_infill,
    slot_keys,
    statements,
)
from paperdag.papers.diffusearch.study import (
    all_orders,
    draw_study_programs,
    forward_hits,
    mechanism_gain,
    operand_slots,
    order_tree,
)
from paperdag.papers.diffusearch.task import (
    Program,
    encode_task,
    execute,
    is_sequential,
    sample_program,
    slot_positions,
)

K = 4
CONV = Conventions(tie_break="prior", q_init="parent", reward_norm="minmax")  # the default profile's


def _programs(n: int, shuffle_prob: float, seed: int = 0) -> list[Program]:
    rng = np.random.default_rng(seed)
    return [sample_program(rng, K, 0.7, shuffle_prob) for _ in range(n)]


def _perfect_scorer(answer_start: int, premature: str):
    """A model with perfect knowledge of the programs: a masked value slot whose operands are filled gets their
    (possibly wrong) computed digit with p = 0.9; one whose operands are not all filled gets, by ``premature``:
    "lucky" the true digit with p = 0.2, "honest" a wrong digit with p = 0.15 (confidence tracks correctness),
    "overconfident" a wrong digit with p = 0.95 (a biased prior)."""
    def predict(rows: np.ndarray) -> np.ndarray:
        out = np.full((len(rows), rows.shape[1] - answer_start, len(ALPHABET)), np.log(1e-4))
        for r, row in enumerate(rows):
            prompt, ans = decode(row[:answer_start]), row[answer_start:]
            stm = [(s[0], s[2], s[3], s[4]) for s in prompt.split(";")[:K]]
            truth = execute(Program(tuple(stm), prompt[-2]))
            known = {v: int(chr(ans[2 * i + 1])) for i, (v, *_) in enumerate(stm) if chr(ans[2 * i + 1]).isdigit()}
            for i, (v, x, op, y) in enumerate(stm):
                out[r, 2 * i, ALPHABET_INDEX[ord(v)]] = np.log(0.99)
                if all(t.isdigit() or t in known for t in (x, y)):
                    a, b = (int(t) if t.isdigit() else known[t] for t in (x, y))
                    tok, p = str({"+": a + b, "-": a - b, "*": a * b}[op] % 10), 0.9
                else:
                    tok, p = {"lucky": (str(truth[v]), 0.2), "honest": (str((truth[v] + 1) % 10), 0.15),
                              "overconfident": (str((truth[v] + 1) % 10), 0.95)}[premature]
                out[r, 2 * i + 1, ALPHABET_INDEX[ord(tok)]] = np.log(p)
            q = prompt[-2]
            out[r, 2 * K, ALPHABET_INDEX[ord("=")]] = np.log(0.99)
            tok, p = (str(known[q]), 0.9) if q in known else (str(truth[q]), 0.2)
            out[r, 2 * K + 1, ALPHABET_INDEX[ord(tok)]] = np.log(p)
        return out
    return predict


def _tasks(programs: list[Program]) -> tuple[np.ndarray, int]:
    encoded = [encode_task(p) for p in programs]
    return np.stack([e[0] for e in encoded]).astype(np.int64), encoded[0][1]


def test_execution_matches_python_and_ignores_listing_order():
    for p in _programs(30, 0.0):
        env: dict[str, int] = {}
        for v, x, op, y in p.statements:  # dependency order: Python evaluates it directly
            env[v] = eval(f"({x}){op}({y})", {}, dict(env)) % 10
        assert execute(p) == env and is_sequential(p)
        shuffled = Program(tuple(reversed(p.statements)), p.query)
        assert execute(shuffled) == env


def test_mcts_with_perfect_knowledge_recovers_a_dependency_order():
    """Shuffled programs, perfect prior: every committed slot's operands were already filled, and all are solved."""
    programs = _programs(6, 1.0, seed=1)
    x, start = _tasks(programs)
    slots = slot_positions(K)
    outs = drive([diffusearch(row, start, slots, 1.0, 8, CONV) for row in x], _perfect_scorer(start, "honest"), 64)
    for p, row, out in zip(programs, x, outs, strict=True):
        assert np.array_equal(out.tokens, row)
        filled: set[str] = set()
        for a in out.order:
            if a < K:
                v, l, _, r = p.statements[a]
                assert {t for t in (l, r) if t.isalpha()} <= filled
                filled.add(v)


def test_search_overcomes_an_overconfident_prior():
    """With a prior that is confidently wrong before a slot's operands are known, confidence ordering fails on
    shuffled programs while look-ahead search with a large exploration constant recovers many of them."""
    x, start = _tasks(_programs(12, 1.0, seed=2))
    slots = slot_positions(K)
    predict = _perfect_scorer(start, "overconfident")
    rng = np.random.default_rng(0)
    conf = drive([plan_infill(r, start, slots, "confidence", rng) for r in x], predict, 64)
    search = drive([diffusearch(r, start, slots, 4.0, 16, CONV) for r in x], predict, 64)
    solved = [sum(np.array_equal(o.tokens, r) for o, r in zip(outs, x, strict=True)) for outs in (conf, search)]
    assert solved[1] >= solved[0] + 3


def test_decoders_agree_on_a_trivially_ordered_task():
    x, start = _tasks(_programs(5, 0.0, seed=3))
    slots = slot_positions(K)
    rng = np.random.default_rng(0)
    predict = _perfect_scorer(start, "lucky")
    decoders = [mdm_confidence(r, start) for r in x]
    decoders += [plan_infill(r, start, slots, p, rng) for p in ("l2r", "confidence", "random") for r in x]
    decoders += [diffusearch(r, start, slots, 1.0, 4, CONV) for r in x]
    for i, out in enumerate(drive(decoders, predict, 64)):
        assert np.array_equal(out.tokens, x[i % len(x)])
    assert [o.forwards for o in drive([plan_infill(r, start, slots, "l2r", rng) for r in x], predict, 8)] == [5] * 5


def test_puct_scores_by_hand():
    """Q + c P sqrt(N) / (1 + n) under each Q convention, computed by hand."""
    node = Node(prior=np.array([0.5, 0.3, 0.2, 0.0]), tokens=np.zeros(4, dtype=np.int64))
    node.visits[:] = [3, 1, 0, 0]
    node.value_sum[:] = [1.5, 0.9, 0.0, 0.0]
    c, n = 2.0, 4
    u = np.array([c * 0.5 * np.sqrt(n) / 4, c * 0.3 * np.sqrt(n) / 2, c * 0.2 * np.sqrt(n), -np.inf])
    raw = Conventions("index", "zero", "none")
    np.testing.assert_allclose(node.puct(c, raw, (0.4, 0.9)), np.array([0.5, 0.9, 0.0, 0.0]) + u)
    parent = (1.5 + 0.9) / 4  # first-play urgency: the node's mean value
    np.testing.assert_allclose(node.puct(c, Conventions("index", "parent", "none"), (0.4, 0.9)),
                               np.array([0.5, 0.9, parent, parent]) + u)
    minmax = (np.array([0.5, 0.9, parent, parent]) - 0.4) / 0.5
    np.testing.assert_allclose(node.puct(c, CONV, (0.4, 0.9)), minmax + u)
    np.testing.assert_allclose(node.puct(c, CONV, (0.6, 0.6)), np.array([0.5, 0.9, parent, parent]) + u)


def test_tie_break_at_a_fresh_node():
    """At N = 0 every PUCT score is Q: "index" takes the leftmost legal slot, "prior" the most confident one."""
    node = Node(prior=np.array([0.0, 0.2, 0.7, 0.1]), tokens=np.zeros(4, dtype=np.int64))
    assert node.select(1.0, Conventions("index", "zero", "none"), (0.0, 0.0)) == 1
    assert node.select(1.0, Conventions("prior", "zero", "none"), (0.0, 0.0)) == 2
    node.visits[:] = [0, 1, 0, 0]  # one visit: Q = 0 for unvisited edges exploits the visited one, parent mean not
    node.value_sum[:] = [0, 0.6, 0, 0]
    assert node.select(0.1, Conventions("prior", "zero", "none"), (0.6, 0.6)) == 1
    assert node.select(0.1, Conventions("prior", "parent", "none"), (0.6, 0.6)) == 2


def test_sequential_share_excludes_the_forced_commit_and_matches_random_enumeration():
    """Free commits only; the uniformly random order's expectation (H_S - 1) / (S - 1) equals the mean over all
    S! orders, enumerated."""
    assert sequential_fraction([0, 2, 1, 3]) == pytest.approx(2 / 3) and sequential_fraction([0, 1, 2]) == 1.0
    assert sequential_fraction([2, 1, 0]) == 0.0
    for s in (2, 3, 5):
        enumerated = np.mean([sequential_fraction(list(p)) for p in itertools.permutations(range(s))])
        assert random_sequential_expectation(s) == pytest.approx(enumerated)


def test_mdm_is_bidirectional_and_masks_only_maskable_tokens():
    torch.manual_seed(0)
    cfg = GPTConfig(context=12, n_layer=1, n_head=2, d_model=16)
    x = torch.randint(0, 256, (1, 12))
    y = x.clone()
    y[0, -1] = (y[0, -1] + 1) % 256
    mdm, ar = MaskedDiffusionLM(cfg), GPT(cfg)
    assert not torch.allclose(mdm(x)[0, 0], mdm(y)[0, 0])  # the first position sees the last one
    assert torch.allclose(ar(x)[0, 0], ar(y)[0, 0])
    maskable = torch.zeros(64, 12, dtype=torch.bool)
    maskable[:, 8:] = True
    xt, masked, _ = mask_tokens(torch.randint(0, 256, (64, 12)), maskable, torch.Generator().manual_seed(0), 1e-3)
    assert (masked <= maskable).all() and masked.any(dim=1).all() and ((xt == MASK_ID) == masked).all()


def _summary(mcts: float, fixed: float, ar: float, seq: float = 0.4) -> Summary:
    """A Summary whose per-seed accuracies are the given values +- 0.01 over three seeds (MCTS at every grid point,
    every fixed order at ``fixed``), each decoder's seeds jittered differently so that paired differences have a
    spread (a zero-width interval decides nothing); every other quantity is derived from them."""
    jitter = iter(np.random.default_rng(0).uniform(-0.004, 0.004, (20, 3)))

    def seeds(m: float) -> np.ndarray:
        return np.array([m - 0.01, m, m + 0.01]) + next(jitter)
    per_seed = {"ar": seeds(ar), **{f"pi_{o}": seeds(fixed) for o in ("l2r", "confidence", "random")},
                **{f"mcts_c{c:g}_n{n}": seeds(mcts) for c in (1, 4) for n in (4, 8)}}
    iv = {d: mean_ci(v) for d, v in per_seed.items()}
    gain = paired_diff_ci(per_seed["mcts_c1_n8"], per_seed["pi_l2r"])
    zero = mean_ci([-0.01, 0.0, 0.01])
    return Summary(accuracy={d: iv[d] for d in ("ar", "pi_l2r", "pi_confidence", "pi_random", "mcts_c1_n8")},
                   grid={d: iv[d] for d in per_seed if d.startswith("mcts_")}, per_seed=per_seed,
                   best_fixed="pi_l2r", gain_vs_best_fixed=gain, gain_vs_confidence=gain, gain_vs_l2r=gain,
                   gain_vs_ar=paired_diff_ci(per_seed["mcts_c1_n8"], per_seed["ar"]), effect_c=zero, effect_sims=zero,
                   c_over_sims=zero, sequential_share=mean_ci([seq - 0.01, seq, seq + 0.01]),
                   random_sequential_share=mean_ci([0.44, 0.46, 0.47]), deviated_share=0.6, deviated_mcts=iv["pi_l2r"],
                   deviated_l2r=iv["mcts_c1_n8"], deviated_gain=gain,
                   cost={"pi_l2r": 5.0, "mcts_c1_n8": 4.0}, trace_exact={}, strata={})


def _study(dependency: float, best: float = 0.6, gain: float = 0.4, forward_gap: float = 0.2,
           gaps: list[float] | None = None) -> StudySummary:
    """An order study over three seeds: the dependency order at ``dependency``, the best fixed order at ``best``
    (left-to-right 0.05 below it), per-seed intervals over 2,000 programs of the forward one-hop's gap over the count
    table (``gaps`` per seed, else ``forward_gap`` for all) and of the filled-minus-masked gain."""
    jitter = iter(np.random.default_rng(1).uniform(-0.004, 0.004, (20, 3)))

    def seeds(m: float) -> np.ndarray:
        return np.array([m - 0.01, m, m + 0.01]) + next(jitter)

    def over_programs(m: float) -> object:
        return mean_ci(np.random.default_rng(int(1000 * m) % 97).normal(m, 0.3, 2000), unit="program")
    acc = {o: seeds(v) for o, v in zip(STUDY_ORDERS, (dependency, best, max(dependency, best) + 0.1, best - 0.05,
                                                       best - 0.05, 0.3), strict=True)}
    gaps = gaps or [forward_gap] * 3
    return StudySummary(seeds=[0, 1, 2], acc={"all": acc, "in_order": acc, "out_of_order": acc},
                        best_order=[(1, 0, 2, 3, 4)] * 3, forward=[over_programs(0.5 + g) for g in gaps],
                        forward_vs_count=[over_programs(g) for g in gaps], ar_value=[over_programs(0.8)] * 3,
                        ar_vs_count=[over_programs(0.3)] * 3, gain=[over_programs(gain)] * 3,
                        gain_right=[over_programs(gain)] * 3, gain_in_order=[over_programs(gain)] * 3,
                        count_value=0.5, count_answer=0.3, majority_value=0.25, majority_answer=0.2, programs=2000,
                        out_of_order=525)


SANITY = {"mdm": {"slot_accuracy": [0.79, 0.8, 0.81], "majority_baseline": 0.25},
          "ar": {"slot_accuracy": [0.89, 0.9, 0.91], "majority_baseline": 0.25}}
PARAMS = ClaimParams(headroom=0.1, mechanism_gain=0.2, par_tol=0.02, mostly=0.5)


def _plan(unit: str, n: int) -> SamplePlan:
    return SamplePlan(unit=unit, n=n, basis="budget", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                      spending="none", why="the test's budget")


PLANS = Plans(seeds=_plan("seed", 3), programs=_plan("program", 2000), out_of_order=_plan("program", 525))
BASE = {"count_slot_accuracy": 0.5, "count_answer_accuracy": 0.3, "majority_answer_accuracy": 0.2,
        "dependency_ordered_share": 0.7, "slots": 5}


def _claims(s: Summary, st: StudySummary) -> dict:
    return {c.id: c for c in resolve(claims(s, st, SANITY, BASE, PARAMS, PLANS))}


def test_claims_fail_when_search_does_not_help():
    """Competent models, a mechanism and headroom (dependency order 0.8 vs best fixed 0.6): search below the fixed
    orders fails every finding."""
    verdicts = {k: c.verdict for k, c in _claims(_summary(0.5, 0.6, 0.7), _study(0.8)).items()}
    assert {c for k, c in verdicts.items() if k.endswith(("count_table", "count_answer", "headroom",
                                                          "operands"))} == {"holds"}
    assert verdicts["mcts_beats_plan_infill"] == "fails" and verdicts["mcts_at_least_on_par_with_ar"] == "fails"
    assert verdicts["mcts_beats_best_fixed_order"] == "fails"
    assert verdicts["orders_mostly_sequential"] == "fails" and verdicts["deviations_beat_left_to_right"] == "fails"
    assert verdicts["exploration_beats_simulations"] == "inconclusive"  # zero effects: no sign
    assert verdicts["search_costs_forward_passes"] == "fails"


def test_search_findings_are_inconclusive_without_order_headroom():
    """The same search gain, with a dependency order no better than the best fixed order: the order findings are
    inconclusive (naming the headroom), while MCTS vs AR, which needs no order headroom, is still judged."""
    assert _claims(_summary(0.7, 0.6, 0.7), _study(0.8))["mcts_beats_plan_infill"].verdict == "holds"
    flat = _claims(_summary(0.7, 0.6, 0.7), _study(0.6))
    assert flat["order_headroom"].verdict == "fails"
    for cid in ("mcts_beats_plan_infill", "mcts_beats_best_fixed_order", "exploration_beats_simulations",
                "deviations_beat_left_to_right"):
        assert flat[cid].verdict == "inconclusive" and "order_headroom" in flat[cid].reason
    assert flat["mcts_at_least_on_par_with_ar"].verdict == "holds"


def test_a_model_that_ignores_infilled_values_gates_every_order_finding():
    """Filled-minus-masked gain 0.05 on out-of-order programs (below 0.2): the mechanism precondition fails and every
    order finding is inconclusive naming it, even with headroom and a search gain."""
    out = _claims(_summary(0.7, 0.6, 0.7), _study(0.8, gain=0.05))
    assert out["mdm_reads_infilled_operands"].verdict == "fails" and out["order_headroom"].verdict == "holds"
    for cid in ("mcts_beats_plan_infill", "mcts_beats_best_fixed_order", "exploration_beats_simulations",
                "deviations_beat_left_to_right"):
        assert out[cid].verdict == "inconclusive" and "mdm_reads_infilled_operands" in out[cid].reason
    assert out["mdm_reads_infilled_operands"].unit == "program" and out["mdm_reads_infilled_operands"].n == 2000


def test_forward_competence_needs_every_seed():
    """Two seeds well above the count table and one below it: the mean would pass, the precondition fails."""
    out = _claims(_summary(0.7, 0.6, 0.7), _study(0.8, gaps=[0.3, 0.3, -0.05]))
    hop = out["mdm_forward_one_hop_beats_count_table"]
    assert hop.verdict == "fails" and "seed 2" in hop.reason
    assert hop.ladder.strongest.point() == 0.5 and hop.ladder.rungs[1].point() == 0.25
    assert out["mcts_beats_plan_infill"].verdict == "inconclusive"


def test_the_random_order_is_reported_not_required():
    """A random fixed order below the count table's answer accuracy no longer gates the plan-and-infill claim; a
    left-to-right order below it does."""
    s = _summary(0.7, 0.6, 0.7)
    s.per_seed["pi_random"] = np.array([0.1, 0.12, 0.14])
    out = _claims(s, _study(0.8))
    assert out["fixed_orders_beat_count_answer"].verdict == "holds"
    assert out["mcts_beats_plan_infill"].verdict == "holds"
    s.per_seed["pi_l2r"] = np.array([0.1, 0.12, 0.14])
    out = _claims(s, _study(0.8))
    assert out["fixed_orders_beat_count_answer"].verdict == "fails"
    assert out["mcts_beats_plan_infill"].verdict == "inconclusive"


def test_preconditions_are_judged_against_the_strongest_rung_of_their_ladder():
    """Order headroom is judged against the best fixed order (the search ladder's strongest rung), not left-to-right:
    a dependency order 0.15 above left-to-right but only 0.05 above the best fixed order has no headroom; every
    competence precondition records its ladder, strongest rung first, with the next rung beside it."""
    out = _claims(_summary(0.7, 0.6, 0.7), _study(0.65, best=0.6))
    head = out["order_headroom"]
    assert head.verdict == "fails" and head.against.startswith("the best fixed slot order")
    assert [r.name for r in head.ladder.rungs][0] == head.against and len(head.ladder.rungs) == 2
    assert out["mcts_beats_plan_infill"].verdict == "inconclusive"
    answer = out["mcts_beats_count_answer"]
    assert [r.point() for r in answer.ladder.rungs] == [0.3, 0.2] and answer.unit == "seed" and answer.n == 3
    assert answer.plan is PLANS.seeds


def test_minmax_scores_unvisited_moves_zero_on_the_scaled_range():
    """MuZero's rule: with q_init zero under minmax only visited Q is normalised and an unvisited move scores 0 on
    the scaled range. Node(prior=[0.5, 0.5]), visits [1, 0], value_sum [0.6, 0], bounds (0.6, 0.7), c = 1:
    Q = [(0.6 - 0.6) / 0.1, 0] = [0, 0], U = [0.5 * 1 / 2, 0.5 * 1 / 1]: scores [0.25, 0.5], slot 1 (a raw 0 scaled
    to -0.6 / 0.1 would give [0.25, -5.5], slot 0)."""
    node = Node(prior=np.array([0.5, 0.5]), tokens=np.zeros(2, dtype=np.int64))
    node.visits[:] = [1, 0]
    node.value_sum[:] = [0.6, 0]
    zero = Conventions("prior", "zero", "minmax")
    np.testing.assert_allclose(node.puct(1.0, zero, (0.6, 0.7)), [0.25, 0.5])
    assert node.select(1.0, zero, (0.6, 0.7)) == 1
    parent = Conventions("prior", "parent", "minmax")  # the parent mean 0.6, normalised like a visited Q: 0
    np.testing.assert_allclose(node.puct(1.0, parent, (0.6, 0.7)), [0.25, 0.5])


def test_order_tree_matches_infilling_in_each_order():
    """The prefix tree's final row for every one of the S! orders is what plan-and-infill in that fixed order
    decodes (reference.ordered_infill, run once per order), and its confidence order is plan_infill's."""
    programs = _programs(6, 1.0, seed=4)
    x, start = _tasks(programs)
    slots = slot_positions(K)
    predict = _perfect_scorer(start, "honest")
    trees = drive([order_tree(r, start, slots) for r in x], predict, 64)
    orders = all_orders(K + 1)
    assert len(orders) == 120 and orders[0] == (0, 1, 2, 3, 4)
    for row, (final, conf) in zip(x, trees, strict=True):
        each = drive([ordered_infill(row, start, slots, o) for o in orders], predict, 64)
        assert all(np.array_equal(f, e.tokens) for f, e in zip(final, each, strict=True))
        assert list(conf) == drive([plan_infill(row, start, slots, "confidence", np.random.default_rng(0))],
                                   predict, 64)[0].order
    solved = np.array([[np.array_equal(f, r) for f in final] for r, (final, _) in zip(x, trees, strict=True)])
    deps = [all_orders(K + 1).index(tuple(dependency_order(list(p.statements)))) for p in programs]
    assert solved[np.arange(len(x)), deps].all()  # a perfect one-hop model solves every program in dependency order


def test_forward_one_hop_and_mechanism_gain_against_a_perfect_scorer():
    """A model that computes a slot exactly when its operands are filled: forward one-hop is 1 on every program. The
    filled-minus-masked gain is 1 on every slot with variable operands when a premature guess is wrong ("honest"),
    and 0 when the masked guess is the truth anyway ("lucky"): the gain measures reading the infilled values."""
    programs = _programs(8, 1.0, seed=5)
    x, start = _tasks(programs)
    slots = slot_positions(K)
    assert forward_hits(_perfect_scorer(start, "honest"), x, start, slots, 16).all()
    ops = operand_slots(x, start, K)
    for p, per in zip(programs, ops, strict=True):
        names = [v for v, *_ in p.statements]
        assert per == [[names.index(t) for t in (a, b) if t.isalpha()] for _, a, _, b in p.statements]
    gain, right = mechanism_gain(_perfect_scorer(start, "honest"), x, start, slots, 16)
    eligible = np.array([any(per) for per in ops])
    assert np.all(gain[eligible] == 1.0) and np.isnan(gain[~eligible]).all()
    has_right = np.array([any(d and max(d) > j for j, d in enumerate(per)) for per in ops])
    assert np.all(right[has_right] == 1.0) and np.isnan(right[~has_right]).all() and has_right.any()
    lucky, _ = mechanism_gain(_perfect_scorer(start, "lucky"), x, start, slots, 16)
    assert np.all(lucky[eligible] == 0.0)


def test_study_programs_are_fresh_and_distinct():
    """The order study's programs avoid every excluded (training) prompt and repeat none; the in-order flags are the
    generator's."""
    rng = np.random.default_rng(7)
    train = {encode_task(p)[0].tobytes()[:encode_task(p)[1]].decode() for p in _programs(300, 0.3, seed=7)}
    x, values, flags, start = draw_study_programs(rng, K, 0.7, 0.3, 200, train)
    prompts = [decode(r[:start]) for r in x]
    assert len(set(prompts)) == 200 and not set(prompts) & train
    assert all(decode(r[start:]).endswith(f"={v}") for r, v in zip(x, values, strict=True))
    assert 0 < flags.mean() < 1


def test_count_table_reads_statement_text_only():
    """Digit-only statements are predicted exactly; a variable operand is blanked in the key, and the answer slot
    takes the query statement's key."""
    prompts = ["a=2+3;b=a*0;?b|", "a=1+3;b=a*0;?b|", "a=4*5;b=a+1;?b|"]
    answers = ["a5b0=0", "a4b0=0", "a0b1=1"]
    assert slot_keys(prompts[0], 2) == ["2+3", "var*0", "var*0"]
    table, default = fit_count_table(prompts, answers, 2)
    assert table["var*0"] == 0 and table["2+3"] == 5 and default == 0
    hits = count_table_hits(table, default, ["a=2+3;b=a+7;?b|"], ["a5b2=2"], 2)
    assert hits.tolist() == [[True, False, False]]  # "var+7" was never seen: the majority digit 0


def test_oracle_order_is_topological_and_solves_what_left_to_right_cannot():
    """With a prior that is confidently wrong before a slot's operands are filled, left-to-right infilling fails
    on shuffled programs while the dependency order (every operand filled first) solves every one; on a program
    listed in dependency order the two orders coincide."""
    programs = _programs(12, 1.0, seed=2)
    x, start = _tasks(programs)
    slots = slot_positions(K)
    orders = [dependency_order(statements(decode(row[:start]), K)) for row in x]
    for p, order in zip(programs, orders, strict=True):
        assert sorted(order) == list(range(K + 1)) and order[-1] == K
        done: set[str] = set()
        for a in order[:-1]:
            v, left, _, right = p.statements[a]
            assert {t for t in (left, right) if t.isalpha()} <= done
            done.add(v)
    predict = _perfect_scorer(start, "overconfident")
    oracle = drive([ordered_infill(r, start, slots, o) for r, o in zip(x, orders, strict=True)], predict, 64)
    l2r = drive([plan_infill(r, start, slots, "l2r", np.random.default_rng(0)) for r in x], predict, 64)
    solved = [sum(np.array_equal(o.tokens, r) for o, r in zip(outs, x, strict=True)) for outs in (oracle, l2r)]
    assert solved[0] == len(x) > solved[1]
    listed = _programs(5, 0.0, seed=3)
    assert all(dependency_order(list(p.statements)) == list(range(K + 1)) for p in listed)


@pytest.mark.slow
def test_smoke_pipeline_decodes_every_task_with_every_decoder(smoke_runs):
    runs = smoke_runs("diffusearch")
    t = read_table(runs["decode"] / "results.parquet").to_pydict()
    per = {}
    for d, f in zip(t["decoder"], t["forwards"], strict=True):
        per.setdefault(d, []).append(f)
    assert {"ar", "mdm_confidence", "pi_l2r", "pi_confidence", "pi_random"} <= set(per)
    assert len({len(v) for v in per.values()}) == 1 and len(per) == 5 + 4
    assert set(per["pi_l2r"]) == {K + 1} and set(per["ar"]) == {2 * K + 2}
    base = json.loads((runs["baselines"] / "baselines.json").read_text())
    assert 0 <= base["count_answer_accuracy"] <= 1 and base["slots"] == K + 1
    study = read_table(runs["orders"] / "study.parquet").to_pydict()
    assert len(study["seed"]) == 2 * 30 and {len(v) for v in study["every_order"]} == {120}
    assert all(a >= d for a, d in zip(study["any_order"], study["dependency"], strict=True))
    metrics = runs.metrics()["metrics"]
    for seed in (0, 1):
        assert {f"seed{seed}.forward_one_hop", f"seed{seed}.filled_minus_masked_out_of_order",
                f"seed{seed}.study_dependency.out_of_order", f"seed{seed}.mcts_c0.5_n2.in_order"} <= set(metrics)
    kinds = {c["id"]: c["kind"] for c in runs.metrics()["claims"]}
    assert kinds["order_headroom"] == kinds["mdm_reads_infilled_operands"] == "precondition"
    assert kinds["search_costs_forward_passes"] == "check"
    assert kinds["mcts_beats_plan_infill"] == kinds["exploration_beats_simulations"] == "evidence"
    assert kinds["mcts_beats_best_fixed_order"] == "evidence"
