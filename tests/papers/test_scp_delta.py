"""scp_delta science against independent oracles: normalisation of the combined models, the enumerated certificates
against their closed forms, exposure by brute force and on a model that memorised a canary, and the smoke run
through the platform. The platform contract is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from paperdag.common.stats import Interval
from paperdag.common.verdicts import resolve
from paperdag.common.tokenizer import encode
from paperdag.common.transformer import GPT, GPTConfig
from paperdag.papers.scp_delta import certificate as cert
from paperdag.papers.scp_delta.analysis import kl_carrier_fraction, minimax_headroom
from paperdag.papers.scp_delta.claims import claims
from paperdag.papers.scp_delta.combine import cp_delta, cp_k, influential_set, normalise, scp_delta_r
from paperdag.papers.scp_delta.extraction import (code_logprobs, digit_steps, enumeration_inputs, exposure,
                                                  greedy_hit)
from paperdag.papers.scp_delta.lm import next_token_logprobs, train_lm
from paperdag.papers.scp_delta.params import ClaimParams, TrainParams
from paperdag.papers.scp_delta.records import draw_private_set
from paperdag.papers.scp_delta.summary import seed_bound_ratios

SLUG = "scp_delta"


def _toy(seed: int, shape: tuple[int, ...] = (5, 7, 12)) -> tuple[torch.Tensor, ...]:
    """log p0, log q1, log q2 on a toy vocabulary: random logits, float64."""
    g = torch.Generator().manual_seed(seed)
    return tuple(normalise(2 * torch.randn(shape, generator=g, dtype=torch.float64)) for _ in range(3))


def test_combined_distributions_sum_to_one():
    p0, q1, q2 = _toy(0)
    for logp in (cp_delta(q1, q2), cp_k(q1, q2), scp_delta_r(p0, q1, q2, 0.9)[0]):
        torch.testing.assert_close(logp.exp().sum(-1), torch.ones(5, 7, dtype=torch.float64))


def test_scp_is_cp_delta_when_every_token_is_kept_and_p0_when_none():
    p0, q1, q2 = _toy(1)
    torch.testing.assert_close(scp_delta_r(p0, q1, q2, 1.0)[0], cp_delta(q1, q2))
    logp, keep = scp_delta_r(p0, q1, q2, 1e-9)
    assert keep.sum(-1).eq(1).all()  # only the most influential token keeps its shift


def test_influential_set_is_the_smallest_carrying_the_mass():
    """Brute force over all subsets of a 6-token vocabulary: no smaller set carries keep_mass of the Jeffreys sum."""
    p0, q, _ = _toy(2, (6,))
    jeff = ((q.exp() - p0.exp()) * (q - p0)).numpy()
    keep = influential_set(p0, q, 0.8).numpy()
    assert jeff[keep].sum() >= 0.8 * jeff.sum()
    smaller = [s for k in range(keep.sum()) for s in itertools.combinations(range(6), k)]
    assert all(jeff[list(s)].sum() < 0.8 * jeff.sum() for s in smaller)


def test_enumerated_certificates_equal_the_closed_forms():
    p0, q1, q2 = _toy(3)
    cpd, cpk = cp_delta(q1, q2), cp_k(q1, q2)
    scp, keep = scp_delta_r(p0, q1, q2, 0.9)
    for j, qj in ((1, q1), (2, q2)):
        torch.testing.assert_close(cert.max_divergence(cpd, qj), cert.cp_delta_closed_form(q1, q2))
        torch.testing.assert_close(cert.max_divergence(scp, qj), cert.scp_closed_form(p0, q1, q2, keep, j))
    torch.testing.assert_close(cert.kl_divergence(cpk, q1) + cert.kl_divergence(cpk, q2), cert.cp_k_closed_form(q1, q2))
    # an independent oracle: the enumeration by a Python loop over the vocabulary, one position
    p, q = cpd[0, 0].numpy(), q1[0, 0].numpy()
    assert abs(max(p[v] - q[v] for v in range(12)) - float(cert.max_divergence(cpd, q1)[0, 0])) < 1e-12
    assert abs(sum(np.exp(p[v]) * (p[v] - q[v]) for v in range(12)) - float(cert.kl_divergence(cpd, q1)[0, 0])) < 1e-12


def test_certificate_rejects_a_model_that_is_not_protected():
    """q1 itself violates CP-Delta's bound w.r.t. q2 (it puts mass where q2 has little): the check catches it."""
    _, q1, q2 = _toy(4)
    assert (cert.max_divergence(q1, q2) > cert.cp_delta_closed_form(q1, q2) + 1e-6).any()


