"""The paper's claims restated for our scale: a pure function from victim accuracies to claims of three kinds.

``acc[(scheme, defense)]`` holds the clean test accuracy of each victim seed (the same seeds, hence paired, across
schemes and defenses). Every comparison is a 95% interval judged by a shared rule (paperdag.common.verdicts) under the
sample-size plan of its units (params.yaml ``plans``): paired Student-t over victim seeds (a paired bootstrap for the
share of a gap a defense closes), over the standard
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
- headroom: a branch's recovery is judged only where the branch takes at least ``headroom_min`` off the clean
  victim;
- the defenses can act: JPEG and adversarial training each close at least ``recover_frac`` of a standard scheme's
  gap (error-minimising noise, the scheme both were shown to defeat: Liu et al. 2023, Huang et al. 2021), and the
  adversarially trained clean victim still beats the trivial bar; otherwise a branch that survives them says nothing
  about DUNE (spatial_recovers_under_jpeg_and_at and branches_cover_each_other read inconclusive);
- the rivals are off the floor: every baseline's defense-averaged victim lies above chance 1/K (``floor``); a rival
  below it (a targeted scheme that sends the victim to wrong labels) cannot be out-ranked by DUNE.

A defense d "recovers" scheme b by the share of b's gap it closes, paired over seeds:

    R_b(d) = mean_i(acc[b, d]_i - acc[b, none]_i) / mean_i(acc[clean, d]_i - acc[b, none]_i)

with a paired bootstrap interval over the seeds (paperdag.common.stats.bootstrap_ratio_ci), judged against
``recover_frac`` (0.5) and reported beside the absolute accuracies. R is 1 when the defended victim reaches what
the same defense leaves of clean data, 0 when the defense does not move the victim: a victim floored with and
without the defense recovers 0 whatever the defense costs on clean data (the difference in differences used before
credited that cost as recovery). branches_cover_each_other also needs both recovery claims to hold: the branches
"cover each other" only where each alone is removed by its defense.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from paperdag.common.stats import Interval, bootstrap_ratio_ci, mean_ci, paired_diff_ci, proportion_ci
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
    resolve,
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
CAN_ACT = ("jpeg", "adv_train")  # the defenses the spatial branch is said to lose to
RECOVERY_CLAIMS = ("spatial_recovers_under_jpeg_and_at", "colour_recovers_under_grayscale")


def defense_average(acc: Acc, scheme: str, defenses: list[str]) -> np.ndarray:
    """Per-seed mean over defenses of a scheme's victim accuracy."""
    return np.mean([acc[scheme, d] for d in defenses], axis=0)


def gap_closed(acc: Acc, scheme: str, defense: str) -> Interval:
    """R_scheme(defense) (module docstring): the share of the scheme's gap to the defended clean victim that the
    defense closes, a ratio of paired means with its paired bootstrap interval over seeds (fixed resampling seed)."""
    floor = acc[scheme, "none"]
    return bootstrap_ratio_ci(acc[scheme, defense] - floor, acc["clean", defense] - floor, unit="seed")


def recovery_row(acc: Acc, scheme: str, defense: str) -> dict:
    """R with the absolute accuracies beside it (means over seeds)."""
    mean = lambda s, d: round(float(np.mean(acc[s, d])), 4)  # noqa: E731
    return {"gap_closed": gap_closed(acc, scheme, defense).rounded(), f"acc_{scheme}_{defense}": mean(scheme, defense),
            f"acc_{scheme}_none": mean(scheme, "none"), f"acc_clean_{defense}": mean("clean", defense)}


def over_255(x: float) -> str:
    """A budget in the paper's units: 0.1254902 -> "32/255"."""
    return f"{x * 255:.3g}/255"


def trivial_ladder(rungs: dict[str, np.ndarray]) -> Ladder:
    """The trivial classifiers' test accuracies (Clopper-Pearson over test images), strongest first."""
    return Ladder.of("higher", {name: proportion_ci(int(c.sum()), len(c), unit="image") for name, c in rungs.items()})


