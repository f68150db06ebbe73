"""The paper's claims restated for our scale: a pure function from victim accuracies to claims of three kinds.

``acc[(scheme, defense)]`` holds the clean test accuracy of each victim seed (the same seeds, hence paired, across
schemes and defenses). Every comparison is a 95% interval judged by a shared rule (paperdag.common.verdicts) under the
sample-size plan of its units (params.yaml ``plans``): paired Student-t over victim seeds, over the standard
schemes' replicates, paired over test images, or Clopper-Pearson over training images. Preconditions, before any
DUNE claim is judged:

- competence: the clean-data victim (over seeds) and the surrogate (paired over test images) beat the strongest
  rung of the trivial ladder (trivial.py: k-NN and logistic regression on raw pixels and on standardised luminance,
  the nearest class mean; the next rung is recorded beside it), and no victim under any scheme or defense is stuck
  predicting one class (it fits its own training set: a count over the fixed set of victims);
- the mechanism can act: the standard schemes (error-minimising and synthetic noise) make the data unlearnable at
  this budget, judged on replicates that each draw the noise and the victim afresh (draws.py; ``std[s]`` holds
  replicate i's victim accuracy, ``std["clean"]`` the same victim seed on clean data), so the interval carries the
  variance between noise draws and not only between victims; the spatial branch's targeted attack reaches the
  shifted label on the surrogates, and each branch alone lowers the undefended victim;
- headroom: a defense can only "recover" a branch by ``recover_gap`` if the branch takes at least that much off the
  clean victim.

A branch's recovery under defense d is measured net of d's cost on clean data, a difference in differences over
paired seeds: r_b(d) = (acc[b, d] - acc[b, none]) - (acc[clean, d] - acc[clean, none]), so a defense that costs
clean accuracy is not credited with a recovery it did not make (and one that only costs is not read as no
recovery); r_b(d) can be at most acc[clean, none] - acc[b, none], the headroom.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import mean_ci, paired_diff_ci, proportion_ci
from paperdag.common.verdicts import (
    Claim,
    Judgement,
    Ladder,
    all_of,
    check,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
)

from .params import BudgetParams, ClaimParams, Plans

Acc = dict[tuple[str, str], np.ndarray]
Draws = dict[str, np.ndarray]  # "clean", "em", "synthetic": per-replicate victim accuracy (draws.py), paired by index
PAPER_ROBUST = ("average test accuracy over 7 defenses 14.95% to 50.82% lower than 12 SOTA UE schemes "
                "(CIFAR-10 and ImageNet, ResNet-scale victims)")
STANDARD = ("em", "synthetic")  # the standard schemes whose drop shows the budget lets unlearnable examples work
RECOVER = {"spatial": ("jpeg", "adv_train"), "colour": ("grayscale",)}  # the defenses that remove each branch
COVER = ("jpeg", "adv_train", "grayscale")


def every_part(parts: dict[str, Judgement]) -> Judgement:
    """``all_of(parts)``. Where Holm's step-down rejects every part, ``all_of`` divides by zero (the next level
    alpha / (k - rejected) once none is left); that claim fails on every part, stated here in ``all_of``'s words."""
    try:
        return all_of(parts)
    except ZeroDivisionError:
        k, first = len(parts), next(iter(parts.values()))
        shown = "; ".join(f"{name}: {j.reason}" for name, j in list(parts.items())[:3])
        return Judgement("fails", f"{k} parts ({k} fails; {k} fail under Holm's correction over {k} parts): {shown}",
                         first.rule, first.unit, min(j.n for j in parts.values()), first.plan)


def defense_average(acc: Acc, scheme: str, defenses: list[str]) -> np.ndarray:
    """Per-seed mean over defenses of a scheme's victim accuracy."""
    return np.mean([acc[scheme, d] for d in defenses], axis=0)


def over_255(x: float) -> str:
    """A budget in the paper's units: 0.1254902 -> "32/255"."""
    return f"{x * 255:.3g}/255"


def trivial_ladder(rungs: dict[str, np.ndarray]) -> Ladder:
    """The trivial classifiers' test accuracies (Clopper-Pearson over test images), strongest first."""
    return Ladder.of("higher", {name: proportion_ci(int(c.sum()), len(c), unit="image") for name, c in rungs.items()})