def test_no_combination_beats_cp_delta_max_divergence_bound():
    """The minimax argument behind the failing tightness claim: max_j Delta_max(p || q_j) >= -log Z for any p."""
    p0, q1, q2 = _toy(5)
    for logp in (cp_k(q1, q2), scp_delta_r(p0, q1, q2, 0.9)[0], p0, q1):
        worst = torch.maximum(cert.max_divergence(logp, q1), cert.max_divergence(logp, q2))
        assert (worst >= cert.cp_delta_closed_form(q1, q2) - 1e-12).all()


def test_code_logprobs_match_brute_force_and_normalise():
    g = torch.Generator().manual_seed(6)
    step = normalise(torch.randn(100, 3, 256, generator=g, dtype=torch.float64))
    digit_logp, _ = digit_steps(step)
    codes = code_logprobs(digit_logp)
    digit_ids = encode("0123456789")
    for c in (0, 7, 123, 999):
        s = f"{c:03d}"
        row = int(s[:2])
        oracle = sum(float(step[row, d, digit_ids[int(s[d])]]) for d in range(3))
        assert abs(float(codes[c]) - oracle) < 1e-12
    assert exposure(torch.zeros(1000), 5) == 0.0  # a uniform model ranks the canary last among ties


def test_exposure_is_maximal_for_a_memorised_canary():
    """A tiny GPT trained on one canary line memorises it: exposure log2 1000; the untrained one does not."""
    torch.manual_seed(0)
    text = "\nKovabi's secret code is 407.\n" * 20
    net = GPT(GPTConfig(context=32, n_layer=1, n_head=2, d_model=16))
    untrained = GPT(GPTConfig(context=32, n_layer=1, n_head=2, d_model=16))
    train_lm(net, encode(text), TrainParams(steps=60, batch_size=8, lr=0.02), seed=0)
    results = []
    for model in (net, untrained.eval()):
        step = next_token_logprobs(model, enumeration_inputs("\nKovabi's secret code is ", 3), last=3)
        digit_logp, _ = digit_steps(step)
        results.append(exposure(code_logprobs(digit_logp), 407))
    assert results[0] == pytest.approx(np.log2(1000))
    assert results[1] < np.log2(1000) - 1


def test_greedy_follows_the_codes_own_prefix():
    """argmax table (100 prefixes, 3 steps): the greedy path for "407" reads row 40; a non-digit argmax fails."""
    digits = torch.as_tensor(encode("0123456789"), dtype=torch.long)
    argmax = torch.full((100, 3), int(encode("x")[0]))
    argmax[:, 0] = digits[4]
    argmax[40, 1], argmax[40, 2] = digits[0], digits[7]
    assert greedy_hit(argmax, "407") and not greedy_hit(argmax, "408") and not greedy_hit(argmax, "417")


def test_shards_are_disjoint_except_the_duplicated_canaries():
    splits, canaries = draw_private_set(np.random.default_rng(0), 30, 3, 2, 4, 5, 20)
    shared = set(splits["1"]) & set(splits["2"])
    assert shared == {c.line for c in canaries if c.where == "both"}
    assert not set(splits["heldout"]) & (set(splits["1"]) | set(splits["2"]))
    assert sum(line == canaries[0].line for line in splits["1"]) == 4


def test_kl_carrier_fraction_of_a_one_token_shift():
    p0 = torch.full((1, 256), -np.log(256), dtype=torch.float64)
    q = normalise(p0 + torch.nn.functional.one_hot(torch.tensor([[3]]), 256).double() * 5)
    assert float(kl_carrier_fraction(q, p0, 0.9)) == 1 / 256


CLAIMS = ClaimParams(min_bound_ratio=10, leak_fraction=0.5, chance_bits=3, max_ppl_gap=0.05, max_sparse_fraction=0.1)
SPREAD = np.array([-0.01, 0.0, 0.012])  # per-seed jitter shared by the arms


def _iv(v: float) -> Interval:
    return Interval(v, v - 0.1, v + 0.1, 3)


