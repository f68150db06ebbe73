"""The paper's claims restated for our scale: a pure function from victim accuracies to claims of three kinds.

``acc[(scheme, defense)]`` holds the clean test accuracy of each victim seed (the same seeds, hence paired, across
schemes and defenses). Every comparison is a paired 95% Student-t interval over seeds judged by a shared rule
(paperdag.common.verdicts). Preconditions, before any DUNE claim is judged:

- competence: the clean-data victim and the surrogate beat the nearest-class-mean classifier (trivial.py), and no
  victim under any scheme or defense is stuck predicting one class (it fits its own training set);
- the mechanism can act: the standard schemes (error-minimising and synthetic noise) make the data unlearnable at
  this budget, judged on replicates that each draw the noise and the victim afresh (draws.py; ``std[s]`` holds
  replicate i's victim accuracy, ``std["clean"]`` the same victim seed on clean data), so the interval carries the
  variance between noise draws and not only between victims; the spatial branch's targeted attack reaches the shifted label on the surrogates, and each branch
  alone lowers the undefended victim;
- headroom: a defense can only "recover" a branch by ``recover_gap`` if the branch takes at least that much off the
  clean victim.

A branch's recovery under defense d is measured net of d's cost on clean data, a difference in differences over
paired seeds: r_b(d) = (acc[b, d] - acc[b, none]) - (acc[clean, d] - acc[clean, none]), so a defense that costs
clean accuracy is not credited with a recovery it did not make (and one that only costs is not read as no
recovery); r_b(d) can be at most acc[clean, none] - acc[b, none], the headroom.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    all_of,
    check,
    evidence,
    noninferiority,
    precondition,
    superiority,
)

from .params import ClaimParams

Acc = dict[tuple[str, str], np.ndarray]
Draws = dict[str, np.ndarray]  # "clean", "em", "synthetic": per-replicate victim accuracy (draws.py), paired by index
PAPER_ROBUST = ("average test accuracy over 7 defenses 14.95% to 50.82% lower than 12 SOTA UE schemes "
                "(CIFAR-10 and ImageNet, ResNet-scale victims)")
STANDARD = ("em", "synthetic")  # the standard schemes whose drop shows the budget lets unlearnable examples work
RECOVER = {"spatial": ("jpeg", "adv_train"), "colour": ("grayscale",)}  # the defenses that remove each branch
COVER = ("jpeg", "adv_train", "grayscale")
TRIVIAL = "nearest class mean of per-image standardised luminance (trivial.py)"


def defense_average(acc: Acc, scheme: str, defenses: list[str]) -> np.ndarray:
    """Per-seed mean over defenses of a scheme's victim accuracy."""
    return np.mean([acc[scheme, d] for d in defenses], axis=0)


def _r(x: float) -> float:
    return round(float(x), 4)


