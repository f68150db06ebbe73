"""bayesncl science against independent oracles: the straight-through gate, the Bernoulli KL (torch.distributions),
NT-Xent (a per-row loop), the interpretability metrics on hand-made activations, the claims' verdicts, and the
smoke pipeline through the platform. The platform contract is checked by tests/test_paper_contract.py."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats
from torch.distributions import Bernoulli, kl_divergence

from paperdag.common.verdicts import resolve
from paperdag.errors import ParamsError
from paperdag.io import read_json, read_table
from paperdag.papers.bayesncl.augment import hue_rotate, resized_crop_flip
from paperdag.papers.bayesncl.claims import PIXEL_RUNG, UNTRAINED_RUNG, claims, plans_check
from paperdag.papers.bayesncl.data import (
    composite,
    counterfactuals,
    digit_masks,
    digit_side,
    textures,
)
from paperdag.papers.bayesncl.interpret import (
    activated_consistency,
    background_share,
    dimension_report,
    kappa,
    top_samples,
)
from paperdag.papers.bayesncl.objectives import (
    bernoulli_kl,
    features,
    gated,
    nt_xent,
    threshold_mask,
)
from paperdag.papers.bayesncl.params import ClaimParams, Params
from paperdag.papers.bayesncl.pilot import effects, part_names, seed_plan, spreads
from paperdag.papers.bayesncl.pretrain import (
    Recipe,
    _views,
    batches,
    pretrain,
    pretrain_seeds,
    supervise,
    supervise_seeds,
)
from paperdag.papers.bayesncl.train import run_seed
from paperdag.params import PROFILES_KEY, load_params, read_params_file

SLUG = "bayesncl"


def test_threshold_mask_is_the_posterior_mode_forward_and_identity_backward() -> None:
    """Forward values are 1[pi > 1/2]; d sum(w * m) / d pi = w exactly (the straight-through estimator)."""
    pi = torch.tensor([[0.1, 0.5, 0.51, 0.9]] * 3, requires_grad=True)
    m = threshold_mask(pi)
    assert torch.equal(m.detach(), torch.tensor([[0.0, 0.0, 1.0, 1.0]] * 3))
    w = torch.randn(pi.shape)
    (w * m).sum().backward()
    assert torch.equal(pi.grad, w)


def test_gate_gradient_reaches_the_gate_through_the_gated_features() -> None:
    """The NT-Xent of gated features has a non-zero gradient with respect to the keep-probabilities."""
    z = torch.randn(8, 5)
    pi = torch.full((8, 5), 0.7, requires_grad=True)
    f = features("bayesncl", z, pi)
    nt_xent(f[:4], f[4:], 0.2).backward()
    assert pi.grad.abs().sum() > 0 and (f >= 0).all()


def test_bernoulli_kl_matches_the_closed_form() -> None:
    pi = torch.linspace(0.01, 0.99, 50, dtype=torch.float64)
    for p0 in (0.05, 0.3, 0.9):
        oracle = kl_divergence(Bernoulli(probs=pi), Bernoulli(probs=torch.full_like(pi, p0)))
        assert torch.allclose(bernoulli_kl(pi, p0), oracle, atol=1e-12)
        assert abs(bernoulli_kl(torch.tensor(p0, dtype=torch.float64), p0).item()) < 1e-15


def test_nt_xent_matches_a_per_row_loop() -> None:
    torch.manual_seed(0)
    a, b = (torch.nn.functional.normalize(torch.randn(6, 4), dim=1) for _ in range(2))
    u, t, losses = torch.cat([a, b]), 0.3, []
    for i in range(12):
        pos = (i + 6) % 12
        others = [math.exp(float(u[i] @ u[k]) / t) for k in range(12) if k != i]
        losses.append(-math.log(math.exp(float(u[i] @ u[pos]) / t) / sum(others)))
    assert abs(nt_xent(a, b, t).item() - np.mean(losses)) < 1e-5


def test_hue_rotation_keeps_grey_and_cycles_the_channels() -> None:
    x = torch.rand(3, 3, 4, 4) * 0.5 + 0.25
    grey = torch.full((1, 3, 2, 2), 0.4)
    torch.testing.assert_close(hue_rotate(x, torch.zeros(3)), x)
    torch.testing.assert_close(hue_rotate(grey, torch.tensor([1.0])), grey)
    # a third of a turn about (1, 1, 1) maps R -> G -> B -> R
    torch.testing.assert_close(hue_rotate(x, torch.full((3,), 2 * math.pi / 3)), x[:, [2, 0, 1]], atol=1e-5, rtol=0)


def test_gated_features_are_unit_and_zero_where_masked() -> None:
    f = gated(torch.tensor([[1.0, -2.0, 3.0, 4.0]]), torch.tensor([[1.0, 1.0, 0.0, 1.0]]))
    assert torch.allclose(f, torch.tensor([[0.2425356, 0.0, 0.0, 0.9701425]]), atol=1e-6)


def test_dimension_report_on_a_hand_made_activation_matrix() -> None:
    """8 samples, classes 0,0,0,0,1,1,1,1, backgrounds 0,1,0,1,0,1,0,1; m = 4.
    d0 fires on samples 0-3 (class 0, mixed background): consistency 1, a class dimension;
    d1 fires on the odd samples (classes 0,0,1,1, all background 1): consistency 0.5, a background dimension;
    d2 fires on 2 samples only: inactive, left out."""
    label, background = np.repeat([0, 1], 4), np.tile([0, 1], 4)
    acts = np.zeros((8, 3))
    acts[:4, 0] = [4, 3, 2, 1]
    acts[1::2, 1] = 1.0
    acts[:2, 2] = 1.0
    report = dimension_report(acts, label, background, 4, 0.0, 1e-5)
    # all activated samples: d0 1.0, d1 0.5, d2 (samples 0, 1: class 0) 1.0
    # entries activated (non-zero, row-normalised): per row 2, 3, 1, 2, 0, 1, 0, 1 of 3: 10 of 24
    assert report == {"consistency": 2.5 / 3, "activated_dims": 3.0, "activated_entries": 10 / 24,
                      "class_prior": 0.5, "consistency_top_m": 0.75, "background_top_m_share": 0.5,
                      "active_dims": 2.0}
    assert top_samples(acts, 4)[0].tolist() == [0, 1, 2, 3]
    assert np.allclose(kappa(top_samples(acts[:, :2], 4), label), [1.0, 0.0])


def test_activated_consistency_counts_every_activated_sample_the_papers_way() -> None:
    """The released metric by hand (labels 0 x5, 1 x3, 2 x2: priors 0.5, 0.3, 0.2): a dense dimension (every sample
    activated, of either sign) scores the largest class prior 0.5; a dimension firing on classes 2, 2, 1, 0 scores
    2/4; an all-zero dimension is dropped; a dimension whose only activation is below eps after row normalisation
    has no activated sample and is left out of the mean."""
    rng = np.random.default_rng(0)
    label = np.array([0] * 5 + [1] * 3 + [2] * 2)
    acts = np.zeros((10, 4))
    acts[:, 0] = rng.uniform(0.5, 1.0, 10) * np.where(np.arange(10) % 2, 1, -1)  # dense and signed, like SimCLR's
    acts[[8, 9, 5, 0], 1] = 1.0
    acts[6, 3] = 1e-9  # d2 stays all zero
    np.testing.assert_allclose(activated_consistency(acts, label, 1e-5), [0.5, 0.5])
    acts[[0, 5], 1], acts[7, 1] = 0.0, 1.0  # now classes 2, 2, 1: 2/3
    np.testing.assert_allclose(activated_consistency(acts, label, 1e-5), [0.5, 2 / 3])
    dense = np.abs(rng.normal(size=(10, 3))) + 0.1
    np.testing.assert_allclose(activated_consistency(dense, label, 1e-5), [0.5, 0.5, 0.5])


def _runs(sc: dict[str, float], bg: dict[str, float], acc: dict[str, float], sup: float = 0.8,
          kept: float = 0.6) -> dict:
    """Three seeds per (method, metric) scattering by +-0.002 around the given values (0.1 where none is given), NCL in
    the opposite order, SimCLR and the untrained encoder off by 0.0003 on one seed (so every paired difference has an
    interval); the supervised upper bound's probe accuracy ``sup``; BayesNCL's kept share ``kept`` (1 elsewhere);
    class prior 0.14 and SimCLR's activated entries 1 (dense), the others 0.3."""
    jitter = np.array([-0.002, 0.0, 0.002])
    apart = {"simclr": np.array([0.0, 3e-4, 0.0]), "untrained": np.array([3e-4, 0.0, 0.0])}
    runs = {("shapes", m, key): table.get(m, 0.1) + jitter[::-1 if m == "ncl" else 1] + apart.get(m, 0.0)
            for m in ("untrained", "simclr", "ncl", "bayesncl")
            for key, table in (("consistency", sc), ("consistency_top_m", sc), ("background_share", bg),
                               ("probe_acc", acc), ("kept", {"bayesncl": kept}))}
    for m in ("untrained", "simclr", "ncl", "bayesncl"):
        runs["shapes", m, "class_prior"] = np.full(3, 0.14)
        runs["shapes", m, "activated_entries"] = np.full(3, 1.0 if m in ("simclr", "untrained") else 0.3)
        if m != "bayesncl":
            runs["shapes", m, "kept"] = np.ones(3)
    return runs | {("shapes", "supervised", "probe_acc"): sup + jitter}