def _inputs(good: bool, p0_nll: float = 1.0, headroom: float = 20.0):
    """Claims inputs where the preconditions hold (p0 in domain unless ``p0_nll`` says otherwise) and the evidence
    holds (``good``) or fails."""
    single = {"q_full": 9.0, "cp_delta": 1.5, "scp_delta_r": 1.4} if good else {"q_full": 2.0, "cp_delta": 9.0,
                                                                                "scp_delta_r": 9.0}
    iv = {f"exposure_{k}_single": _iv(v) for k, v in single.items()}
    iv |= {f"exposure_{k}_dup": _iv(9.0 if good else 1.0) for k in ("cp_delta", "scp_delta_r")}
    iv |= {"exposure_q1_own": _iv(9.5), "exposure_q2_own": _iv(9.5),
           "ppl_gap_scp_vs_q_full": _iv(-0.15 if good else 0.5), "ppl_diff_scp_minus_cp_delta": _iv(-1 if good else 1)}
    m = {"log2_canary_space": 10.0, "dmax_median_cp_delta": 1.0, "dmax_median_scp_delta_r": 2.0,
         "dmax_base_median_cp_delta": 2.0, "dmax_base_median_scp_delta_r": 1.0, "greedy_q_full_single": 0.0,
         "greedy_cp_delta_single": 1.0, "greedy_scp_delta_r_single": 1.0, "p_extract_cp_delta_single": 1.0,
         "p_extract_scp_delta_r_single": 1.0, "kl_carrier_fraction_median": 0.01, "scp_kept_fraction_mean": 0.05}
    nll = {q: 1.0 + SPREAD for q in ("q1", "q2", "q_full")}
    nll |= {f"bigram_{q}": 2.0 + SPREAD for q in ("q1", "q2", "q_full")}
    nll["p0"] = p0_nll + SPREAD
    ratio = (20.0 if good else 1.0) + SPREAD
    return m, iv, nll, {"dmax": ratio, "dmax_base": ratio}, np.full(3, headroom)


def _verdicts(*args) -> dict[str, str]:
    return {c.id: c.verdict for c in resolve(claims(*args, CLAIMS))}


def test_claims_hold_or_fail_with_the_numbers_where_the_regime_is_reached():
    good, bad = _verdicts(*_inputs(True)), _verdicts(*_inputs(False))
    assert all(v == "holds" for v in good.values()), good
    assert all(v == "fails" for k, v in bad.items() if k.startswith(("bound", "utility", "q_full", "dup"))), bad


def test_scp_claims_are_inconclusive_with_an_out_of_domain_base_model():
    """Issue 47's regime: p0 is worse than a bigram of the private records, so every claim that falls back to p0 is
    inconclusive, and CP-Delta, which never uses p0, is still judged."""
    v = _verdicts(*_inputs(True, p0_nll=3.0))
    assert v["base_model_in_domain"] == "fails"
    fallback = ("scp_delta_r_near_chance", "utility_close_to_q_full", "utility_better_than_cp_delta",
                "bound_tighter_with_base_model_as_safe")
    assert all(v[c] == "inconclusive" for c in fallback), v
    assert v["cp_delta_near_chance"] == v["bound_tighter_than_cp_delta"] == "holds"


def test_shard_safe_tightness_is_inconclusive_without_minimax_headroom():
    v = _verdicts(*_inputs(True, headroom=1.0))
    assert v["cp_delta_bound_headroom"] == "fails" and v["bound_tighter_than_cp_delta"] == "inconclusive"


class _Logprobs:
    """A stand-in for Models: the toy shard models and their CP-Delta, whatever the ids."""

    def __init__(self, logq1: torch.Tensor, logq2: torch.Tensor):
        self.logp = {"q1": logq1, "q2": logq2, "cp_delta": cp_delta(logq1, logq2)}

    def logprobs(self, ids: torch.Tensor, keep_mass: float) -> dict[str, torch.Tensor]:
        return self.logp


def test_cp_delta_certificate_sits_on_the_minimax_bound():
    _, q1, q2 = _toy(3)
    assert abs(minimax_headroom(_Logprobs(q1, q2), torch.zeros(5, 8, dtype=torch.long), 0.9) - 1.0) < 1e-12


def test_seed_bound_ratios_are_medians_per_seed():
    rows = [(s, "single", meth, v) for s in (0, 1) for meth, vals in (("cp_delta", (1.0, 3.0, 5.0)),
                                                                      ("scp_delta_r", (1.0, 1.0, 2.0)))
            for v in vals] + [(0, "dup", "cp_delta", 100.0)]
    cert = {k: [r[i] for r in rows] for i, k in enumerate(("seed", "kind", "method", "dmax"))}
    np.testing.assert_allclose(seed_bound_ratios(cert, "dmax"), [3.0, 3.0])


def test_smoke_run_certificates_match_closed_forms(smoke_runs):
    runs = smoke_runs(SLUG)
    assert runs.summaries["verify"]["closed_form_max_abs_err"] < 1e-9
    metrics = runs.metrics()["metrics"]
    assert metrics["exposure_q1_own"] > metrics["exposure_q1_other"]  # the shard model memorised its own canaries
    assert runs.summaries["train_p0"]["val_nll"] < runs.summaries["train_p0"]["uniform_nll"]
