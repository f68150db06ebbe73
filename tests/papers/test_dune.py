"""dune science against independent oracles (scikit-image's SSIM/PSNR, Pillow's grayscale, brute force). The platform
contract (imports, params, smoke run, claims file) is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from paperdag.common.verdicts import resolve
from paperdag.io import load_tensors, read_table
from paperdag.papers.dune.attacks import ensemble_loss, pgd, project
from paperdag.papers.dune.baselines import (
    one_pixel_shortcut,
    ops_pixels,
    synthetic_noise,
)
from paperdag.papers.dune.budget import check
from paperdag.papers.dune.claims import claims, gap_closed
from paperdag.papers.dune.colour import apply_offsets, shrink_to_budget
from paperdag.papers.dune.defenses import DEFENSES, grayscale
from paperdag.papers.dune.draws import victim_accuracies
from paperdag.papers.dune.labels import shift_labels
from paperdag.papers.dune.network import (
    ConvNet,
    accuracy,
    train_classifier,
    train_stacked,
)
from paperdag.papers.dune.params import BudgetParams, ClaimParams, NetParams, Params
from paperdag.papers.dune.quality import psnr, ssim
from paperdag.papers.dune.trivial import (
    NEAREST_MEAN,
    ladder,
    nearest_class_mean,
    standardised_luminance,
)
from paperdag.papers.dune.victims import VictimSetup, train_victims
from paperdag.params import load_params, read_params_file

SLUG = "dune"
EPS = 8 / 255


def _images(n: int, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, 3, 14, 14, generator=torch.Generator().manual_seed(seed))


def test_label_shift_is_a_bijection_without_fixed_points():
    y = torch.arange(10)
    for s in range(1, 10):
        shifted = shift_labels(y, s, 10)
        assert sorted(shifted.tolist()) == list(range(10)) and not (shifted == y).any()
        assert torch.equal(shift_labels(shifted, 10 - s, 10), y)  # the inverse shift undoes it


def test_projection_is_the_closest_point_of_the_box():
    """Brute force: the projection is within the eps ball and [0, 1], and no random feasible point is closer."""
    x, far = _images(4), 3 * torch.randn(4, 3, 14, 14)
    proj = project(far, x, EPS)
    assert ((proj - x).abs() <= EPS + 1e-7).all() and proj.min() >= 0 and proj.max() <= 1
    for seed in range(20):
        cand = project(x + EPS * (2 * _images(4, seed + 1) - 1), x, EPS)
        assert (((cand - far) ** 2).flatten(1).sum(1) >= ((proj - far) ** 2).flatten(1).sum(1) - 1e-6).all()


def test_pgd_lowers_the_ensemble_loss_toward_shifted_labels_within_budget():
    torch.manual_seed(0)
    x, y = _images(64), torch.randint(0, 10, (64,), generator=torch.Generator().manual_seed(1))
    models = [ConvNet(3, 14, 8, 10).eval() for _ in range(2)]
    target = shift_labels(y, 1, 10)
    x_adv = pgd(models, x, target, EPS, EPS / 4, 10, minimise=True, generator=torch.Generator().manual_seed(2))
    assert ((x_adv - x).abs() <= EPS + 1e-7).all()
    rand = project(x + EPS * (2 * _images(64, 9) - 1).sign(), x, EPS)
    x_max = pgd(models, x, target, EPS, EPS / 4, 10, minimise=False, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        loss = ensemble_loss(models, x_adv, target)
        assert loss < ensemble_loss(models, x, target) - 0.01 and loss < ensemble_loss(models, rand, target) - 0.01
        assert ensemble_loss(models, x_max, target) > ensemble_loss(models, x, target)


def test_quality_measures_match_scikit_image():
    x = _images(3).double()
    x_new = (x + 0.08 * torch.randn(3, 3, 14, 14, generator=torch.Generator().manual_seed(3))).clamp(0, 1)
    for i in range(3):
        a, b = x[i].numpy(), x_new[i].numpy()
        assert abs(float(ssim(x, x_new)[i]) - structural_similarity(a, b, channel_axis=0, data_range=1.0)) < 1e-9
        assert abs(float(psnr(x, x_new)[i]) - peak_signal_noise_ratio(a, b, data_range=1.0)) < 1e-9


def test_colour_offsets_are_shrunk_into_the_quality_budget_on_every_image():
    x, c = _images(30) * 0.5, torch.tensor([0.3, -0.3, 0.2])
    shrunk = shrink_to_budget(x, c, 24.0, 0.9)
    moved = apply_offsets(x, torch.zeros(30, dtype=torch.long), shrunk[None])
    assert (psnr(x, moved) >= 24.0).all() and (ssim(x, moved) >= 0.9).all()
    assert torch.allclose(shrunk / shrunk.norm(), c / c.norm()) and shrunk.norm() < c.norm()


def test_budget_check_accepts_valid_and_rejects_oversized_perturbations():
    x = _images(10)
    ok = project(x + 0.5 * torch.randn_like(x), x, EPS)
    assert check("spatial", x, ok, None, EPS, 24.0, 0.9)["ok"] == 1.0
    bad = ok.clone()
    bad[7, 1, 3, 3] = (x[7, 1, 3, 3] + 2 * EPS).clamp(max=1.0) if x[7, 1, 3, 3] < 0.5 else x[7, 1, 3, 3] - 2 * EPS
    assert check("spatial", x, bad, None, EPS, 24.0, 0.9)["ok"] == 0.0
    two = x.clone()
    two[0, :, 0, 0], two[0, :, 5, 5] = 1 - two[0, :, 0, 0], 1 - two[0, :, 5, 5]
    assert check("ops", x, two, None, EPS, 24.0, 0.9)["ok"] == 0.0
    zero = torch.zeros(10, dtype=torch.long)
    loud = apply_offsets(x, zero, torch.tensor([[0.3, 0.3, 0.3]]))
    assert check("colour", x, loud, loud, EPS, 24.0, 0.9, torch.tensor([[0.3, 0.3, 0.3]]), zero)["ok"] == 0.0


def test_budget_check_rejects_a_colour_part_that_is_not_the_claimed_classwise_offset():
    """clip(x + c_y) with the stored c passes; per-image colours, a wrong offset table or no table do not, even
    though each of them meets the PSNR / SSIM floors."""
    x, y = 0.2 + 0.6 * _images(20), torch.arange(20) % 2
    offsets = torch.tensor([[0.02, -0.03, 0.01], [-0.02, 0.02, 0.0]])
    part = apply_offsets(x, y, offsets)
    assert check("colour", x, part, part, EPS, 24.0, 0.9, offsets, y)["ok"] == 1.0
    per_image = (x + 0.02 * torch.randn(20, 3, 1, 1, generator=torch.Generator().manual_seed(4))).clamp(0, 1)
    res = check("colour", x, per_image, per_image, EPS, 24.0, 0.9, offsets, y)
    assert res["ok"] == 0.0 and res["min_psnr"] >= 24.0 and res["max_colour_residual"] > 1e-3
    assert check("colour", x, part, part, EPS, 24.0, 0.9, offsets.flip(0), y)["ok"] == 0.0
    assert check("colour", x, part, part, EPS, 24.0, 0.9)["ok"] == 0.0
    spatial = project(part + 0.5 * torch.randn_like(x), part, EPS)
    assert check("dune", x, spatial, part, EPS, 24.0, 0.9, offsets, y)["ok"] == 1.0
    assert check("dune", x, spatial, per_image, EPS, 24.0, 0.9, offsets, y)["ok"] == 0.0


def test_ops_search_matches_brute_force_and_changes_one_pixel():
    """The OPS criterion mean / (std + 1e-3) of ||x(p) - v||_1 by explicit loops over pixels and corner colours."""
    x = torch.rand(12, 3, 4, 4, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    x[:6, :, 1, 2] = 0.97  # class 0 is nearly constant white at (1, 2): black there is its shortcut
    y = torch.tensor([0] * 6 + [1] * 6)
    pixels, colours = ops_pixels(x, y, 2)
    for k in range(2):
        best = max(((p, v) for p in range(16) for v in range(8)), key=lambda pv: _ops_score(x[y == k], *pv))
        corner = torch.tensor([(best[1] >> b) & 1 for b in range(3)], dtype=x.dtype)
        assert int(pixels[k]) == best[0] and torch.equal(colours[k], corner)
    assert int(pixels[0]) == 1 * 4 + 2 and torch.equal(colours[0], torch.zeros(3, dtype=x.dtype))
    out = one_pixel_shortcut(x, y, pixels, colours)
    assert int(((out - x).abs().amax(1) > 0).flatten(1).sum(1).max()) == 1


def _ops_score(xk: torch.Tensor, pixel: int, corner: int) -> float:
    v = np.array([(corner >> b) & 1 for b in range(3)], dtype=float)
    d = [np.abs(img.flatten(1)[:, pixel].numpy() - v).sum() for img in xk]
    return float(np.mean(d) / (np.std(d, ddof=1) + 1e-3))


def test_synthetic_noise_is_linearly_separable_and_within_budget():
    """Yu et al.'s construction: constant on p x p patches, L2 norm of the ball's corners before the L_inf clip
    (so with spread 0 it is a class-wise +-eps sign pattern), and a nearest-centroid rule separates the classes."""
    x = torch.full((200, 3, 14, 14), 0.5)
    y = torch.arange(200) % 10
    out = synthetic_noise(x, y, 10, EPS, 4, 0.3, torch.Generator().manual_seed(0))
    assert ((out - x).abs() <= EPS + 1e-7).all()
    delta = out - x
    assert torch.equal(delta[:, :, 0:4, 0:4], delta[:, :, 0:1, 0:1].expand(-1, -1, 4, 4))  # one cell, one value
    signs = synthetic_noise(x, y, 10, EPS, 4, 0.0, torch.Generator().manual_seed(0)) - x
    assert torch.allclose(signs.abs(), torch.full_like(signs, EPS), atol=1e-6)
    assert torch.equal(signs[y == 3][0], signs[y == 3][1])
    centroids = torch.stack([(out - x)[y == k].flatten(1).mean(0) for k in range(10)])
    nearest = ((out - x).flatten(1) @ centroids.T - 0.5 * (centroids**2).sum(1)).argmax(1)
    assert (nearest == y).float().mean() == 1.0


def test_grayscale_matches_pillow_luma():
    x = _images(2)
    rgb = (x[0].permute(1, 2, 0).numpy() * 255).round().astype(np.uint8)
    luma = np.asarray(Image.fromarray(rgb).convert("L"), dtype=float)
    ours = grayscale(torch.as_tensor(rgb / 255.0).permute(2, 0, 1)[None])[0] * 255
    assert np.abs(ours[0].numpy() - luma).max() <= 0.51 and torch.equal(ours[0], ours[2])


def test_stacked_training_is_separate_training_batched():
    """Oracle: S networks trained at once by vmap (seeds batched) end where S separate train_classifier runs with
    the same initial weights, inputs and shuffles end."""
    x, y = _images(3 * 48).view(3, 48, 3, 14, 14), torch.arange(48) % 3
    def fresh(seed: int) -> ConvNet:
        torch.manual_seed(seed)
        return ConvNet(3, 14, 4, 3)
    alone = [train_classifier(fresh(s), x[s], y, 3, 16, 0.01, torch.Generator().manual_seed(s)) for s in range(3)]
    together = train_stacked([fresh(s) for s in range(3)], x, y, 3, 16, 0.01,
                             [torch.Generator().manual_seed(s) for s in range(3)])
    for a, b in zip(alone, together, strict=True):
        for (name, va), vb in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
            assert torch.allclose(va, vb, atol=1e-5), name
    assert not torch.allclose(together[0].head.weight, together[1].head.weight)


def test_classifier_learns_a_separable_task():
    x = _images(120)
    y = (x[:, 0].mean((1, 2)) > x[:, 2].mean((1, 2))).long()
    torch.manual_seed(0)
    model = train_classifier(ConvNet(3, 14, 8, 2), x, y, 10, 20, 0.01, torch.Generator().manual_seed(0))
    assert accuracy(model, x, y) > 0.9


CLAIMS = ClaimParams(unlearn_frac=0.5, recover_frac=0.5, headroom_min=0.15, act_scheme="em", floor=0.1, cover_tol=0.05,
                     fit_min=0.5, hit_min=0.9)
SCHEMES = ["clean", "random", "synthetic", "ops", "em", "adv_poison", "spatial", "colour", "dune"]
JITTER = np.array([-0.01, 0.0, 0.012])  # per-seed spread shared by every arm (paired differences stay exact)


def _accuracies(level: dict[str, float], defended: dict[tuple[str, str], float] | None = None):
    """Victim accuracies per (scheme, defense): ``level[scheme]`` everywhere unless ``defended`` says otherwise, plus
    the shared per-seed ``JITTER`` and a small independent spread per arm (so paired differences have an interval)."""
    rng = np.random.default_rng(0)
    acc = {(s, d): level[s] + JITTER for s in SCHEMES for d in DEFENSES}
    acc |= {k: v + JITTER for k, v in (defended or {}).items()}
    return {k: v + rng.normal(0.0, 0.004, v.shape) for k, v in acc.items()}


DEFAULT = load_params(read_params_file(Path(__file__).parents[2] / "params.yaml"), SLUG, Params, "default",
                      Path("params.yaml"))
BUDGET = BudgetParams(eps=32 / 255, psnr_min=24.0, ssim_min=0.9)
AT_EPS = 8 / 255


def _correct(rate: float, n: int = 400) -> np.ndarray:
    """Per-test-image 0/1 outcomes with the given accuracy (the first round(rate n) right)."""
    return (np.arange(n) < round(rate * n)).astype(float)


RUNGS = {"5-NN": _correct(0.7), "logistic regression": _correct(0.6)}


def _verdicts(acc, hit_rate: float = 0.95, fit: dict | None = None, std: dict | None = None,
              surrogate: float = 0.85, rungs: dict | None = None) -> dict[str, str]:
    """Verdicts; the standard schemes' replicates ``std`` default to the grid's undefended victims."""
    budget = {s: True for s in SCHEMES[1:]}
    fit = {k: np.ones(3) for k in acc} | (fit or {})
    std = std or {s: acc[s, "none"] for s in ("clean", "em", "synthetic")}
    hits = (round(hit_rate * 2000), 2000)
    return {c.id: c.verdict for c in resolve(claims(acc, fit, std, SCHEMES, list(DEFENSES), budget,
                                                    _correct(surrogate), rungs or RUNGS, hits, BUDGET, AT_EPS,
                                                    CLAIMS, DEFAULT.plans))}


LEVEL = {"clean": 0.9, "random": 0.88, "synthetic": 0.3, "ops": 0.4, "em": 0.2, "adv_poison": 0.2,
         "spatial": 0.15, "colour": 0.35, "dune": 0.1}
EM_REMOVED = {("em", "jpeg"): 0.8, ("em", "adv_train"): 0.8}  # JPEG and AT close most of EM's gap: they can act
RECOVERED = {("spatial", "jpeg"): 0.6, ("spatial", "adv_train"): 0.7, ("colour", "grayscale"): 0.85}


def test_dune_evidence_holds_where_the_regime_is_reached():
    level = {"clean": 0.9, "random": 0.88, "synthetic": 0.3, "ops": 0.4, "em": 0.2, "adv_poison": 0.2,
             "spatial": 0.15, "colour": 0.35, "dune": 0.1}
    v = _verdicts(_accuracies(level, RECOVERED | EM_REMOVED))
    assert all(x == "holds" for x in v.values()), v


def test_a_victim_stuck_on_one_class_leaves_every_dune_claim_inconclusive():
    level = {"clean": 0.9, "random": 0.88, "synthetic": 0.3, "ops": 0.4, "em": 0.2, "adv_poison": 0.2,
             "spatial": 0.15, "colour": 0.35, "dune": 0.1}
    v = _verdicts(_accuracies(level), fit={("clean", "jpeg"): np.array([1.0, 0.11, 1.0])})
    assert v["every_victim_fits_its_data"] == "fails" and v["unlearnable"] == "inconclusive"


def test_gap_closed_matches_the_closed_form_and_a_full_recovery_is_one():
    """Oracle: R = mean(a_d - a_none) / mean(c_d - a_none) by hand; a defense that brings the victim to what it
    leaves of clean data closes the whole gap (R = 1) whatever it costs on clean data."""
    acc = {("colour", "none"): np.array([0.3, 0.35, 0.4]), ("colour", "grayscale"): np.array([0.5, 0.6, 0.55]),
           ("clean", "grayscale"): np.array([0.8, 0.85, 0.9])}
    r = gap_closed(acc, "colour", "grayscale")
    assert r.mean == pytest.approx((0.2 + 0.25 + 0.15) / (0.5 + 0.5 + 0.5))
    assert r.lo <= r.mean <= r.hi and r.method == "bootstrap" and r.n == 3
    for cost in (0.0, 0.3, 0.6):
        full = acc | {("clean", "grayscale"): 0.9 - cost + JITTER, ("colour", "grayscale"): 0.9 - cost + JITTER}
        assert gap_closed(full, "colour", "grayscale").mean == pytest.approx(1.0)


def test_a_floored_victim_recovers_nothing_whatever_the_defense_costs():
    """A victim at 0.03 with and without the defense recovers 0 (and the claim does not hold) however much the
    defense costs the clean victim; the old difference in differences credited that cost as a recovery."""
    level = {"clean": 0.9, "random": 0.88, "synthetic": 0.3, "ops": 0.4, "em": 0.2, "adv_poison": 0.2,
             "spatial": 0.15, "colour": 0.03, "dune": 0.02}
    for clean_gray in (0.9, 0.6, 0.2):
        acc = _accuracies(level, RECOVERED | EM_REMOVED | {("colour", "grayscale"): 0.03,
                                                           ("clean", "grayscale"): clean_gray})
        acc["colour", "grayscale"] = acc["colour", "none"].copy()  # floored: the same accuracy with and without
        r = gap_closed(acc, "colour", "grayscale")
        assert r.mean == 0.0 and r.lo == r.hi == 0.0
        old = np.mean((acc["colour", "grayscale"] - acc["clean", "grayscale"]) - (acc["colour", "none"] -
                                                                                   acc["clean", "none"]))
        assert old == pytest.approx(0.9 - clean_gray, abs=0.02)  # the old measure: the defense's clean cost
        assert _verdicts(acc)["colour_recovers_under_grayscale"] != "holds"


def test_defenses_that_cannot_act_leave_the_spatial_claims_inconclusive():
    """AT that closes none of EM's gap fails defenses_can_act: the spatial branch surviving AT says nothing about
    DUNE, so spatial_recovers_* and branches_cover_each_other read inconclusive (colour's grayscale claim stays)."""
    v = _verdicts(_accuracies(LEVEL, RECOVERED | {("em", "jpeg"): 0.8}))
    assert v["defenses_can_act"] == "fails"
    assert v["spatial_recovers_under_jpeg_and_at"] == v["branches_cover_each_other"] == "inconclusive"
    assert v["colour_recovers_under_grayscale"] == v["unlearnable"] == "holds"


def test_an_adversarially_trained_victim_below_the_bar_gates_the_spatial_claims():
    v = _verdicts(_accuracies(LEVEL, RECOVERED | EM_REMOVED | {("clean", "adv_train"): 0.5,
                                                               ("spatial", "adv_train"): 0.45}))
    assert v["at_victim_beats_trivial"] == "fails"
    assert v["spatial_recovers_under_jpeg_and_at"] == v["branches_cover_each_other"] == "inconclusive"


def test_cover_needs_both_branches_removed_by_their_defenses():
    """Grayscale leaves the colour branch in place (colour_recovers fails): branches_cover_each_other is
    inconclusive even though DUNE is below both branches under every defense."""
    v = _verdicts(_accuracies(LEVEL, {("spatial", "jpeg"): 0.6, ("spatial", "adv_train"): 0.7} | EM_REMOVED))
    assert v["colour_recovers_under_grayscale"] == "fails" and v["spatial_recovers_under_jpeg_and_at"] == "holds"
    assert v["branches_cover_each_other"] == "inconclusive"


def test_cover_judges_dune_against_every_branch_without_picking_one_by_its_mean():
    """branches_cover_each_other reports and judges DUNE minus each branch under each defense (six parts), so no
    branch is chosen by a point estimate; DUNE 0.15 above the better branch under grayscale fails it there."""
    acc = _accuracies(LEVEL, RECOVERED | EM_REMOVED)
    judged = {c.id: c for c in resolve(claims(acc, {k: np.ones(3) for k in acc},
                                              {s: acc[s, "none"] for s in ("clean", "em", "synthetic")}, SCHEMES,
                                              list(DEFENSES), {s: True for s in SCHEMES[1:]}, _correct(0.85), RUNGS,
                                              (1900, 2000), BUDGET, AT_EPS, CLAIMS, DEFAULT.plans))}
    cover = judged["branches_cover_each_other"]
    assert cover.verdict == "holds"
    assert {d: set(m) for d, m in cover.measured.items()} == {
        d: {"dune_minus_spatial", "dune_minus_colour"} for d in ("jpeg", "adv_train", "grayscale")}
    acc["dune", "grayscale"] = acc["spatial", "grayscale"] + 0.15 + np.array([0.003, -0.002, 0.001])
    v = _verdicts(acc)
    assert v["branches_cover_each_other"] == "fails" and v["colour_recovers_under_grayscale"] == "holds"


def test_a_rival_on_the_floor_leaves_the_ranking_inconclusive():
    """Adversarial poisoning at 0.03 under every defense (below chance): DUNE cannot be shown lower than it."""
    v = _verdicts(_accuracies(LEVEL | {"adv_poison": 0.03, "dune": 0.02}, RECOVERED | EM_REMOVED))
    assert v["rivals_off_the_floor"] != "holds" and v["lowest_average_under_defenses"] == "inconclusive"
    assert v["unlearnable"] == "holds"


def test_dune_evidence_is_inconclusive_when_standard_schemes_do_not_work():
    """The regime of issue 43: EM and synthetic noise leave the victim near clean accuracy, so no DUNE claim is
    judged, whatever DUNE's own numbers say."""
    level = {"clean": 0.86, "random": 0.86, "synthetic": 0.85, "ops": 0.7, "em": 0.75, "adv_poison": 0.5,
             "spatial": 0.1, "colour": 0.1, "dune": 0.05}
    v = _verdicts(_accuracies(level))
    assert v["standard_schemes_unlearnable"] == "fails"
    assert all(v[c] == "inconclusive" for c in ("unlearnable", "lowest_average_under_defenses",
                                                "spatial_recovers_under_jpeg_and_at",
                                                "colour_recovers_under_grayscale", "branches_cover_each_other")), v


def test_standard_precondition_reads_the_replicates_not_the_grid_draw():
    """The precondition is judged on the replicates (one noise draw per victim seed), whatever the grid's single
    EM draw gave: a weak grid draw does not fail it, a strong one does not rescue weak replicates."""
    level = {"clean": 0.9, "random": 0.88, "synthetic": 0.3, "ops": 0.4, "em": 0.2, "adv_poison": 0.2,
             "spatial": 0.15, "colour": 0.35, "dune": 0.1}
    good = {"clean": 0.9 + JITTER, "em": np.array([0.2, 0.3, 0.25]), "synthetic": 0.1 + JITTER}
    weak_grid = _accuracies(level, {("em", "none"): 0.8})
    assert _verdicts(weak_grid, std=good)["standard_schemes_unlearnable"] == "holds"
    assert _verdicts(_accuracies(level), std=good | {"em": np.array([0.8, 0.85, 0.7])})[
        "standard_schemes_unlearnable"] == "fails"


def test_replicate_victims_are_the_grid_victims_without_defense():
    """Oracle: victim_accuracies trains victim seed s on replicate s exactly as victims.train_victims trains the
    undefended victim of seed s."""
    x, y = _images(2 * 60).view(2, 60, 3, 14, 14), torch.arange(60) % 10
    x_test, y_test = _images(40, 9), torch.arange(40) % 10
    net = NetParams(width=4, epochs=2, batch=16, lr=0.01)
    setup = VictimSetup(**net.model_dump(), jpeg_quality=10, noise_std=0.05, blur_sigma=0.7, at_eps=EPS, at_steps=1,
                        at_warmup=0)
    ours = victim_accuracies([x[0], x[1]], y, x_test, y_test, [3, 4], net)
    oracle = [train_victims(x[i], y, x_test, y_test, [("none", s)], setup, 10)[0][0] for i, s in enumerate([3, 4])]
    assert ours == pytest.approx(oracle, abs=1e-9)


def test_recovery_needs_headroom_and_a_working_branch():
    level = {"clean": 0.9, "random": 0.88, "synthetic": 0.3, "ops": 0.4, "em": 0.2, "adv_poison": 0.2,
             "spatial": 0.8, "colour": 0.95, "dune": 0.1}  # colour does nothing, spatial takes off only 0.1
    v = _verdicts(_accuracies(level), hit_rate=0.5)
    assert v["colour_branch_acts"] == "fails" and v["spatial_recovery_headroom"] == "fails"
    assert v["spatial_attack_hits"] == "fails" and v["spatial_branch_acts"] == "holds"
    assert v["colour_recovers_under_grayscale"] == v["branches_cover_each_other"] == "inconclusive"
    assert v["unlearnable"] == "inconclusive"  # the attack misses its target: the mechanism is not DUNE's


def test_competence_is_judged_against_the_strongest_trivial_rung():
    """A trivial rung above the clean victim (0.9) and the surrogate (0.85) fails both competence preconditions,
    whatever the weaker rungs, and leaves every DUNE claim inconclusive; the ladder is recorded strongest first."""
    acc = _accuracies(LEVEL, RECOVERED | EM_REMOVED)
    strong = RUNGS | {"3-NN on standardised luminance": _correct(0.95)}
    v = _verdicts(acc, rungs=strong)
    assert v["clean_victim_beats_trivial"] == v["surrogate_beats_trivial"] == "fails"
    assert all(v[c] == "inconclusive" for c in ("unlearnable", "lowest_average_under_defenses",
                                                "colour_recovers_under_grayscale")), v
    budget = {s: True for s in SCHEMES[1:]}
    rows = {c.id: c.row() for c in claims(acc, {k: np.ones(3) for k in acc}, {s: acc[s, "none"] for s in
                                          ("clean", "em", "synthetic")}, SCHEMES, list(DEFENSES), budget,
                                          _correct(0.85), strong, (1900, 2000), BUDGET, AT_EPS, CLAIMS,
                                          DEFAULT.plans)}
    assert [r["baseline"] for r in rows["clean_victim_beats_trivial"]["ladder"]] == [
        "3-NN on standardised luminance", "5-NN", "logistic regression"]
    assert rows["clean_victim_beats_trivial"]["baseline"] == "3-NN on standardised luminance"


def test_the_budget_check_states_the_budget_it_checks():
    acc = _accuracies(LEVEL)
    rows = {c.id: c for c in claims(acc, {k: np.ones(3) for k in acc}, {s: acc[s, "none"] for s in
                                    ("clean", "em", "synthetic")}, SCHEMES, list(DEFENSES),
                                    {s: True for s in SCHEMES[1:]}, _correct(0.85), RUNGS, (1900, 2000), BUDGET,
                                    AT_EPS, CLAIMS, DEFAULT.plans)}
    assert "L_inf 32/255" in rows["within_budget_every_image"].statement
    assert "8/255" not in rows["within_budget_every_image"].statement
    assert "here L_inf 32/255" in rows["within_budget_every_image"].paper_value  # the paper's 8/255 is named as such


def test_ladder_rungs_match_scikit_learn_fitted_independently():
    """Oracle: each rung's test outcomes equal scikit-learn's KNeighborsClassifier / LogisticRegression fitted on the
    same features and the hyper-parameter the ladder chose, and the nearest class mean equals NearestCentroid."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier, NearestCentroid
    from sklearn.preprocessing import StandardScaler

    pattern = _images(10, 7)
    y_train, y_test = torch.arange(200) % 10, torch.arange(80) % 10
    x_train = 0.3 * pattern[y_train] + 0.7 * _images(200, 1)
    x_test = 0.3 * pattern[y_test] + 0.7 * _images(80, 2)
    rungs = ladder(x_train, y_train, x_test, y_test, 10, (1, 3, 5), (0.1, 1.0), 0.2)
    assert len(rungs) == 5
    features = {"raw RGB pixels": (x_train.flatten(1).numpy(), x_test.flatten(1).numpy()),
                "standardised luminance": (standardised_luminance(x_train).numpy(),
                                           standardised_luminance(x_test).numpy())}
    for name, r in rungs.items():
        if name == NEAREST_MEAN:
            a, b = features["standardised luminance"]
            oracle = NearestCentroid().fit(a, y_train.numpy()).predict(b)
        else:
            a, b = features[name.split(" on ")[1]]
            a_fit, y_fit = a[:160], y_train.numpy()[:160]
            if "NN" in name:
                oracle = KNeighborsClassifier(r["chosen"]["k"], algorithm="brute").fit(a_fit, y_fit).predict(b)
            else:
                scaler = StandardScaler().fit(a_fit)
                oracle = LogisticRegression(C=r["chosen"]["C"], max_iter=10_000).fit(
                    scaler.transform(a_fit), y_fit).predict(scaler.transform(b))
        np.testing.assert_array_equal(r["correct"], (oracle == y_test.numpy()).astype(float), err_msg=name)


def test_nearest_class_mean_matches_scikit_learn():
    from sklearn.neighbors import NearestCentroid

    pattern = _images(10, 7)  # one template per class, blended into noise: a learnable but imperfect task
    y_train, y_test = torch.arange(200) % 10, torch.arange(80) % 10
    x_train = 0.05 * pattern[y_train] + 0.95 * _images(200, 1)
    x_test = 0.05 * pattern[y_test] + 0.95 * _images(80, 2)
    z_train, z_test = standardised_luminance(x_train).numpy(), standardised_luminance(x_test).numpy()
    oracle = NearestCentroid().fit(z_train, y_train.numpy()).score(z_test, y_test.numpy())
    ours = nearest_class_mean(x_train, y_train, x_test, y_test, 10).mean()
    assert abs(ours - oracle) < 1e-12 and 0.1 < ours < 1.0


def test_standardised_luminance_ignores_the_random_colours():
    """z is invariant to the per-image colouring x = (1 - d) bg + d fg with fg brighter than bg (data.py)."""
    d = _images(1)[:, :1]

    def colour(bg: list[float], fg: list[float]) -> torch.Tensor:
        return (1 - d) * torch.tensor(bg)[None, :, None, None] + d * torch.tensor(fg)[None, :, None, None]

    a, b = colour([0.1, 0.2, 0.3], [0.9, 0.7, 0.8]), colour([0.4, 0.0, 0.2], [0.6, 1.0, 0.9])
    assert torch.allclose(standardised_luminance(a), standardised_luminance(b), atol=1e-5)


@pytest.mark.slow
def test_smoke_pipeline_end_to_end(smoke_runs):
    runs = smoke_runs(SLUG)
    budget = read_table(runs["verify"] / "budget.parquet").to_pylist()
    assert {r["scheme"] for r in budget} == set(SCHEMES[1:])
    assert all(r["ok"] for r in budget)
    victims = read_table(runs["evaluate"] / "accuracy.parquet")
    assert victims.num_rows == len(SCHEMES) * len(DEFENSES) * 2
    dune = load_tensors(runs["perturb_dune"] / "perturbed.safetensors")
    smoke = load_params(read_params_file(Path(__file__).parents[2] / "params.yaml"), SLUG, Params, "smoke",
                        Path("params.yaml"))
    assert ((dune["x"] - dune["x_colour"]).abs().max() <= smoke.budget.eps + 1e-6)
    assert {c["id"] for c in runs.metrics()["claims"]} >= {"unlearnable", "standard_schemes_unlearnable"}
