"""scp_delta science against independent oracles: normalisation of the combined models, the enumerated certificates
against their closed forms and the minimax bound, the outcome distribution and exposure by brute force, the public
corpus's disjointness, the claims' verdicts, and the stored certificate re-checked (and refuted once tampered with)
through ``paperdag verify``. The platform contract is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil

import numpy as np
import pyarrow as pa
import pytest
import torch
from conftest import paperdag

from paperdag.common.baselines.ngram import KneserNey, window_nll
from paperdag.common.ngram import bigram_cross_entropies
from paperdag.common.plans import SamplePlan
from paperdag.common.stats import Interval
from paperdag.common.tokenizer import encode
from paperdag.common.transformer import GPT, GPTConfig
from paperdag.common.verdicts import resolve
from paperdag.io import load_tensors, read_table, save_tensors, write_table
from paperdag.papers.scp_delta import certificate as cert
from paperdag.papers.scp_delta.claims import claims
from paperdag.papers.scp_delta.combine import (
    cp_delta,
    cp_k,
    influential_set,
    normalise,
    scp_delta_r,
    scp_sweep,
)
from paperdag.papers.scp_delta.extraction import (
    code_logprobs,
    digit_steps,
    digit_suffixes,
    exposure,
    greedy_hit,
    outcome_logprobs,
    prefix_digits,
)
from paperdag.papers.scp_delta.lm import (
    continuation_logprobs,
    next_token_logprobs,
    train_lm,
)
from paperdag.papers.scp_delta.ladder import per_seed_rungs, shared_rungs
from paperdag.papers.scp_delta.params import ClaimParams, Plans, TrainParams
from paperdag.papers.scp_delta.records import PRIVATE_TEMPLATES, TEMPLATES, draw_private_set, draw_public_set
from paperdag.papers.scp_delta.summary import (
    prompt_certificates,
    seed_table,
    smallest_preserving,
)
from paperdag.verification import Outcome
from paperdag.verification import reverify as verify_folder

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
    rest = (logp - p0)[~keep].view(5, 7, 11)  # elsewhere p0 up to the normaliser: one log-ratio per position
    assert (rest.amax(-1) - rest.amin(-1)).max() < 1e-12
    logp, keep = scp_delta_r(p0, q1, q2, 0.0)  # the sparsity grid's first point: no token kept, p0 itself
    assert not keep.any()
    torch.testing.assert_close(logp, p0)


def test_one_sort_serves_every_keep_mass():
    """The sweep (one influential order for every mass) equals SCP-Delta_r recomputed mass by mass, and its kept sets
    grow with the mass, from none (0) to the whole support (1)."""
    p0, q1, q2 = _toy(4)
    masses = [0.0, 0.001, 0.3, 0.9, 1.0]
    sweep = scp_sweep(p0, q1, q2, masses)
    for km, (logp, keep) in zip(masses, sweep, strict=True):
        logr = torch.minimum(q1, q2) - p0
        jeff = ((p0 + logr).softmax(-1) - p0.exp()) * (normalise(p0 + logr) - p0)
        ranks = jeff.argsort(-1, descending=True).argsort(-1)  # a token's place in the order
        before = torch.stack([(jeff * (ranks < ranks[..., v:v + 1])).sum(-1) for v in range(jeff.shape[-1])], -1)
        assert torch.equal(keep, before < km * jeff.sum(-1, keepdim=True))
        torch.testing.assert_close(logp, normalise(p0 + logr * keep))
    assert all((a[1] <= b[1]).all() for a, b in itertools.pairwise(sweep))
    assert not sweep[0][1].any() and sweep[-1][1].double().mean() > 0.9


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
    prompt = torch.as_tensor(encode("\nKovabi's secret code is "), dtype=torch.long)
    for model in (net, untrained.eval()):
        digit_logp, _ = digit_steps(continuation_logprobs(model, prompt, digit_suffixes(3)))
        results.append(exposure(code_logprobs(digit_logp), 407))
    assert results[0] == pytest.approx(np.log2(1000))
    assert results[1] < np.log2(1000) - 1


def test_prompt_cached_enumeration_equals_the_full_forward_pass():
    """continuation_logprobs (the prompt run once, its keys and values shared) against the plain forward pass on
    prompt + suffix for every row, float64, two layers, four heads."""
    torch.manual_seed(1)
    net = GPT(GPTConfig(context=48, n_layer=2, n_head=4, d_model=32)).double().eval()
    prompt = torch.as_tensor(encode("\nTovaki's secret code is "), dtype=torch.long)
    suffixes = digit_suffixes(4)
    full = next_token_logprobs(net, torch.cat([prompt.expand(len(suffixes), -1), suffixes], 1), last=4)
    torch.testing.assert_close(continuation_logprobs(net, prompt, suffixes), full, rtol=0, atol=1e-12)


def test_greedy_follows_the_codes_own_prefix():
    """argmax table (100 prefixes, 3 steps): the greedy path for "407" reads row 40; a non-digit argmax fails."""
    digits = torch.as_tensor(encode("0123456789"), dtype=torch.long)
    argmax = torch.full((100, 3), int(encode("x")[0]))
    argmax[:, 0] = digits[4]
    argmax[40, 1], argmax[40, 2] = digits[0], digits[7]
    assert greedy_hit(argmax, "407") and not greedy_hit(argmax, "408") and not greedy_hit(argmax, "417")


def test_shards_are_disjoint_except_the_duplicated_canaries():
    splits, canaries, _ = draw_private_set(np.random.default_rng(0), 30, 3, 2, 4, 5, 20)
    shared = set(splits["1"]) & set(splits["2"])
    assert shared == {c.line for c in canaries if c.where == "both"}
    assert not set(splits["heldout"]) & (set(splits["1"]) | set(splits["2"]))
    assert sum(line == canaries[0].line for line in splits["1"]) == 4


def test_public_corpus_shares_no_private_name_or_code():
    """The public lines use the private templates but none of the private names (any seed) or canary codes."""
    splits, canaries, names = draw_private_set(np.random.default_rng(0), 30, 3, 2, 4, 2, 20)
    codes = frozenset(c.code for c in canaries)
    public = draw_public_set(np.random.default_rng(1), 400, 0.5, 2, frozenset(names), codes)
    assert len(public) == 400 and sum("secret code" in line for line in public) == 200
    words = {w for line in public for w in re.findall("[A-Za-z]+", line)}
    assert not words & set(names)
    assert not {line.split(" is ")[1][:2] for line in public if "secret code" in line} & codes
    private_words = {w for lines in splits.values() for line in lines for w in re.findall("[A-Za-z]+", line)}
    assert {"lives", "secret", "moved"} <= words & private_words  # the public templates are shared


def _template(line: str, templates: tuple[str, ...]) -> int | None:
    """The index of the template ``line`` was written in (fields as wildcards), None if none."""
    for i, t in enumerate(templates):
        parts = re.split(r"\{\w+\}", t)
        if re.fullmatch("(.+?)".join(map(re.escape, parts)), line, flags=re.DOTALL):
            return i
    return None


def test_heldout_records_are_written_in_templates_only_the_private_set_has():
    """Held-out lines are all in the private-only templates, which every shard uses and no public line does; the
    public templates are in the shards too, and in the second held-out split (p0's own domain)."""
    splits, canaries, names = draw_private_set(np.random.default_rng(3), 200, 3, 2, 4, 2, 50)
    public = draw_public_set(np.random.default_rng(4), 600, 0.5, 2, frozenset(names),
                             frozenset(c.code for c in canaries))
    assert all(_template(line, PRIVATE_TEMPLATES) is not None for line in splits["heldout"])
    assert all(_template(line, TEMPLATES) is not None for line in splits["heldout_known"])  # p0's own domain
    assert {_template(line, PRIVATE_TEMPLATES) for line in splits["heldout"]} == set(range(len(PRIVATE_TEMPLATES)))
    assert not any(_template(line, PRIVATE_TEMPLATES) is not None for line in public)
    for shard in ("1", "2"):
        records = [line for line in splits[shard] if "secret code" not in line]
        assert {_template(line, PRIVATE_TEMPLATES) for line in records} >= set(range(len(PRIVATE_TEMPLATES)))
        assert {_template(line, TEMPLATES) for line in records} - {None} == set(range(len(TEMPLATES)))


def _steps(seed: int, digits: int = 3, spread: float = 3.0) -> torch.Tensor:
    """Random next-token log-probabilities (10^(D-1), D, 256) that depend on a row's digit prefix only as they must:
    position t's distribution is a function of the row's first t digits (rows sharing them agree)."""
    g = torch.Generator().manual_seed(seed)
    pre = prefix_digits(digits)
    table = {}
    out = torch.empty(len(pre), digits, 256, dtype=torch.float64)
    for r in range(len(pre)):
        for t in range(digits):
            key = (t, tuple(pre[r, :t].tolist()))
            if key not in table:
                table[key] = normalise(spread * torch.randn(256, generator=g, dtype=torch.float64))
            out[r, t] = table[key]
    return out


def test_outcome_distribution_matches_brute_force_and_sums_to_one():
    """P(other) summed over every digit path by a Python loop, and sum over codes and other = 1."""
    steps = _steps(7)
    logp = outcome_logprobs(steps)
    assert len(logp) == 1001
    assert abs(float(torch.logsumexp(logp, 0))) < 1e-12
    digit, non_digit = encode("0123456789"), [v for v in range(256) if v not in set(encode("0123456789"))]
    p = steps.exp().numpy()
    other = 0.0
    for c in range(1000):
        s, row = f"{c:03d}", c // 10
        path = 1.0
        for t in range(3):
            if s[t:] == "0" * (3 - t):  # count each t-digit prefix s[:t] once: the code that continues it 0...0
                other += path * p[row, t, non_digit].sum()
            path *= p[row, t, digit[int(s[t])]]
    assert abs(float(logp[-1].exp()) - other) < 1e-12


def test_sequence_minimax_bound_binds_every_model_and_the_sequence_min_combination_attains_it():
    q1, q2, p0 = (outcome_logprobs(_steps(s)) for s in (1, 2, 3))
    bound = cert.minimax_bound(q1, q2)
    for steps in (cp_delta(_steps(1), _steps(2)), cp_k(_steps(1), _steps(2)), _steps(3)):
        logp = outcome_logprobs(steps)
        assert max(float(cert.log_ratio(logp, q).max()) for q in (q1, q2)) >= bound - 1e-12
    best = normalise(torch.minimum(q1, q2))  # the minimax model on the outcome space
    assert abs(max(float(cert.log_ratio(best, q).max()) for q in (q1, q2)) - bound) < 1e-12
    assert float(cert.log_ratio(p0, p0).max()) == 0.0


def test_log_ratio_ignores_outcomes_the_model_never_emits():
    logp = torch.tensor([0.0, -torch.inf], dtype=torch.float64)
    assert float(cert.log_ratio(logp, torch.tensor([-1.0, -torch.inf], dtype=torch.float64)).max()) == 1.0
    assert float(cert.log_ratio(torch.tensor([-0.1, -2.4]), torch.tensor([0.0, -torch.inf])).max()) == math.inf


def _cert_rows() -> dict[str, list]:
    """Two seeds, two single-shard canaries and one duplicated: known k per safe model, minimax 1."""
    rows = []
    for seed, (canary, where) in itertools.product((0, 1), (("a", "1"), ("b", "2"), ("c", "both"))):
        for method, km, k in (("cp_delta", math.nan, 3.0), ("scp_delta_r", 0.5, 5.0), ("scp_delta_r", 1.0, 3.0)):
            bump = 1.0 if canary == "b" else 0.0  # canary b: every certificate 1 nat higher
            for safe, extra in (("q1", 0.0), ("q2", -0.5), ("p0", 2.0 * (method == "cp_delta"))):
                rows.append({"seed": seed, "canary": canary, "where": where, "method": method, "keep_mass": km,
                             "safe": safe, "k": k + bump + extra, "minimax": 1.0})
    return {k: [r[k] for r in rows] for k in rows[0]}


def test_seed_table_medians_excess_and_base_ratio():
    table = seed_table(prompt_certificates(_cert_rows()), 0.5)
    np.testing.assert_allclose(table["k_cp_delta"], [3.5, 3.5])  # median over the single canaries of max(q1, q2)
    np.testing.assert_allclose(table["excess_fraction"], [(5.5 - 1) / (3.5 - 1)] * 2)
    np.testing.assert_allclose(table["base_ratio"], [5.5 / 5.5] * 2)
    np.testing.assert_allclose(table["k_scp@1"], [3.5, 3.5])


def _stream(rng: np.random.Generator, n: int) -> np.ndarray:
    """A byte stream with n-gram structure: random words from a small lexicon, space-separated."""
    words = [bytes(rng.integers(97, 103, rng.integers(2, 6))) for _ in range(12)]
    return np.frombuffer(b" ".join(words[i] for i in rng.integers(0, len(words), n)), dtype=np.uint8).astype(np.int64)


def _windows(tokens: np.ndarray, rng: np.random.Generator, b: int = 6, t: int = 9) -> np.ndarray:
    start = rng.integers(0, len(tokens) - t - 1, b)
    return np.stack([tokens[i:i + t + 1] for i in start])


def _oracle(train: np.ndarray, valid: np.ndarray, test: np.ndarray, orders: tuple[int, ...]) -> tuple[dict, int]:
    """Each order fitted on its own (no truncation), chosen on validation, scored on test; mean NLL per target."""
    score = {k: (KneserNey.fit(train, k, 256), k) for k in orders}
    val = {k: float(window_nll(m, valid[:, :-1], valid[:, 1:]).mean()) for k, (m, _) in score.items()}
    return {k: float(window_nll(m, test[:, :-1], test[:, 1:]).mean()) for k, (m, _) in score.items()}, \
        min(orders, key=val.__getitem__)


def test_count_rungs_match_separately_fitted_models_per_seed():
    """ladder.py against an oracle that fits every order on its own: one training stream per seed (the shard rungs)
    and one stream scored on every seed's windows (the public corpus' rungs, split back by seed), the order chosen
    on validation windows, the count bigram the better of its two smoothings, and the published rungs stop at the
    chosen order."""
    rng = np.random.default_rng(3)
    trains = [_stream(rng, 400) for _ in range(3)]
    valid = _windows(_stream(rng, 200), rng)
    tests = [_windows(_stream(rng, 200), rng) for _ in range(3)]
    orders = (2, 3, 4)
    per_seed = per_seed_rungs(trains, valid, tests, orders)
    shared = shared_rungs(trains[0], valid, tests, orders)
    for s in range(3):
        mine, chosen = _oracle(trains[s], valid, tests[s], orders)
        assert per_seed.chosen[s] == chosen and per_seed.chosen_nll()[s] == pytest.approx(mine[chosen], rel=1e-9)
        assert {k: per_seed.kn[k][s] for k in orders} == pytest.approx(mine, rel=1e-9)
        shared_oracle, shared_chosen = _oracle(trains[0], valid, tests[s], orders)
        assert {k: shared.kn[k][s] for k in orders} == pytest.approx(shared_oracle, rel=1e-9)
        assert shared.chosen[s] == shared_chosen
        bigram = bigram_cross_entropies(trains[s], tests[s][:, :-1], tests[s][:, 1:])
        assert per_seed.bigram[s] == pytest.approx(min(bigram.values()))
    top = int(shared.chosen.max())
    assert set(shared.rungs("c")) == {f"KN {k}-gram of c" for k in orders if k <= top} | {"count bigram of c"}


def test_smallest_preserving_keep_mass():
    """On utility alone: the sparsest grid point within the margin (nats) of the full shift's NLL; censored when the
    grid's sparsest point (0: p0) already preserves."""
    nll = {0.0: 1.5, 0.001: 1.2, 0.5: 1.0 + 0.04, 0.9: 1.0 + 0.01, 1.0: 1.0}
    kept = {0.0: 0.0, 0.001: 0.004, 0.5: 0.02, 0.9: 0.1, 1.0: 1.0}
    assert smallest_preserving(nll, kept, 0.02) == (0.9, 0.1, False)
    assert smallest_preserving(nll, kept, 0.05) == (0.5, 0.02, False)
    assert smallest_preserving(nll, kept, 0.2) == (0.001, 0.004, False)
    assert smallest_preserving(nll, kept, 0.6) == (0.0, 0.0, True)  # p0 itself preserves: censored


CLAIMS = ClaimParams(min_bound_ratio=10, leak_fraction=0.5, chance_bits=3, max_ppl_gap=0.05, min_headroom=0.05,
                     min_recovered_share=0.5, min_effect_share=0.1, max_sparse_fraction=0.1, base_ppl_factor=1.1,
                     cert_slack_nats=0.6931)
PLANS = Plans(seeds=SamplePlan(unit="seed", n=3, basis="design", effect=None, power=None, pilot_n=0, pilot_sd=None,
                                looks=1, spending="none", why="the three seeds of the test inputs"))
SPREAD = np.array([-0.01, 0.0, 0.012])  # per-seed jitter shared by the arms
KN = "KN 5-gram of the public corpus"


def _iv(v: float) -> Interval:
    return Interval(v, v - 0.1, v + 0.1, 3)


P0 = 1.3  # p0's held-out NLL (nats/byte): the fine-tuned models' 1.0 is ~35% lower in perplexity (headroom)


def _inputs(good: bool, p0_ratio: float = 1.0, excess_cp: float = 3.0, damage: float = 0.0, counted: float = 1.5,
            leaks: bool = True):
    """Claims inputs where the preconditions hold (p0 in domain unless ``p0_ratio`` says otherwise or the public
    corpus' Kneser-Ney rung, at ``counted`` nats/byte, beats p0's 1.0 on records in the public templates, minimax
    headroom unless ``excess_cp`` says otherwise, fine-tuned models at 1.0 unless ``damage`` nats/byte are added to q1
    and q2, q_full leaking unless ``leaks`` is False, utility headroom: q_full 0.3 nats below p0) and the evidence
    holds (``good``) or fails. One part of each all_of claim is left to hold (q_full undamaged, SCP-Delta_r's
    duplicated canaries leaking)."""
    single = {"q_full": 9.0, "cp_delta": 1.5, "scp_delta_r": 1.4} if good else {"q_full": 9.0, "cp_delta": 9.0,
                                                                                "scp_delta_r": 9.0}
    single["q_full"] = single["q_full"] if leaks else 2.0
    iv = {f"exposure_{k}_single": _iv(v) for k, v in single.items()} | {"exposure_p0_single": _iv(1.4)}
    iv |= {f"exposure_{k}_dup": _iv(9.0 if good or k == "scp_delta_r" else 1.0) for k in ("cp_delta", "scp_delta_r")}
    iv |= {"exposure_q1_own": _iv(9.5), "exposure_q2_own": _iv(9.5),
           "ppl_gap_scp_vs_q_full": _iv(-0.15 if good else 0.5), "ppl_diff_scp_minus_cp_delta": _iv(-1 if good else 1)}
    m = {"log2_canary_space": 10.0, "greedy_q_full_single": 0.0, "greedy_cp_delta_single": 1.0,
         "greedy_scp_delta_r_single": 1.0, "p_extract_cp_delta_single": 1.0, "p_extract_scp_delta_r_single": 1.0,
         "p0_public_nll": 1.0, "bigram_public_nll": 2.0, "excess_cp_delta": 3.0, "excess_scp_delta_r": 1.0,
         "minimax": 1.0, "cp_minimax_gap": 0.0, "min_above_minimax": 0.0, "scp_over_minimax": 2.0,
         "closed_form_err": 1e-15}
    m |= {f"k_{k}": 2.0 for k in ("q_full", "cp_delta", "cp_k", "scp_delta_r")}
    m |= {f"k_base_{k}": 2.0 for k in ("q_full", "cp_delta", "scp_delta_r")}
    nll = {q: 1.0 + damage * (q != "q_full") + SPREAD for q in ("q1", "q2", "q_full")} | {"p0": P0 + SPREAD[::-1] / 2}
    if good:  # SCP-Delta_r recovers ~93% of the gap and beats CP-Delta by 0.1 nats (> 0.1 x 0.3)
        nll["scp_delta_r"] = nll["q_full"] + 0.02
        nll["cp_delta"] = nll["scp_delta_r"] + 0.1
    else:  # SCP-Delta_r recovers ~17% and is worse than CP-Delta
        nll["scp_delta_r"] = nll["p0"] - 0.05
        nll["cp_delta"] = nll["scp_delta_r"] - 0.05
    seeds = {"excess_fraction": (0.02 if good else 0.8) + SPREAD, "excess_cp_delta": excess_cp + SPREAD,
             "minimax": 1.0 + SPREAD, "base_ratio": (20.0 if good else 1.0) + SPREAD,
             "sparse_fraction": (0.03 if good else 0.9) + SPREAD / 10, "sparse_keep_mass": np.full(3, 0.5),
             "sparse_censored": np.zeros(3, bool), "sparse_k": 3.0 + SPREAD, "sparse_k_base": 2.0 + SPREAD,
             "p0_ppl_ratio": p0_ratio + SPREAD, "p0_known_nll": 1.0 + SPREAD[::-1] / 2}
    rungs = {"fine_tuning": {q: 1.8 + SPREAD for q in ("q1", "q2", "q_full")},
             "public": {KN: counted + SPREAD, "count bigram of the public corpus": 2.0 + SPREAD[::-1]},
             "headroom": {"KN n-gram of q_full's training bytes (order chosen on validation)": 1.55 + SPREAD,
                          "KN 4-gram of q_full's training bytes": 1.6 + SPREAD,
                          "count bigram of q_full's training bytes": 2.0 + SPREAD[::-1]}}
    return m, iv, nll, seeds, rungs


def _claims(*args) -> dict[str, object]:
    return {c.id: c for c in resolve(claims(*args, CLAIMS, PLANS))}


def _verdicts(*args) -> dict[str, str]:
    return {k: c.verdict for k, c in _claims(*args).items()}


def test_claims_hold_or_fail_with_the_numbers_where_the_regime_is_reached():
    good, bad = _claims(*_inputs(True)), _claims(*_inputs(False))
    assert all(c.verdict == "holds" for c in good.values()), good
    assert all(c.verdict == "holds" for c in bad.values() if c.kind != "evidence"), bad
    assert all(c.verdict == "fails" for c in bad.values() if c.kind == "evidence"), bad


def test_utility_claims_are_inconclusive_when_q_full_is_replaced_by_p0():
    """q_full replaced by p0 (its held-out NLL is p0's on every seed): no headroom, so utility_headroom fails (the
    gap is 0 on every seed, not above log 1.05) and both utility claims, and the sparsity claim whose margin is a
    share of that gap, read inconclusive naming it, whatever their own numbers say; the rest is still judged."""
    m, iv, nll, seeds, rungs = _inputs(True)
    nll["q_full"] = nll["p0"].copy()
    out = _claims(m, iv, nll, seeds, rungs)
    assert out["utility_headroom"].verdict == "fails", out["utility_headroom"]
    for c in ("utility_close_to_q_full", "utility_better_than_cp_delta", "sparse_shift_suffices"):
        assert out[c].verdict == "inconclusive" and "utility_headroom" in out[c].reason, out[c]
    assert out["fine_tuning_keeps_utility"].holds and out["base_model_in_domain"].holds
    assert all(out[c].holds for c in ("cp_delta_near_chance", "scp_delta_r_near_chance", "bound_tighter_than_cp_delta"))


def test_headroom_below_the_declared_gap_fails_and_gates_only_utility():
    """q_full 0.03 nats below p0 (ppl -3%, inside the 5% gap) with spread: utility_headroom fails on its interval."""
    m, iv, nll, seeds, rungs = _inputs(True)
    nll["q_full"] = nll["p0"] - 0.03 + np.array([0.002, -0.001, 0.0])
    out = _claims(m, iv, nll, seeds, rungs)
    assert out["utility_headroom"].verdict == "fails" and out["utility_headroom"].rule == "superiority"
    assert out["utility_close_to_q_full"].verdict == out["utility_better_than_cp_delta"].verdict == "inconclusive"
    assert out["cp_delta_near_chance"].holds


def test_protection_is_inconclusive_where_q_full_does_not_leak():
    v = _verdicts(*_inputs(True, leaks=False))
    assert v["q_full_leaks_single_shard_canaries"] == "fails"
    assert v["cp_delta_near_chance"] == v["scp_delta_r_near_chance"] == "inconclusive"
    assert v["duplicated_canaries_leak_under_both"] == v["utility_close_to_q_full"] == "holds"


def test_scp_claims_are_inconclusive_with_an_out_of_domain_base_model():
    """p0's perplexity 3x q_full's, so every claim that falls back to p0 is inconclusive, and CP-Delta, which never
    uses p0, is still judged."""
    v = _verdicts(*_inputs(True, p0_ratio=3.0))
    assert v["base_model_in_domain"] == "fails"
    fallback = ("scp_delta_r_near_chance", "utility_close_to_q_full", "utility_better_than_cp_delta",
                "bound_tighter_with_base_model_as_safe", "bound_tighter_than_cp_delta", "sparse_shift_suffices")
    assert all(v[c] == "inconclusive" for c in fallback), v
    assert v["cp_delta_near_chance"] == v["q_full_leaks_single_shard_canaries"] == "holds"


def test_every_claim_is_inconclusive_when_fine_tuning_damaged_the_models():
    """q1 and q2 0.5 nats/byte above the fine-tuned 1.0, 0.2 above p0's 1.3 (perplexity +22% over the strongest rung,
    beyond max_ppl_gap): no evidence is judged, whatever its own numbers say."""
    out = _claims(*_inputs(True, damage=0.5))
    assert out["fine_tuning_keeps_utility"].verdict == "fails"
    assert all(c.verdict == "inconclusive" for c in out.values() if c.kind == "evidence"), out


def test_competence_is_judged_against_the_strongest_rung_of_each_ladder():
    """Fine-tuning: p0 (1.3 nats/byte) is the top rung, the Kneser-Ney n-grams of the shards (1.8) are recorded
    beside it; utility headroom: p0 on top, the chosen-order n-gram, the 4-gram and the bigram of q_full's bytes
    beside; where the 4-gram beats every other rung it becomes the rung headroom is judged against. The base model: a
    count model of its corpus that beats p0 on held-out private records fails base_model_in_domain (named as the
    rung it is judged against), and every claim that falls back to p0 is inconclusive."""
    out = _claims(*_inputs(True))
    row = out["fine_tuning_keeps_utility"].row()
    assert row["baseline"] == "p0, the base model (not fine-tuned)" == row["ladder"][0]["baseline"]
    assert len(row["ladder"]) == 4 and row["unit"] == "seed" and row["plan"]["planned_n"] == 3
    head = out["utility_headroom"].row()
    assert [r["baseline"] for r in head["ladder"]] == ["p0, the base model (not fine-tuned)",
                                                       "KN n-gram of q_full's training bytes (order chosen on "
                                                       "validation)", "KN 4-gram of q_full's training bytes",
                                                       "count bigram of q_full's training bytes"]
    m, iv, nll, seeds, rungs = _inputs(True)
    rungs["headroom"]["KN 4-gram of q_full's training bytes"] = 1.02 + SPREAD  # 2% above q_full: below the gap
    strong = _claims(m, iv, nll, seeds, rungs)["utility_headroom"]
    assert strong.against == "KN 4-gram of q_full's training bytes" and strong.verdict == "fails"
    out = _claims(*_inputs(True, counted=0.8))
    base = out["base_model_in_domain"]
    assert base.verdict == "fails" and base.against == KN and KN in base.reason
    assert [r["baseline"] for r in base.row()["ladder"]] == [KN, "count bigram of the public corpus"]
    assert out["utility_close_to_q_full"].verdict == "inconclusive" and out["cp_delta_near_chance"].holds


def test_minimax_tightness_is_inconclusive_without_headroom():
    v = _verdicts(*_inputs(True, excess_cp=0.2))
    assert v["minimax_headroom"] == "fails" and v["bound_tighter_than_cp_delta"] == "inconclusive"
    assert v["bound_tighter_with_base_model_as_safe"] == "holds"


def test_smoke_run_token_checks_and_memorisation(smoke_runs):
    runs = smoke_runs(SLUG)
    metrics = runs.metrics()["metrics"]
    assert metrics["closed_form_err"] < 1e-9 and metrics["cp_minimax_gap"] < 1e-9
    assert metrics["exposure_q1_own"] > metrics["exposure_q1_other"]  # the shard model memorised its own canaries
    assert runs.summaries["train_p0"]["val_nll"] < runs.summaries["train_p0"]["uniform_nll"]


def _refuted(folder, why: str, outcome: Outcome = Outcome.REFUTED) -> None:
    result = verify_folder(SLUG, folder)
    assert result.outcome is outcome and why in result.message, result


def test_paperdag_verify_redoes_the_certificate_and_refutes_a_tampered_one(smoke_runs, tmp_path):
    """The verify folder re-checks (exit 0); one certificate lowered below the true max-divergence (a bound that no
    longer holds), one raised (not exact), one wrong witness, a perturbed shard model and a code space beyond the
    paper's bound are each caught: REFUTED, and REFUSED for the code space; the CLI exits 1 on the tampered
    folder."""
    runs = smoke_runs(SLUG)
    result = verify_folder(SLUG, runs["verify"])
    assert result.outcome is Outcome.VERIFIED, result
    folder = tmp_path / "verify"
    shutil.copytree(runs["verify"], folder)
    table = read_table(folder / "certificates.parquet").to_pylist()
    row = next(i for i, r in enumerate(table) if r["method"] == "scp_delta_r" and r["safe"] == "q2")

    def tampered(**change) -> None:
        write_table(folder / "certificates.parquet",
                    pa.Table.from_pylist([r | change if i == row else r for i, r in enumerate(table)]))

    tampered(k=table[row]["k"] - 1e-3)
    _refuted(folder, "bound violated")
    result = paperdag("verify", SLUG, str(folder), cwd=runs.project.root)
    assert result.returncode == 1 and "REFUTED" in result.stdout, result.stdout + result.stderr
    tampered(k=table[row]["k"] + 1e-3)
    _refuted(folder, "not exact")
    tampered(witness=(table[row]["witness"] + 1) % 10)
    _refuted(folder, "does not attain k")
    tampered()
    assert verify_folder(SLUG, folder).outcome is Outcome.VERIFIED
    weights = folder / "models" / "seed0" / "q1.safetensors"
    state = load_tensors(weights)
    save_tensors(weights, {k: v + 1e-3 * (k == "head.weight") for k, v in state.items()})
    _refuted(folder, "seed 0")
    shutil.copyfile(runs["verify"] / "models" / "seed0" / "q1.safetensors", weights)
    meta = json.loads((folder / "certificate.json").read_text())
    (folder / "certificate.json").write_text(json.dumps(meta | {"code_digits": 9}))
    _refuted(folder, "code_digits: 9 outside the paper's bound", Outcome.REFUSED)


def test_verify_outcomes_of_a_foreign_folder_and_a_budget_of_one(smoke_runs, tmp_path):
    """A foreign folder (an a2rbench-like table of task certificates) is REFUSED naming the file it lacks; a budget
    of one canary prompt leaves the smoke certificate UNDECIDED naming the budget (exit 1 through the CLI)."""
    write_table(tmp_path / "certificates.parquet", {"task_id": ["t0"], "accepted": [True]})
    foreign = verify_folder(SLUG, tmp_path)
    assert foreign.outcome is Outcome.REFUSED and foreign.message.startswith("certificate.json"), foreign
    runs = smoke_runs(SLUG)
    result = paperdag("verify", SLUG, str(runs["verify"]), "--budget", "1", cwd=runs.project.root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith("UNDECIDED --budget 1 spent: 1 of ") and "canary prompts" in result.stdout, \
        result.stdout
