"""scp_delta science against independent oracles: normalisation of the combined models, the enumerated certificates
against their closed forms, exposure by brute force and on a model that memorised a canary, and the smoke run
through the platform. The platform contract is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from paperdag.common.stats import Interval
from paperdag.common.tokenizer import encode
from paperdag.common.transformer import GPT, GPTConfig
from paperdag.papers.scp_delta import certificate as cert
from paperdag.papers.scp_delta.analysis import kl_carrier_fraction
from paperdag.papers.scp_delta.claims import claims
from paperdag.papers.scp_delta.combine import cp_delta, cp_k, influential_set, normalise, scp_delta_r
from paperdag.papers.scp_delta.extraction import (code_logprobs, digit_steps, enumeration_inputs, exposure,
                                                  greedy_hit)
from paperdag.papers.scp_delta.lm import next_token_logprobs, train_lm
from paperdag.papers.scp_delta.params import ClaimParams, TrainParams
from paperdag.papers.scp_delta.records import draw_private_set

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


def test_claims_fail_on_bad_numbers():
    iv = {k: Interval(v, v, v) for k, v in {
        "exposure_q_full_single": 2.0, "exposure_cp_delta_single": 9.0, "exposure_scp_delta_r_single": 9.0,
        "exposure_cp_delta_dup": 1.0, "exposure_scp_delta_r_dup": 1.0, "ppl_gap_scp_vs_q_full": 0.5,
        "ppl_diff_scp_minus_cp_delta": 1.0, "exposure_q1_own": 1.0, "exposure_q2_own": 1.0}.items()}
    m = {"log2_canary_space": 10.0, "bound_ratio_cp_over_scp": 0.5, "dmax_median_cp_delta": 1.0,
         "dmax_median_scp_delta_r": 2.0, "base_bound_ratio_cp_over_scp": 2.0, "dmax_base_median_cp_delta": 2.0,
         "dmax_base_median_scp_delta_r": 1.0, "greedy_q_full_single": 0.0, "greedy_cp_delta_single": 1.0,
         "greedy_scp_delta_r_single": 1.0, "p_extract_cp_delta_single": 1.0, "p_extract_scp_delta_r_single": 1.0,
         "kl_carrier_fraction_median": 0.5, "scp_kept_fraction_mean": 0.5, "p0_nll_heldout": 6.0,
         "ppl_q_full": 10.0, "ppl_p0": 5.0}
    p = ClaimParams(min_bound_ratio=10, leak_fraction=0.5, chance_bits=3, max_ppl_gap=0.05, max_sparse_fraction=0.1)
    assert not any(c.holds for c in claims(m, iv, p))


def test_smoke_run_certificates_match_closed_forms(smoke_runs):
    runs = smoke_runs(SLUG)
    assert runs.summaries["verify"]["closed_form_max_abs_err"] < 1e-9
    metrics = runs.metrics()["metrics"]
    assert metrics["exposure_q1_own"] > metrics["exposure_q1_other"]  # the shard model memorised its own canaries
    assert runs.summaries["train_p0"]["val_nll"] < runs.summaries["train_p0"]["uniform_nll"]