def preconditions(acc: Acc, fit: Acc, std: Draws, surrogate: np.ndarray, rungs: dict[str, np.ndarray],
                  hits: tuple[int, int], p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence of the trained models, the mechanism's regime and the recovery headroom (module docstring);
    ``fit[(scheme, defense)]``: each victim seed's accuracy on its own training set; ``std``: the standard schemes'
    replicates; ``surrogate`` and ``rungs[name]``: per clean test image, 1 if the surrogate (its final checkpoint) or
    the trivial rung classifies it right; ``hits``: (training images every surrogate member sends to the shifted
    label, training images)."""
    clean = acc["clean", "none"]
    ladder = trivial_ladder(rungs)
    bar = ladder.strongest
    stuck = {f"{s}/{d}": int((v < p.fit_min).sum()) for (s, d), v in fit.items() if (v < p.fit_min).any()}
    victims = int(sum(v.size for v in fit.values()))
    drop = {s: paired_diff_ci(std[s], p.unlearn_frac * std["clean"], unit="draw") for s in STANDARD}
    acts = {b: paired_diff_ci(acc[b, "none"], clean, unit="seed") for b in RECOVER}
    room = {b: paired_diff_ci(clean, acc[b, "none"], unit="seed") for b in RECOVER}
    over_bar = paired_diff_ci(surrogate, rungs[bar.name], unit="image")
    hit = proportion_ci(*hits, unit="image")
    return [
        precondition("clean_victim_beats_trivial", "the clean-data victim (no defense) beats the strongest trivial "
                     "classifier (k-NN or logistic regression on raw pixels or standardised luminance, nearest class "
                     "mean) on the clean test set", bar.name,
                     {"clean_victim": mean_ci(clean, unit="seed").rounded(), "trivial": bar.value.rounded()},
                     superiority(mean_ci(clean, unit="seed"), reference=bar.point(), what="clean victim accuracy",
                                 plan=plans.seeds), ladder=ladder),
        precondition("surrogate_beats_trivial", "the surrogate (the final checkpoint of its run) beats the strongest "
                     "trivial classifier on the clean test set (paired over test images)", bar.name,
                     {"surrogate": round(float(surrogate.sum() / surrogate.size), 4), "trivial": bar.value.rounded(),
                      "surrogate_minus_trivial": over_bar.rounded()},
                     superiority(over_bar, what=f"surrogate - {bar.name} (per test image)", plan=plans.test_images),
                     ladder=ladder),
        precondition("every_victim_fits_its_data", f"every victim (scheme x defense x seed) fits its own training "
                     f"set to >= {p.fit_min:g} accuracy: none is stuck predicting one class",
                     "a constant predictor (the largest class share, ~0.11)", {"victims": victims, "stuck": stuck},
                     exact(not stuck, f"{sum(stuck.values())} of {victims} victims below {p.fit_min:g} training "
                           "accuracy", basis="fixed set")),
        precondition("standard_schemes_unlearnable", f"error-minimising and synthetic noise each bring the undefended "
                     f"victim below {p.unlearn_frac:g} x the clean victim's accuracy (paired over "
                     f"{len(std['clean'])} replicates, each a fresh noise draw and victim seed): the budget lets "
                     "unlearnable examples work at all",
                     "the clean-data victim (no defense, same victim seed)",
                     {s: mean_ci(std[s], unit="draw").rounded() for s in ("clean", *STANDARD)},
                     every_part({s: superiority(v, direction="below", what=f"{s} - {p.unlearn_frac:g} clean",
                                                plan=plans.draws) for s, v in drop.items()})),
        precondition("spatial_attack_hits", f"the spatial branch's targeted attack makes every surrogate checkpoint "
                     f"predict the shifted label y' on >= {p.hit_min:g} of the training images (Clopper-Pearson "
                     "over the images)", "the shift rate the branch aims at (every image)",
                     {"hit_rate": hit.rounded(), "required": p.hit_min},
                     superiority(hit, reference=p.hit_min, what="share of training images hit by every checkpoint",
                                 plan=plans.train_images)),
        *(precondition(f"{b}_branch_acts", f"the {b}-only branch lowers the undefended victim's accuracy below the "
                       "clean victim's (paired over seeds)", "the clean-data victim (no defense)",
                       {b: mean_ci(acc[b, "none"], unit="seed").rounded(),
                        "clean": mean_ci(clean, unit="seed").rounded()},
                       superiority(v, direction="below", what=f"{b} - clean accuracy", plan=plans.seeds))
          for b, v in acts.items()),
        *(precondition(f"{b}_recovery_headroom", f"the undefended {b}-only victim is at least {p.recover_gap:g} "
                       "below the clean-data victim, so a net recovery of that size can appear",
                       "the clean-data victim (no defense)", {f"clean_minus_{b}": room[b].rounded()},
                       superiority(room[b], margin=p.recover_gap, what=f"clean - {b} (none)", plan=plans.seeds))
          for b in RECOVER),
    ]


def claims(acc: Acc, fit: Acc, std: Draws, schemes: list[str], defenses: list[str], budget_ok: dict[str, bool],
           surrogate: np.ndarray, rungs: dict[str, np.ndarray], hits: tuple[int, int], budget: BudgetParams,
           p: ClaimParams, plans: Plans) -> list[Claim]:
    """Preconditions, then unlearnability, robustness over defenses, the branches' recovery and complementarity,
    and the budget check."""
    clean = acc["clean", "none"]
    avg = {s: defense_average(acc, s, defenses) for s in schemes}
    rivals = [s for s in schemes if s not in ("clean", "dune", *RECOVER)]  # the baselines, not DUNE's own branches
    margins = {s: paired_diff_ci(avg[s], avg["dune"], unit="seed") for s in rivals}
    gain = {(b, d): paired_diff_ci(acc[b, d] - acc["clean", d], acc[b, "none"] - clean, unit="seed")
            for b, ds in RECOVER.items() for d in ds}  # net of the defense's cost on clean data
    better = {d: min(RECOVER, key=lambda b: float(np.mean(acc[b, d]))) for d in COVER}
    cover = {d: paired_diff_ci(acc["dune", d], acc[better[d], d], unit="seed") for d in COVER}
    regime = ["clean_victim_beats_trivial", "surrogate_beats_trivial", "every_victim_fits_its_data",
              "standard_schemes_unlearnable"]
    eps = over_255(budget.eps)
    return [
        *preconditions(acc, fit, std, surrogate, rungs, hits, p, plans),
        evidence("unlearnable", f"victims trained on DUNE data (no defense) stay below {p.unlearn_frac:g} x the "
                 "clean-data victims' accuracy (paired over seeds)",
                 "CIFAR-10 / ImageNet victims near chance (abstract gives no single number)",
                 {"dune": mean_ci(acc["dune", "none"], unit="seed").rounded(),
                  "clean": mean_ci(clean, unit="seed").rounded()},
                 superiority(paired_diff_ci(acc["dune", "none"], p.unlearn_frac * clean, unit="seed"),
                             direction="below", what=f"dune - {p.unlearn_frac:g} clean", plan=plans.seeds),
                 requires=[*regime, "spatial_attack_hits"]),
        evidence("lowest_average_under_defenses", f"averaged over the {len(defenses)} defenses "
                 f"({', '.join(defenses)}), DUNE's victim accuracy is below every baseline's ({', '.join(rivals)}): "
                 "the paired CI of (baseline - DUNE) is above 0 for each", PAPER_ROBUST,
                 {"dune_avg": mean_ci(avg["dune"], unit="seed").rounded(),
                  "rival_minus_dune": {s: m.rounded() for s, m in margins.items()}},
                 every_part({s: superiority(m, what=f"{s} - dune (defense average)", plan=plans.seeds)
                             for s, m in margins.items()}),
                 requires=[*regime, "spatial_attack_hits"]),
        evidence("spatial_recovers_under_jpeg_and_at", "the spatial-only branch loses its effect under JPEG and under "
                 f"adversarial training: net of each defense's cost on clean data, victim accuracy rises by >= "
                 f"{p.recover_gap:g} over no defense under each",
                 "spatial-domain UEs are removed by JPEG / adversarial training (the paper's motivation)",
                 {d: gain["spatial", d].rounded() for d in RECOVER["spatial"]},
                 every_part({d: superiority(gain["spatial", d], margin=p.recover_gap,
                                            what=f"net recovery of spatial under {d}", plan=plans.seeds)
                             for d in RECOVER["spatial"]}),
                 requires=[*regime, "spatial_attack_hits", "spatial_branch_acts", "spatial_recovery_headroom"]),
        evidence("colour_recovers_under_grayscale", "the colour-only branch loses its effect under grayscale: net of "
                 f"grayscale's cost on clean data, victim accuracy rises by >= {p.recover_gap:g} over no defense",
                 "colour-domain perturbations are removed by grayscale (the paper's motivation)",
                 {"grayscale": gain["colour", "grayscale"].rounded()},
                 superiority(gain["colour", "grayscale"], margin=p.recover_gap,
                             what="net recovery of colour under grayscale", plan=plans.seeds),
                 requires=[*regime, "colour_branch_acts", "colour_recovery_headroom"]),
        evidence("branches_cover_each_other", f"under {', '.join(COVER)}, DUNE's victim accuracy is at most the "
                 f"better branch's + {p.cover_tol:g} (paired over seeds)",
                 "dual-branch DUNE stays robust where a single-domain branch fails",
                 {d: {"better_branch": better[d], "dune_minus_better": cover[d].rounded()} for d in COVER},
                 every_part({d: noninferiority(cover[d], margin=p.cover_tol, what=f"dune - {better[d]} ({d})",
                                               plan=plans.seeds) for d in COVER}),
                 requires=[*regime, "spatial_attack_hits", "spatial_branch_acts", "colour_branch_acts"]),
        check("within_budget_every_image", f"every perturbed image of every scheme is within its budget (L_inf {eps}; "
              f"one pixel for OPS; PSNR >= {budget.psnr_min:g} dB and SSIM >= {budget.ssim_min:g} for the colour "
              "part), checked exactly on all images",
              "L_inf 8/255 on CIFAR-10 plus PSNR/SSIM-constrained colour offsets",
              {s: ok for s, ok in budget_ok.items()},
              exact(all(budget_ok.values()), f"over budget: {[s for s, ok in budget_ok.items() if not ok]}",
                    basis="fixed set")),
    ]