P = ClaimParams(probe_tol_pp=2.0, learn_margin_pp=15.0, supervised_fraction=0.5, gate_kept_max=0.95,
                background_untrained_max=0.8)
METHODS = ["simclr", "ncl", "bayesncl"]
EVIDENCE = ("consistency_order_shapes", "background_share_lowest_shapes", "probe_parity_shapes")
PLANS = load_params(read_params_file(Path(__file__).parents[2] / "params.yaml"), SLUG, Params, "default",
                    Path("params.yaml")).plans


def _verdicts(runs: dict, pixels: float = 0.2) -> dict[str, str]:
    return {c.id: c.verdict for c in resolve(claims(runs, {"shapes": pixels}, METHODS, ["shapes"], "untrained",
                                                    "supervised", P, PLANS))}


def test_competence_is_judged_against_the_higher_trivial_rung() -> None:
    """The untrained encoder (0.3) is the bar while the raw-pixel probe is lower (0.2): an encoder 0.2 above it
    learned; with the raw-pixel probe at 0.5 the pixel probe is the bar and the same encoder (0.1 above it, below the
    15-point margin) did not. The ladder records both rungs, strongest first."""
    runs = _runs({"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.7}, {"bayesncl": 0.1},
                 {"untrained": 0.3, "simclr": 0.5, "ncl": 0.6, "bayesncl": 0.6})
    low = {c.id: c for c in claims(runs, {"shapes": 0.2}, METHODS, ["shapes"], "untrained", "supervised", P, PLANS)}
    high = {c.id: c for c in claims(runs, {"shapes": 0.5}, METHODS, ["shapes"], "untrained", "supervised", P, PLANS)}
    assert low["simclr_learned_shapes"].verdict == "holds" and low["simclr_learned_shapes"].against == UNTRAINED_RUNG
    assert high["simclr_learned_shapes"].verdict == "fails" and high["simclr_learned_shapes"].against == PIXEL_RUNG
    assert [r["baseline"] for r in high["simclr_learned_shapes"].row()["ladder"]] == [PIXEL_RUNG, UNTRAINED_RUNG]
    assert high["ncl_learned_shapes"].verdict == "fails"  # 0.1 above the pixels: below the margin


def test_claims_hold_and_fail_by_their_intervals() -> None:
    good = _runs({"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.7}, {"simclr": 0.3, "ncl": 0.3, "bayesncl": 0.1},
                 {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": 0.59})
    assert set(_verdicts(good).values()) == {"holds"}, _verdicts(good)
    bad = _runs({"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.55}, {"simclr": 0.2, "ncl": 0.3, "bayesncl": 0.25},
                {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": 0.5})
    verdicts = _verdicts(bad)
    assert all(v == "holds" for c, v in verdicts.items() if c not in EVIDENCE), verdicts
    assert all(verdicts[c] == "fails" for c in EVIDENCE), verdicts


def test_evidence_is_inconclusive_when_an_encoder_does_not_beat_the_trivial_baselines() -> None:
    """BayesNCL within 3 points of its untrained init, every encoder below the raw-pixel probe, or every encoder
    below half the supervised probe: the encoder preconditions fail and every evidence claim is inconclusive,
    whatever its own numbers."""
    good = _runs({"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.7}, {"simclr": 0.3, "ncl": 0.3, "bayesncl": 0.1},
                 {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": 0.33})
    verdicts = _verdicts(good)
    assert verdicts["bayesncl_learned_shapes"] == "fails" and verdicts["simclr_learned_shapes"] == "holds"
    assert all(verdicts[c] == "inconclusive" for c in EVIDENCE), verdicts
    below_pixels = _verdicts(_runs({"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.7}, {"bayesncl": 0.05},
                                   {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": 0.6}), pixels=0.8)
    assert below_pixels["ncl_learned_shapes"] == "fails"
    assert below_pixels["consistency_order_shapes"] == "inconclusive"
    far_below_supervised = _verdicts(_runs({"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.7}, {"bayesncl": 0.05},
                                           {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": 0.6}, sup=1.3))
    assert {v for c, v in far_below_supervised.items() if "_learned_" in c} == {"fails"}
    assert far_below_supervised["probe_parity_shapes"] == "inconclusive"


def test_backgrounds_are_common_to_their_family_and_share_one_mean_colour() -> None:
    """Every image of a family shares one background: where the object's alpha is 0 the pixels equal the family's
    texture, identical across images; the four textures differ; each background's mean colour, per channel, is the
    same for all four within 1/255 (after the uint8 rounding)."""
    rng = np.random.default_rng(0)
    family = np.array([0, 1, 2, 3] * 5)
    tex = textures(rng, 24)
    images = composite(np.zeros((20, 24, 24)), rng.uniform(0, 1, (20, 3)), tex[family])
    for b in range(4):
        assert (images[family == b] == images[family == b][0]).all()
    assert len({images[b].tobytes() for b in range(4)}) == 4
    means = images[:4].astype(np.float64).mean((2, 3))  # (4 backgrounds, 3 channels), in 0..255
    assert np.abs(means - means[0]).max() <= 1.0, means
    assert tex.min() >= 0.0 and tex.max() <= 1.0


def test_centred_digits_have_the_declared_size() -> None:
    """A full 28x28 block becomes a centred square of side round(0.8 * 24) = 19 at offset (24 - 19) // 2 = 2: alpha 1
    inside, 0 outside; every digit the same box whatever the generator; the random variant moves them."""
    block = np.full((3, 784), 255, dtype=np.uint8)
    masks = digit_masks(np.random.default_rng(0), block, 24, "centred", 0.8)
    assert digit_side(24, 0.8) == 19
    box = np.zeros((24, 24))
    box[2:21, 2:21] = 1.0
    np.testing.assert_allclose(masks, np.broadcast_to(box, masks.shape), atol=1e-6)
    again = digit_masks(np.random.default_rng(7), block, 24, "centred", 0.8)
    np.testing.assert_array_equal(masks, again)
    moved = digit_masks(np.random.default_rng(0), np.full((20, 784), 255, dtype=np.uint8), 24, "random")
    assert len({m.tobytes() for m in moved}) > 1


def test_counterfactuals_put_each_object_over_every_background() -> None:
    """x[i, b] is object i (same mask, same colour) over background b: equal to the composite of i over b."""
    rng = np.random.default_rng(1)
    tex, alpha, colour = textures(rng, 12), rng.uniform(0, 1, (5, 12, 12)), rng.uniform(0, 1, (5, 3))
    cf = counterfactuals(alpha, colour, tex)
    for b in range(4):
        np.testing.assert_array_equal(cf[:, b], composite(alpha, colour, tex[np.full(5, b)]))


def test_background_share_is_the_variance_background_explains_over_background_and_class() -> None:
    """Brute force on an additive design A_ibd = u_b + v_{y_i} (+ pure dims): the between-background and between-class
    sums of squares by explicit loops; a background-only dimension scores 1, a class-only one 0, a constant one is
    left out."""
    rng = np.random.default_rng(2)
    label = np.array([0, 0, 1, 1, 1, 2])
    u, v = rng.normal(size=4), rng.normal(size=3)
    acts = np.zeros((6, 4, 4))
    acts[..., 0] = u[None, :] + v[label][:, None]
    acts[..., 1] = u[None, :]
    acts[..., 2] = v[label][:, None]
    acts[..., 3] = 2.0
    mu = acts[..., 0].mean()
    ss_bg = sum(6 * (acts[:, b, 0].mean() - mu) ** 2 for b in range(4))
    ss_cls = sum(4 * (label == c).sum() * (acts[label == c, :, 0].mean() - mu) ** 2 for c in range(3))
    np.testing.assert_allclose(background_share(acts, label), [ss_bg / (ss_bg + ss_cls), 1.0, 0.0], atol=1e-12)


def test_a_dense_signed_feature_matrix_scores_the_class_prior_and_decides_no_verdict() -> None:
    """SimCLR-like dense signed features: every entry activated, consistency = the largest class prior on every
    dimension; in the claims, SimCLR's consistency moves only the NCL - SimCLR check, never the evidence verdict
    (judged on BayesNCL - NCL alone)."""
    rng = np.random.default_rng(3)
    label = np.array([0] * 7 + [1] * 2 + [2])
    dense = rng.normal(size=(10, 6))
    report = dimension_report(dense, label, np.zeros(10, dtype=int), 3, 0.0, 1e-5)
    assert report["activated_entries"] == 1.0 and report["class_prior"] == 0.7
    assert abs(report["consistency"] - 0.7) < 1e-12
    verdicts = []
    for simclr in (0.14, 0.9):
        runs = _runs({"simclr": simclr, "ncl": 0.6, "bayesncl": 0.7}, {"bayesncl": 0.05},
                     {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": 0.6})
        verdicts.append(_verdicts(runs))
    assert verdicts[0]["consistency_order_shapes"] == verdicts[1]["consistency_order_shapes"] == "holds"
    assert verdicts[0]["consistency_ncl_over_simclr_shapes"] == "holds"
    assert verdicts[1]["consistency_ncl_over_simclr_shapes"] == "fails"


def test_a_gate_that_keeps_everything_leaves_consistency_and_parity_inconclusive() -> None:
    """Kept share 0.97 > 0.95: gate_acts fails and the claims it gates (consistency, parity) are inconclusive; the
    background claim does not read it. An untrained background share of 0.9 > 0.8 fails background_measurable."""
    sc, acc = {"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.7}, {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": 0.6}
    v = _verdicts(_runs(sc, {"simclr": 0.3, "ncl": 0.3, "bayesncl": 0.1}, acc, kept=0.97))
    assert v["gate_acts_shapes"] == "fails"
    assert v["consistency_order_shapes"] == v["probe_parity_shapes"] == "inconclusive"
    assert v["background_share_lowest_shapes"] == "holds"
    v = _verdicts(_runs(sc, {"untrained": 0.9, "simclr": 0.95, "ncl": 0.95, "bayesncl": 0.1}, acc))
    assert v["background_measurable_shapes"] == "fails" and v["background_share_lowest_shapes"] == "inconclusive"
    assert v["consistency_order_shapes"] == "holds"


def test_no_flip_keeps_orientation_and_the_other_draws() -> None:
    """With flip off, a left-right asymmetric image keeps its orientation under a full-area crop (every view); with
    it on, some views are mirrored."""
    x = torch.zeros(64, 1, 8, 8)
    x[..., :4] = 1.0  # bright left half
    out = resized_crop_flip(x, torch.Generator().manual_seed(0), 1.0, False)
    assert (out[..., :3].mean((1, 2, 3)) > out[..., 5:].mean((1, 2, 3))).all()
    flipped = resized_crop_flip(x, torch.Generator().manual_seed(0), 1.0, True)
    assert (flipped[..., :3].mean((1, 2, 3)) < flipped[..., 5:].mean((1, 2, 3))).any()


def test_smoke_pipeline_measures_every_method_and_seed(smoke_runs) -> None:
    runs = smoke_runs(SLUG)
    rows = read_table(runs["evaluate"] / "results.parquet").to_pylist()
    assert {(r["dataset"], r["method"], r["seed"]) for r in rows} == {
        (d, m, s) for d in ("shapes", "digits")
        for m in ("untrained", "simclr", "ncl", "bayesncl", "gate0", "gate1", "gate2") for s in (0, 1)}
    metrics = read_json(runs["evaluate"] / "metrics.json")["metrics"]
    assert all(0.0 <= metrics[f"{d}_supervised_probe_acc"] <= 1.0 for d in ("shapes", "digits"))
    assert all(0.0 <= r["consistency"] <= 1.0 and 0.0 <= r["probe_acc"] <= 1.0 for r in rows)
    assert all(r["kept"] == 1.0 for r in rows if r["method"] in ("untrained", "simclr", "ncl"))
    assert all(0.0 <= r["background_share"] <= 1.0 for r in rows)
    labels = read_table(runs["prepare"] / "data.parquet").select(["dataset", "label"]).to_pylist()
    assert {r["label"] for r in labels if r["dataset"] == "digits"} == set(range(10))


def test_probe_parity_is_two_sided_equivalence_with_its_power_argument() -> None:
    """BayesNCL 10 points above both baselines is no parity (the interval lies outside +-2 points), 1 point below is;
    the claim reports the seeds a half-width below the margin needs (t_{n-1} s / sqrt(n) < margin)."""
    def parity(acc: float):
        runs = _runs({"simclr": 0.5, "ncl": 0.6, "bayesncl": 0.7}, {"bayesncl": 0.1},
                     {"untrained": 0.3, "simclr": 0.6, "ncl": 0.6, "bayesncl": acc})
        return next(c for c in resolve(claims(runs, {"shapes": 0.2}, METHODS, ["shapes"], "untrained", "supervised", P,
                                              PLANS)) if c.id == "probe_parity_shapes")

    assert parity(0.70).verdict == "fails" and parity(0.59).verdict == "holds"
    close = parity(0.59).measured
    diff = close["bayesncl - ncl"]  # per-seed differences -0.014, -0.01, -0.006: s = 0.004, n = 3
    s = (diff["ci"][1] - diff["ci"][0]) / 2 * np.sqrt(3) / stats.t.ppf(0.975, 2)
    n = close["seeds_for_halfwidth_below_margin (bayesncl - ncl)"]
    assert stats.t.ppf(0.975, n - 1) * s / np.sqrt(n) < 0.02 <= stats.t.ppf(0.975, n - 2) * s / np.sqrt(n - 1)


PARAMS_FILE = Path(__file__).parents[2] / "params.yaml"
DATASETS = ["shapes", "digits"]


def _profile(profile: str, data: dict | None = None) -> Params:
    return load_params(data or read_params_file(PARAMS_FILE), SLUG, Params, profile, PARAMS_FILE)


def _torch_seeds(v: Params) -> set[int]:
    """The torch seeds a run of ``v`` pretrains from (every method, the supervised bound and the untrained init share
    them; the gate grid takes the first sweep.n_seeds of them)."""
    return {run_seed(v.seed, d, v.train.first_seed + s) for d in DATASETS for s in range(v.train.n_seeds)}


def test_the_pilots_seeds_are_never_judged() -> None:
    """The pilot profile trains exactly plans.pilot's seeds (indices 1000-1002 at the default's root, so the default's
    data); no other profile of params.yaml pretrains from any of their torch seeds; and the params validator refuses a
    judged range that meets the pilot's, or a pilot run on other seeds."""
    data = read_params_file(PARAMS_FILE)
    pilot = _profile("pilot", data)
    assert pilot.plans.pilot.run and pilot.seed == _profile("default", data).seed
    assert pilot.data == _profile("default", data).data and pilot.sweep.n_seeds == 0
    p = pilot.plans.pilot
    assert (pilot.train.first_seed, pilot.train.n_seeds) == (p.first_seed, p.n_seeds) and p.n_seeds >= 2
    piloted = _torch_seeds(pilot)
    assert len(piloted) == len(DATASETS) * p.n_seeds
    judged = [k for k in ["default", *data[SLUG][PROFILES_KEY]] if k != "pilot"]
    assert {"default", "smoke", "gpu"} <= set(judged)
    for profile in judged:
        v = _profile(profile, data)
        assert not v.plans.pilot.run, profile
        assert not _torch_seeds(v) & piloted, f"{profile} pretrains from a pilot seed"
    overlapping = {**data, SLUG: {**data[SLUG], "train": {**data[SLUG]["train"], "first_seed": p.first_seed - 1}}}
    with pytest.raises(ParamsError, match="a pilot seed is never judged"):
        _profile("default", overlapping)
    elsewhere = {**data, SLUG: {**data[SLUG], PROFILES_KEY: {**data[SLUG][PROFILES_KEY], "pilot": {
        "train": {"first_seed": 0}, "plans": {"pilot": {"run": True}}}}}}
    with pytest.raises(ParamsError, match="the pilot run trains exactly the pilot.s seeds"):
        _profile("pilot", elsewhere)


def _pilot_runs() -> dict:
    """Three pilot seeds per (dataset, method) with chosen values of every metric a part reads."""
    rng = np.random.default_rng(5)
    runs = {}
    for d in DATASETS:
        for m in ("simclr", "ncl", "bayesncl"):
            for key in ("consistency", "background_share", "probe_acc"):
                runs[d, m, key] = rng.uniform(0.2, 0.8, 3)
            runs[d, m, "kept"] = rng.uniform(0.85, 0.99, 3) if m == "bayesncl" else np.ones(3)
    return runs


def test_the_seed_plan_is_guenthers_n_per_part_and_the_largest_binds() -> None:
    """Each part's spread is the sd (ddof 1) of the paired per-seed difference its claim takes an interval over; its
    n is the smallest n >= ((z_0.975 + z_power) s / d)^2 + z_0.975^2 / 2 (scanned, scipy's normal quantiles) at the
    part's effect (parity: the tolerance; kept: 1 - gate_kept_max; else share_effect); the plan is the largest."""
    runs = _pilot_runs()
    sd = spreads(runs, DATASETS)
    assert list(sd) == part_names(DATASETS) and len(sd) == 12
    assert math.isclose(sd["consistency_digits"], np.std(runs["digits", "bayesncl", "consistency"]
                                                         - runs["digits", "ncl", "consistency"], ddof=1))
    assert math.isclose(sd["probe_simclr_shapes"], np.std(runs["shapes", "bayesncl", "probe_acc"]
                                                          - runs["shapes", "simclr", "probe_acc"], ddof=1))
    assert math.isclose(sd["kept_shapes"], np.std(runs["shapes", "bayesncl", "kept"], ddof=1))
    eff = effects(list(sd), 0.03, P.probe_tol_pp, P.gate_kept_max)
    assert eff["probe_ncl_digits"] == 0.02 and math.isclose(eff["kept_digits"], 0.05)
    assert eff["consistency_shapes"] == eff["background_simclr_digits"] == 0.03
    plan = seed_plan(sd, eff, 0.8)
    za, zb = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    for k, s in sd.items():
        assert plan.n[k] == next(n for n in range(2, 10**6) if n >= ((za + zb) * s / eff[k]) ** 2 + za**2 / 2), k
    assert plan.planned == max(plan.n.values()) and plan.n[plan.part] == plan.planned
    assert (plan.sd, plan.effect) == (sd[plan.part], eff[plan.part])
    halved = seed_plan({k: v / 2 for k, v in sd.items()}, eff, 0.8)
    assert halved.planned < plan.planned  # a quarter of the variance asks fewer seeds


def test_the_plan_check_reads_the_declared_plan_against_the_pilots_spreads() -> None:
    """A judged run's check holds when plans.seeds records the binding part (sd, effect, power, pilot size) and fails
    when its spread is not the pilot's, or when no pilot spread is declared."""
    sd = spreads(_pilot_runs(), DATASETS)
    plan = seed_plan(sd, effects(list(sd), 0.02, P.probe_tol_pp, P.gate_kept_max), 0.8)
    base = _profile("default").plans
    pilot = base.pilot.model_copy(update={"sd": sd, "power": 0.8, "share_effect": 0.02})
    good = base.model_copy(update={"pilot": pilot, "seeds": base.seeds.model_copy(update={
        "pilot_n": pilot.n_seeds, "pilot_sd": round(plan.sd, 6), "effect": plan.effect, "power": 0.8})})
    assert plans_check(plan, good, part_names(DATASETS), False).verdict == "holds"
    off = good.model_copy(update={"seeds": good.seeds.model_copy(update={"pilot_sd": plan.sd * 1.1})})
    assert plans_check(plan, off, part_names(DATASETS), False).verdict == "fails"
    assert plans_check(None, good, part_names(DATASETS), False).verdict == "fails"
    assert plans_check(plan, good, part_names(DATASETS), True).verdict == "holds"
    flat = seed_plan(sd | {"kept_digits": 0.0}, plan.effects, 0.8)
    assert plans_check(flat, good, part_names(DATASETS), True).verdict == "fails"  # a part the pilot gave no spread


def test_the_declared_plan_is_the_committed_pilots() -> None:
    """params.yaml's pilot spreads are the committed pilot run's (metrics/profiles/pilot/bayesncl.json, 4 significant
    digits), and every profile's plans.seeds records the binding part of the plan they give."""
    v = _profile("default")
    if v.plans.pilot.sd is None:
        assert v.plans.seeds.pilot_n == 0 and v.plans.seeds.pilot_sd is None  # no pilot: no spread may be claimed
        return
    measured = read_json(PARAMS_FILE.parent / "metrics" / "profiles" / "pilot" / f"{SLUG}.json")["metrics"]
    for k, s in v.plans.pilot.sd.items():
        assert math.isclose(s, measured[f"pilot_sd_{k}"], rel_tol=1e-3), k
    for profile in ("default", "gpu"):
        w = _profile(profile)
        plan = seed_plan(w.plans.pilot.sd, effects(list(w.plans.pilot.sd), w.plans.pilot.share_effect,
                                                   w.claims.probe_tol_pp, w.claims.gate_kept_max), w.plans.pilot.power)
        assert plans_check(plan, w.plans, part_names(DATASETS), False).verdict == "holds", profile
        assert plan.planned == measured["plan_n"]


def test_the_pilot_path_trains_the_pilots_seeds_and_judges_nothing_but_the_plan(smoke_runs) -> None:
    """The pilot profile's code path at smoke size, through the platform: every row is a pilot seed, the metrics carry
    every part's spread and n, and the only claim is the plan's check. It runs in the smoke run's project (the
    session's, shared with the contract test), so the stages whose keys the overrides leave unchanged (prepare: the
    same data params) come from the store instead of running again; everything downstream of the pilot's seeds runs."""
    from paperdag.testing import run_stages

    runs = run_stages(SLUG, profile="smoke", root=smoke_runs(SLUG).project.root, train={"first_seed": 1000},
                      plans={"seeds": {"n": 2}, "pilot": {"run": True, "n_seeds": 2}}, sweep={"n_seeds": 0})
    rows = read_table(runs["evaluate"] / "results.parquet").to_pylist()
    assert {r["seed"] for r in rows} == {1000, 1001}
    out = read_json(runs["evaluate"] / "metrics.json")
    assert [c["id"] for c in out["claims"]] == ["seeds_planned_by_pilot"]
    parts = part_names(DATASETS)
    assert all(f"pilot_sd_{k}" in out["metrics"] and f"plan_n_{k}" in out["metrics"] for k in parts)
    assert out["metrics"]["plan_n"] == max(out["metrics"][f"plan_n_{k}"] for k in parts)



def _tiny_recipe(steps: int = 6) -> Recipe:
    """A recipe small enough for a test; 48 images in batches of 16 cross two epoch boundaries in 6 steps."""
    return Recipe(width=4, hidden=16, feat_dim=8, steps=steps, batch=16, lr=0.002, gate_lr=0.0005,
                  weight_decay=1e-5, temperature=0.2, p0=0.8, kl_weight=3e-5, pi_init=0.5, pi_eps=0.01,
                  min_scale=0.8, jitter=0.4, hue=0.5, p_gray=0.0, flip=False)


# Batched and one-seed runs differ by float round-off only (k seeds' convolutions run as one grouped convolution,
# reductions in another order). In float32 that round-off does not stay small: a ReLU input or an Adam gradient near 0
# flips sign (Adam's first step moves a weight by +-lr whatever the gradient's size), so two float32 trajectories part
# within a few steps (measured at _tiny_recipe, NCL: losses equal at step 1, 0.008 apart at step 6), as two runs of
# the same seed on two BLAS builds do. So the equality is tested in float64, where it is the batching alone: measured
# at _tiny_recipe over 6 steps, per-step losses within 6e-14, weights within 7e-12 (BayesNCL; 3e-15 SimCLR / NCL),
# encoder outputs within 3e-15, against ~0.1 between two seeds. BATCH_TOL is 100x the measured worst; float32 is
# held to the first step (before any update), within 1e-5 (measured: 0 to 1e-7).
BATCH_TOL = 1e-9


def _h(net: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return net.encoder(x)


def _images(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(48, 3, 12, 12, generator=gen), torch.rand(20, 3, 12, 12, generator=gen)


@pytest.mark.parametrize("method", ["simclr", "ncl", "bayesncl"])
def test_a_batched_run_of_k_seeds_equals_k_single_seed_runs(method: str, float64) -> None:
    """pretrain_seeds over seeds (a, b, c) gives each seed the network (weights; encoder outputs on held-out images)
    and the per-step loss trajectory of pretrain on that seed alone, within BATCH_TOL; the seeds' results differ by
    far more (each has its own init, batch order and views)."""
    x, held = _images(5)
    r, seeds = _tiny_recipe(), [101, 202, 303]
    single_losses: list[list[float]] = [[] for _ in seeds]
    single = [pretrain(x, method, r, seed, lambda step, st, i=i: single_losses[i].append(st["loss"]))
              for i, seed in enumerate(seeds)]
    batched_losses: list[torch.Tensor] = []
    batched = pretrain_seeds(x, method, r, seeds, lambda step, st: batched_losses.append(st["loss"]))
    assert torch.stack(batched_losses).shape == (r.steps, len(seeds))
    torch.testing.assert_close(torch.stack(batched_losses).T, torch.tensor(single_losses), atol=BATCH_TOL, rtol=0)
    for one, many in zip(single, batched):
        assert not many.training and list(one.state_dict()) == list(many.state_dict())
        for name, v in one.state_dict().items():
            torch.testing.assert_close(many.state_dict()[name], v, atol=BATCH_TOL, rtol=0)
        torch.testing.assert_close(_h(many, held), _h(one, held), atol=BATCH_TOL, rtol=0)
        assert int(many.state_dict()["encoder.net.1.num_batches_tracked"]) == r.steps
    spread = min((_h(single[i], held) - _h(single[j], held)).abs().max().item() for i in range(3) for j in range(i))
    assert spread > 1e6 * BATCH_TOL


def test_a_batched_float32_first_step_equals_the_single_seed_runs() -> None:
    """In float32 (the stages' dtype) the first step's per-seed losses, before any update, equal the one-seed runs'
    within 1e-5: same init, batch and views per seed."""
    x, _ = _images(5)
    r = _tiny_recipe(steps=1)
    single = []
    for seed in (101, 202):
        pretrain(x, "bayesncl", r, seed, lambda step, st: single.append(st["loss"]))
    batched = []
    pretrain_seeds(x, "bayesncl", r, [101, 202], lambda step, st: batched.append(st["loss"]))
    torch.testing.assert_close(batched[0], torch.tensor(single), atol=1e-5, rtol=0)
    assert abs(single[0] - single[1]) > 1e-3


def test_a_seeds_run_does_not_depend_on_which_seeds_share_its_batch(float64) -> None:
    """Seed b trained beside a, beside c, first or second, gives the network it gives alone within BATCH_TOL: it keeps
    its own generator (batch order, views) and init. Fails if the seeds shared one RNG stream or one data order."""
    x, held = _images(6)
    r = _tiny_recipe()
    ref = _h(pretrain(x, "bayesncl", r, 8), held)
    for seeds, i in (([7, 8], 1), ([8, 9], 0), ([8, 7], 0), ([9, 7, 8], 2)):
        torch.testing.assert_close(_h(pretrain_seeds(x, "bayesncl", r, seeds)[i], held), ref, atol=BATCH_TOL, rtol=0)
    # each step, seed 8 reads the batch and views it reads alone, and seed 7 other ones
    gens = [torch.Generator().manual_seed(s) for s in (7, 8)]
    its = [batches(len(x), r.batch, r.steps, g) for g in gens]
    g_alone = torch.Generator().manual_seed(8)
    it_alone = [batches(len(x), r.batch, r.steps, g_alone)]
    for _ in range(r.steps):
        views, idxs = _views(x, its, gens, 2, r)
        views_alone, idx_alone = _views(x, it_alone, [g_alone], 2, r)
        assert torch.equal(idxs[1], idx_alone[0]) and not torch.equal(idxs[0], idxs[1])
        torch.testing.assert_close(views[1], views_alone[0], atol=BATCH_TOL, rtol=0)
        assert (views[0] - views[1]).abs().max() > 1e6 * BATCH_TOL


def test_batched_supervised_seeds_equal_single_seed_runs(float64) -> None:
    """supervise_seeds over (a, b) gives each seed supervise's classifier (logits on held-out images) within
    BATCH_TOL, and the two seeds differ by far more."""
    x, held = _images(7)
    y = torch.randint(0, 4, (48,), generator=torch.Generator().manual_seed(8))
    r, seeds = _tiny_recipe(), [11, 12]
    single = [supervise(x, y, 4, r, seed) for seed in seeds]
    batched = supervise_seeds(x, y, 4, r, seeds)
    with torch.no_grad():
        for one, many in zip(single, batched):
            torch.testing.assert_close(many(held), one(held), atol=BATCH_TOL, rtol=0)
        assert (single[0](held) - single[1](held)).abs().max() > 1e6 * BATCH_TOL