def preconditions(acc: Acc, fit: Acc, std: Draws, surrogate: np.ndarray, rungs: dict[str, np.ndarray],
                  hits: tuple[int, int], avg: dict[str, np.ndarray], rivals: list[str], at_eps: float,
                  p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence of the trained models, the mechanism's regime and the recovery headroom (module docstring);
    ``fit[(scheme, defense)]``: each victim seed's accuracy on its own training set; ``std``: the standard schemes'
    replicates; ``surrogate`` and ``rungs[name]``: per clean test image, 1 if the surrogate (its final checkpoint) or
    the trivial rung classifies it right; ``hits``: (training images every surrogate member sends to the shifted
    label, training images); ``avg[s]``: per-seed defense average of scheme s; ``rivals``: the baselines DUNE is
    ranked against; ``at_eps``: the adversarial-training radius."""
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
                     all_of({s: superiority(v, direction="below", what=f"{s} - {p.unlearn_frac:g} clean",
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
        *(precondition(f"{b}_recovery_headroom", f"the undefended {b}-only victim is at least {p.headroom_min:g} "
                       "below the clean-data victim, so a defense has a gap to close",
                       "the clean-data victim (no defense)", {f"clean_minus_{b}": room[b].rounded()},
                       superiority(room[b], margin=p.headroom_min, what=f"clean - {b} (none)", plan=plans.seeds))
          for b in RECOVER),
        precondition("at_victim_beats_trivial", "the adversarially trained clean-data victim (radius "
                     f"{over_255(at_eps)}) beats the strongest trivial classifier on the clean test set: adversarial "
                     "training at this radius still learns the task", bar.name,
                     {"at_victim": mean_ci(acc["clean", "adv_train"], unit="seed").rounded(),
                      "trivial": bar.value.rounded()},
                     superiority(mean_ci(acc["clean", "adv_train"], unit="seed"), reference=bar.point(),
                                 what="adversarially trained clean victim accuracy", plan=plans.seeds),
                     ladder=ladder),
        precondition("defenses_can_act", f"JPEG and adversarial training each close >= {p.recover_frac:g} of the "
                     f"gap of a standard scheme ({p.act_scheme}): R = (acc[{p.act_scheme}, d] - acc[{p.act_scheme}, "
                     f"none]) / (acc[clean, d] - acc[{p.act_scheme}, none]), paired bootstrap over seeds",
                     f"{p.act_scheme} without the defense (R = 0) and the defended clean victim (R = 1)",
                     {d: recovery_row(acc, p.act_scheme, d) for d in CAN_ACT},
                     all_of({d: superiority(gap_closed(acc, p.act_scheme, d), margin=p.recover_frac,
                                            what=f"share of the {p.act_scheme} gap {d} closes", plan=plans.seeds)
                             for d in CAN_ACT})),
        precondition("rivals_off_the_floor", f"every baseline's defense-averaged victim accuracy lies above the floor "
                     f"(chance {p.floor:g}), so DUNE has room to be lower",
                     f"the floor of victim accuracy, 1/K = {p.floor:g}",
                     {s: mean_ci(avg[s], unit="seed").rounded() for s in rivals},
                     all_of({s: superiority(mean_ci(avg[s], unit="seed"), reference=p.floor,
                                            what=f"{s} defense-averaged accuracy", plan=plans.seeds)
                             for s in rivals})),
    ]


def claims(acc: Acc, fit: Acc, std: Draws, schemes: list[str], defenses: list[str], budget_ok: dict[str, bool],
           surrogate: np.ndarray, rungs: dict[str, np.ndarray], hits: tuple[int, int], budget: BudgetParams,
           at_eps: float, p: ClaimParams, plans: Plans) -> list[Claim]:
    """Preconditions, then unlearnability, robustness over defenses, the branches' recovery and complementarity,
    and the budget check."""
    clean = acc["clean", "none"]
    avg = {s: defense_average(acc, s, defenses) for s in schemes}
    rivals = [s for s in schemes if s not in ("clean", "dune", *RECOVER)]  # the baselines, not DUNE's own branches
    margins = {s: paired_diff_ci(avg[s], avg["dune"], unit="seed") for s in rivals}
    # at most the better branch's + tol  <=>  at most each branch's + tol: every branch is judged, none is picked
    cover = {(d, b): paired_diff_ci(acc["dune", d], acc[b, d], unit="seed") for d in COVER for b in RECOVER}
    regime = ["clean_victim_beats_trivial", "surrogate_beats_trivial", "every_victim_fits_its_data",
              "standard_schemes_unlearnable"]
    acts = ["defenses_can_act", "at_victim_beats_trivial"]
    eps = over_255(budget.eps)

    def recovers(b: str) -> Judgement:
        return all_of({d: superiority(gap_closed(acc, b, d), margin=p.recover_frac,
                                      what=f"share of the {b} gap {d} closes", plan=plans.seeds)
                       for d in RECOVER[b]})

    out = [
        *preconditions(acc, fit, std, surrogate, rungs, hits, avg, rivals, at_eps, p, plans),
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
                 all_of({s: superiority(m, what=f"{s} - dune (defense average)", plan=plans.seeds)
                         for s, m in margins.items()}),
                 requires=[*regime, "spatial_attack_hits", "rivals_off_the_floor"]),
        evidence("spatial_recovers_under_jpeg_and_at", "the spatial-only branch loses its effect under JPEG and under "
                 f"adversarial training: each closes >= {p.recover_frac:g} of the spatial victim's gap to the "
                 "defended clean victim (paired bootstrap over seeds)",
                 "spatial-domain UEs are removed by JPEG / adversarial training (the paper's motivation)",
                 {d: recovery_row(acc, "spatial", d) for d in RECOVER["spatial"]}, recovers("spatial"),
                 requires=[*regime, *acts, "spatial_attack_hits", "spatial_branch_acts", "spatial_recovery_headroom"]),
        evidence("colour_recovers_under_grayscale", f"the colour-only branch loses its effect under grayscale: it "
                 f"closes >= {p.recover_frac:g} of the colour victim's gap to the grayscale clean victim (paired "
                 "bootstrap over seeds)",
                 "colour-domain perturbations are removed by grayscale (the paper's motivation)",
                 {d: recovery_row(acc, "colour", d) for d in RECOVER["colour"]}, recovers("colour"),
                 requires=[*regime, "colour_branch_acts", "colour_recovery_headroom"]),
        evidence("branches_cover_each_other", f"under {', '.join(COVER)}, DUNE's victim accuracy is at most the "
                 f"better branch's + {p.cover_tol:g}, i.e. at most each branch's + {p.cover_tol:g} (paired over seeds; "
                 "no branch is picked by its mean), where each branch alone is removed by its defense "
                 f"({' and '.join(RECOVERY_CLAIMS)} hold)",
                 "dual-branch DUNE stays robust where a single-domain branch fails",
                 {d: {f"dune_minus_{b}": cover[d, b].rounded() for b in RECOVER} for d in COVER},
                 all_of({f"{d}/{b}": noninferiority(cover[d, b], margin=p.cover_tol, what=f"dune - {b} ({d})",
                                                    plan=plans.seeds) for d in COVER for b in RECOVER}),
                 requires=[*regime, *acts, "spatial_attack_hits", "spatial_branch_acts", "colour_branch_acts"]),
        check("within_budget_every_image", f"every perturbed image of every scheme is within its budget (L_inf {eps}; "
              f"one pixel for OPS; PSNR >= {budget.psnr_min:g} dB and SSIM >= {budget.ssim_min:g} for the colour "
              "part), checked exactly on all images",
              f"the paper's L_inf 8/255 on CIFAR-10 (here L_inf {eps}, params.yaml budget.eps) plus PSNR/SSIM-"
              "constrained colour offsets",
              {s: ok for s, ok in budget_ok.items()},
              exact(all(budget_ok.values()), f"over budget at L_inf {eps}: "
                    f"{[s for s, ok in budget_ok.items() if not ok]}", basis="fixed set")),
    ]
    return needs_recovery(out)


def needs_recovery(out: list[Claim]) -> list[Claim]:
    """branches_cover_each_other made inconclusive unless both recovery claims hold once their own preconditions are
    resolved (``requires`` names preconditions only, so this evidence-on-evidence gate is applied here)."""
    resolved = {c.id: c for c in resolve(out)}
    missing = [resolved[r] for r in RECOVERY_CLAIMS if resolved[r].verdict != "holds"]
    if not missing:
        return out
    why = "; ".join(f"{c.id} {c.verdict}: {c.reason[:300]}" for c in missing)
    return [replace(c, verdict="inconclusive", cause="precondition", reason=f"needs both branches removed by their "
                    f"defenses: {why} (judged alone: {c.verdict})")
            if c.id == "branches_cover_each_other" else c for c in out]
