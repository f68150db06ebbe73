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
from paperdag.papers.diffusearch.analysis import Summary
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
                   cost={"pi_l2r": 5.0, "mcts_c1_n8": 4.0}, trace_exact={})


SANITY = {"mdm": {"slot_accuracy": [0.79, 0.8, 0.81], "majority_baseline": 0.25},
          "ar": {"slot_accuracy": [0.89, 0.9, 0.91], "majority_baseline": 0.25}}
PARAMS = ClaimParams(headroom=0.1, par_tol=0.02, mostly=0.5)
PLANS = Plans(seeds=SamplePlan(unit="seed", n=3, basis="budget", effect=None, power=None, pilot_n=0, pilot_sd=None,
                               looks=1, spending="none", why="three trained pairs in the test's budget"))


def _base(oracle: float) -> dict:
    return {"count_slot_accuracy": 0.5, "count_answer_accuracy": 0.3, "majority_answer_accuracy": 0.2,
            "dependency_ordered_share": 0.7,
            "oracle_accuracy": [oracle - 0.013, oracle + 0.002, oracle + 0.011], "slots": 5}


def test_claims_fail_when_search_does_not_help():
    """Competent models and headroom (oracle 0.8 vs l2r 0.6): search below the fixed orders fails every finding."""
    verdicts = {c.id: c.verdict for c in resolve(claims(_summary(0.5, 0.6, 0.7), SANITY, _base(0.8), PARAMS, PLANS))}
    assert {v for k, v in verdicts.items() if k.endswith(("count_table", "count_answer", "headroom"))} == {"holds"}
    assert verdicts["mcts_beats_plan_infill"] == "fails" and verdicts["mcts_at_least_on_par_with_ar"] == "fails"
    assert verdicts["mcts_beats_best_fixed_order"] == "fails"
    assert verdicts["orders_mostly_sequential"] == "fails" and verdicts["deviations_beat_left_to_right"] == "fails"
    assert verdicts["exploration_beats_simulations"] == "inconclusive"  # zero effects: no sign
    assert verdicts["search_costs_forward_passes"] == "fails"


def test_search_findings_are_inconclusive_without_order_headroom():
    """The same search gain, with an oracle order no better than left-to-right: the order findings are inconclusive
    (naming the headroom), while MCTS vs AR, which needs no order headroom, is still judged."""
    good = claims(_summary(0.7, 0.6, 0.7), SANITY, _base(0.8), PARAMS, PLANS)
    flat = {c.id: c for c in resolve(claims(_summary(0.7, 0.6, 0.7), SANITY, _base(0.6), PARAMS, PLANS))}
    assert {c.id: c.verdict for c in resolve(good)}["mcts_beats_plan_infill"] == "holds"
    assert flat["order_headroom"].verdict == "fails"
    for cid in ("mcts_beats_plan_infill", "mcts_beats_best_fixed_order", "exploration_beats_simulations",
                "deviations_beat_left_to_right"):
        assert flat[cid].verdict == "inconclusive" and "order_headroom" in flat[cid].reason
    assert flat["mcts_at_least_on_par_with_ar"].verdict == "holds"


def test_decoders_below_the_count_table_make_the_comparison_inconclusive():
    """A random fixed order that does not beat the count table's answer accuracy gates the plan-and-infill claim."""
    s = _summary(0.7, 0.6, 0.7)
    s.per_seed["pi_random"] = np.array([0.1, 0.12, 0.14])
    verdicts = {c.id: c.verdict for c in resolve(claims(s, SANITY, _base(0.8), PARAMS, PLANS))}
    assert verdicts["fixed_orders_beat_count_answer"] == "fails"
    assert verdicts["mcts_beats_plan_infill"] == "inconclusive" and verdicts["orders_mostly_sequential"] == "fails"


def test_preconditions_are_judged_against_the_strongest_rung_of_their_ladder():
    """Order headroom is judged against the best fixed order (the search ladder's strongest rung), not left-to-right:
    an oracle 0.2 above left-to-right but only 0.05 above the confidence order has no headroom; every competence
    precondition records its ladder, strongest rung first, with the next rung beside it."""
    s = _summary(0.7, 0.6, 0.7)
    s.per_seed["pi_confidence"] = np.array([0.74, 0.75, 0.76])
    s.accuracy["pi_confidence"] = mean_ci(s.per_seed["pi_confidence"], unit="seed")
    out = {c.id: c for c in resolve(claims(s, SANITY, _base(0.8), PARAMS, PLANS))}
    head = out["order_headroom"]
    assert head.verdict == "fails" and head.against == "plan-and-infill in a fixed confidence order"
    assert [r.name for r in head.ladder.rungs][0] == head.against and len(head.ladder.rungs) == 3
    assert out["mcts_beats_plan_infill"].verdict == "inconclusive"
    hop = out["mdm_one_hop_beats_count_table"]
    assert hop.ladder.strongest.point() == 0.5 and hop.ladder.rungs[1].point() == 0.25 and hop.verdict == "holds"
    answer = out["mcts_beats_count_answer"]
    assert [r.point() for r in answer.ladder.rungs] == [0.3, 0.2] and answer.unit == "seed" and answer.n == 3
    assert answer.plan is PLANS.seeds


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
    assert len(base["oracle_accuracy"]) == 2 and 0 <= base["count_answer_accuracy"] <= 1 and base["slots"] == K + 1
    kinds = {c["id"]: c["kind"] for c in runs.metrics()["claims"]}
    assert kinds["order_headroom"] == "precondition" and kinds["search_costs_forward_passes"] == "check"
    assert kinds["mcts_beats_plan_infill"] == kinds["exploration_beats_simulations"] == "evidence"
    assert kinds["mcts_beats_best_fixed_order"] == "evidence"