def preconditions(acc: Acc, fit: Acc, std: Draws, surrogate_acc: float, trivial_acc: float, hit_rate: float,
                  p: ClaimParams) -> list[Claim]:
    """Competence of the trained models, the mechanism's regime and the recovery headroom (module docstring);
    ``fit[(scheme, defense)]``: each victim seed's accuracy on its own training set; ``std``: the standard schemes'
    replicates."""
    clean = acc["clean", "none"]
    stuck = {f"{s}/{d}": int((v < p.fit_min).sum()) for (s, d), v in fit.items() if (v < p.fit_min).any()}
    drop = {s: paired_diff_ci(std[s], p.unlearn_frac * std["clean"]) for s in STANDARD}
    acts = {b: paired_diff_ci(acc[b, "none"], clean) for b in RECOVER}
    room = {b: paired_diff_ci(clean, acc[b, "none"]) for b in RECOVER}
    return [
        precondition("clean_victim_beats_trivial", "the clean-data victim (no defense) beats the nearest-class-mean "
                     "classifier on the clean test set", TRIVIAL,
                     {"clean_victim": mean_ci(clean).rounded(), "trivial": _r(trivial_acc)},
                     superiority(mean_ci(clean), reference=trivial_acc, what="clean victim accuracy")),
        precondition("surrogate_beats_trivial", "the surrogate (best checkpoint) beats the nearest-class-mean "
                     "classifier on the clean test set", TRIVIAL,
                     {"surrogate": _r(surrogate_acc), "trivial": _r(trivial_acc)}, surrogate_acc > trivial_acc,
                     f"one surrogate run: {surrogate_acc:.4f} vs {trivial_acc:.4f}"),
        precondition("every_victim_fits_its_data", f"every victim (scheme x defense x seed) fits its own training "
                     f"set to >= {p.fit_min:g} accuracy: none is stuck predicting one class",
                     "a constant predictor (the largest class share, ~0.11)",
                     {"victims": int(sum(v.size for v in fit.values())), "stuck": stuck}, not stuck,
                     f"{sum(stuck.values())} victims below {p.fit_min:g} training accuracy" if stuck else ""),
        precondition("standard_schemes_unlearnable", f"error-minimising and synthetic noise each bring the undefended "
                     f"victim below {p.unlearn_frac:g} x the clean victim's accuracy (paired over "
                     f"{len(std['clean'])} replicates, each a fresh noise draw and victim seed): the budget lets "
                     "unlearnable examples work at all",
                     "the clean-data victim (no defense, same victim seed)",
                     {s: mean_ci(std[s]).rounded() for s in ("clean", *STANDARD)},
                     all_of({s: superiority(v, direction="below", what=f"{s} - {p.unlearn_frac:g} clean")
                               for s, v in drop.items()})),
        precondition("spatial_attack_hits", f"the spatial branch's targeted attack makes the surrogate ensemble "
                     f"predict the shifted label y' on >= {p.hit_min:g} of the training images",
                     "the shift rate the branch aims at (every image)",
                     {"hit_rate": _r(hit_rate), "required": p.hit_min}, hit_rate >= p.hit_min,
                     f"one surrogate ensemble on the fixed training set: {hit_rate:.4f} vs {p.hit_min:g}"),
        *(precondition(f"{b}_branch_acts", f"the {b}-only branch lowers the undefended victim's accuracy below the "
                       "clean victim's (paired over seeds)", "the clean-data victim (no defense)",
                       {b: mean_ci(acc[b, "none"]).rounded(), "clean": mean_ci(clean).rounded()},
                       superiority(v, direction="below", what=f"{b} - clean accuracy")) for b, v in acts.items()),
        *(precondition(f"{b}_recovery_headroom", f"the undefended {b}-only victim is at least {p.recover_gap:g} "
                       "below the clean-data victim, so a net recovery of that size can appear",
                       "the clean-data victim (no defense)", {f"clean_minus_{b}": room[b].rounded()},
                       superiority(room[b], margin=p.recover_gap, sesoi=p.recover_gap, what=f"clean - {b} (none)"))
          for b in RECOVER),
    ]


