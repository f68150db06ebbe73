"""diffusearch science against independent oracles (Python's own evaluation of the programs, a perfect-knowledge
scorer, hand-computed PUCT), and the smoke pipeline's decoder table. The platform contract (imports, params, smoke
run, claims file) is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from paperdag.common.masked_diffusion import MASK_ID, MaskedDiffusionLM, mask_tokens
from paperdag.common.stats import Interval
from paperdag.common.tokenizer import decode
from paperdag.common.transformer import GPT, GPTConfig
from paperdag.io import read_table
from paperdag.papers.diffusearch.analysis import Summary
from paperdag.papers.diffusearch.claims import claims
from paperdag.papers.diffusearch.decoding import ALPHABET, ALPHABET_INDEX, drive, mdm_confidence, plan_infill
from paperdag.papers.diffusearch.experiment import sequential_fraction
from paperdag.papers.diffusearch.mcts import Node, diffusearch
from paperdag.papers.diffusearch.params import ClaimParams
from paperdag.papers.diffusearch.task import (Program, encode_task, execute, is_sequential, sample_program,
                                              slot_positions)

K = 4


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
    outs = drive([diffusearch(row, start, slots, 1.0, 8) for row in x], _perfect_scorer(start, "honest"), 64)
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
    search = drive([diffusearch(r, start, slots, 4.0, 16) for r in x], predict, 64)
    solved = [sum(np.array_equal(o.tokens, r) for o, r in zip(outs, x, strict=True)) for outs in (conf, search)]
    assert solved[1] >= solved[0] + 3


def test_decoders_agree_on_a_trivially_ordered_task():
    x, start = _tasks(_programs(5, 0.0, seed=3))
    slots = slot_positions(K)
    rng = np.random.default_rng(0)
    predict = _perfect_scorer(start, "lucky")
    decoders = [mdm_confidence(r, start) for r in x]
    decoders += [plan_infill(r, start, slots, p, rng) for p in ("l2r", "confidence", "random") for r in x]
    decoders += [diffusearch(r, start, slots, 1.0, 4) for r in x]
    for i, out in enumerate(drive(decoders, predict, 64)):
        assert np.array_equal(out.tokens, x[i % len(x)])
    assert [o.forwards for o in drive([plan_infill(r, start, slots, "l2r", rng) for r in x], predict, 8)] == [5] * 5


def test_puct_scores_by_hand():
    node = Node(prior=np.array([0.5, 0.3, 0.2, 0.0]), tokens=np.zeros(4, dtype=np.int64))
    node.visits[:] = [3, 1, 0, 0]
    node.value_sum[:] = [1.5, 0.9, 0.0, 0.0]
    c, n = 2.0, 4
    expected = [1.5 / 3 + c * 0.5 * np.sqrt(n) / 4, 0.9 + c * 0.3 * np.sqrt(n) / 2, c * 0.2 * np.sqrt(n), -np.inf]
    np.testing.assert_allclose(node.puct(c), expected)
    assert sequential_fraction([0, 2, 1, 3]) == 0.75 and sequential_fraction([0, 1, 2]) == 1.0


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
    xt, masked, t = mask_tokens(torch.randint(0, 256, (64, 12)), maskable, torch.Generator().manual_seed(0), 1e-3)
    assert (masked <= maskable).all() and masked.any(dim=1).all() and ((xt == MASK_ID) == masked).all()


def _summary(mcts: float, fixed: float, ar: float) -> Summary:
    iv = lambda m: Interval(m, m - 0.01, m + 0.01)  # noqa: E731
    acc = {"ar": iv(ar), "pi_l2r": iv(fixed), "mcts_c1_n8": iv(mcts)}
    return Summary(accuracy=acc, grid={}, gain_vs_plan_infill=iv(mcts - fixed), gain_vs_best_fixed=iv(mcts - fixed),
                   gain_vs_ar=iv(mcts - ar), effect_c=iv(0.01), effect_sims=iv(0.02), sequential_share=0.4,
                   deviated_share=0.6, deviated_mcts=iv(0.5), deviated_l2r=iv(0.6),
                   deviated_gain=iv(-0.1),
                   cost={"pi_l2r": 5.0, "mcts_c1_n8": 4.0}, trace_exact={})


def test_claims_fail_when_search_does_not_help():
    sanity = {"mdm": {"slot_accuracy": [0.3], "majority_baseline": 0.25},
              "ar": {"slot_accuracy": [0.9], "majority_baseline": 0.25}}
    verdicts = {c.id: c.holds for c in claims(_summary(0.5, 0.6, 0.7), sanity,
                                              ClaimParams(min_margin=0.2, par_tol=0.02, mostly=0.5, confidence=0.95))}
    assert not any(verdicts.values()), verdicts


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
    assert {c["id"] for c in runs.metrics()["claims"]} >= {"mcts_beats_plan_infill", "exploration_beats_simulations"}