def claims(acc: Acc, fit: Acc, std: Draws, schemes: list[str], defenses: list[str], budget_ok: dict[str, bool],
           surrogate_acc: float, trivial_acc: float, hit_rate: float, p: ClaimParams) -> list[Claim]:
    """Preconditions, then unlearnability, robustness over defenses, the branches' recovery and complementarity,
    and the budget check."""
    clean = acc["clean", "none"]
    avg = {s: defense_average(acc, s, defenses) for s in schemes}
    rivals = [s for s in schemes if s not in ("clean", "dune", *RECOVER)]  # the baselines, not DUNE's own branches
    margins = {s: paired_diff_ci(avg[s], avg["dune"]) for s in rivals}
    gain = {(b, d): paired_diff_ci(acc[b, d] - acc["clean", d], acc[b, "none"] - clean)
            for b, ds in RECOVER.items() for d in ds}  # net of the defense's cost on clean data
    better = {d: min(RECOVER, key=lambda b: float(np.mean(acc[b, d]))) for d in COVER}
    cover = {d: paired_diff_ci(acc["dune", d], acc[better[d], d]) for d in COVER}
    regime = ["clean_victim_beats_trivial", "surrogate_beats_trivial", "every_victim_fits_its_data",
              "standard_schemes_unlearnable"]
    return [
        *preconditions(acc, fit, std, surrogate_acc, trivial_acc, hit_rate, p),
        evidence("unlearnable", f"victims trained on DUNE data (no defense) stay below {p.unlearn_frac:g} x the "
                 "clean-data victims' accuracy (paired over seeds)",
                 "CIFAR-10 / ImageNet victims near chance (abstract gives no single number)",
                 {"dune": mean_ci(acc["dune", "none"]).rounded(), "clean": mean_ci(clean).rounded()},
                 superiority(paired_diff_ci(acc["dune", "none"], p.unlearn_frac * clean), direction="below",
                             what=f"dune - {p.unlearn_frac:g} clean"),
                 requires=[*regime, "spatial_attack_hits"]),
        evidence("lowest_average_under_defenses", f"averaged over the {len(defenses)} defenses "
                 f"({', '.join(defenses)}), DUNE's victim accuracy is below every baseline's ({', '.join(rivals)}): "
                 "the paired CI of (baseline - DUNE) is above 0 for each", PAPER_ROBUST,
                 {"dune_avg": mean_ci(avg["dune"]).rounded(),
                  "rival_minus_dune": {s: m.rounded() for s, m in margins.items()}},
                 all_of({s: superiority(m, what=f"{s} - dune (defense average)") for s, m in margins.items()}),
                 requires=[*regime, "spatial_attack_hits"]),
        evidence("spatial_recovers_under_jpeg_and_at", "the spatial-only branch loses its effect under JPEG and under "
                 f"adversarial training: net of each defense's cost on clean data, victim accuracy rises by >= "
                 f"{p.recover_gap:g} over no defense under each",
                 "spatial-domain UEs are removed by JPEG / adversarial training (the paper's motivation)",
                 {d: gain["spatial", d].rounded() for d in RECOVER["spatial"]},
                 all_of({d: superiority(gain["spatial", d], margin=p.recover_gap, sesoi=p.recover_gap,
                                          what=f"net recovery of spatial under {d}") for d in RECOVER["spatial"]}),
                 requires=[*regime, "spatial_attack_hits", "spatial_branch_acts", "spatial_recovery_headroom"]),
        evidence("colour_recovers_under_grayscale", "the colour-only branch loses its effect under grayscale: net of "
                 f"grayscale's cost on clean data, victim accuracy rises by >= {p.recover_gap:g} over no defense",
                 "colour-domain perturbations are removed by grayscale (the paper's motivation)",
                 {"grayscale": gain["colour", "grayscale"].rounded()},
                 superiority(gain["colour", "grayscale"], margin=p.recover_gap, sesoi=p.recover_gap,
                             what="net recovery of colour under grayscale"),
                 requires=[*regime, "colour_branch_acts", "colour_recovery_headroom"]),
        evidence("branches_cover_each_other", f"under {', '.join(COVER)}, DUNE's victim accuracy is at most the "
                 f"better branch's + {p.cover_tol:g} (paired over seeds)",
                 "dual-branch DUNE stays robust where a single-domain branch fails",
                 {d: {"better_branch": better[d], "dune_minus_better": cover[d].rounded()} for d in COVER},
                 all_of({d: noninferiority(cover[d], margin=p.cover_tol, what=f"dune - {better[d]} ({d})")
                           for d in COVER}),
                 requires=[*regime, "spatial_attack_hits", "spatial_branch_acts", "colour_branch_acts"]),
        check("within_budget_every_image", "every perturbed image of every scheme is within its budget (L_inf eps; "
              "one pixel for OPS; PSNR and SSIM floors for the colour part), checked exactly on all images",
              "L_inf 8/255 spatial budget plus PSNR/SSIM-constrained colour offsets",
              {s: ok for s, ok in budget_ok.items()}, all(budget_ok.values()),
              f"over budget: {[s for s, ok in budget_ok.items() if not ok]}"),
    ]
