"""The paper's claims restated for our scale: a pure function from victim accuracies to ``Claim``s.

``acc[(scheme, defense)]`` holds the clean test accuracy of each victim seed (the same seeds, hence paired, across
schemes). Intervals are 95% Student-t intervals over seeds (paperdag.common.stats).
"""

from __future__ import annotations

import numpy as np

from paperdag.claims import Claim
from paperdag.common.stats import mean_ci, paired_diff_ci

from .params import ClaimParams

Acc = dict[tuple[str, str], np.ndarray]
PAPER_ROBUST = ("average test accuracy over 7 defenses 14.95% to 50.82% lower than 12 SOTA UE schemes "
                "(CIFAR-10 and ImageNet, ResNet-scale victims)")


def defense_average(acc: Acc, scheme: str, defenses: list[str]) -> np.ndarray:
    """Per-seed mean over defenses of a scheme's victim accuracy."""
    return np.mean([acc[scheme, d] for d in defenses], axis=0)


def _m(acc: Acc, scheme: str, defense: str) -> float:
    return float(np.mean(acc[scheme, defense]))


def claims(acc: Acc, schemes: list[str], defenses: list[str], budget_ok: dict[str, bool], surrogate_acc: float,
           p: ClaimParams) -> list[Claim]:
    """Unlearnability, robustness over defenses, the branches' complementarity, the budget and the sanity gate."""
    clean, dune = _m(acc, "clean", "none"), mean_ci(acc["dune", "none"])
    avg = {s: defense_average(acc, s, defenses) for s in schemes}
    rivals = [s for s in schemes if s not in ("clean", "dune")]
    margins = {s: paired_diff_ci(avg[s], avg["dune"]) for s in rivals}
    runner = min(rivals, key=lambda s: float(avg[s].mean()))
    gain = {(s, d): _m(acc, s, d) - _m(acc, s, "none") for s in ("spatial", "colour")
            for d in ("jpeg", "adv_train", "grayscale")}
    cover = {d: _m(acc, "dune", d) - min(_m(acc, "spatial", d), _m(acc, "colour", d))
             for d in ("jpeg", "adv_train", "grayscale")}
    return [
        Claim("unlearnable", f"victims trained on DUNE data (no defense) reach a clean test accuracy whose 95% CI "
              f"upper end is below {p.unlearn_frac:g} x the clean-data victims' accuracy",
              "CIFAR-10 / ImageNet victims near chance (abstract gives no single number)",
              {"dune": dune.rounded(), "clean": round(clean, 4)}, dune.hi < p.unlearn_frac * clean),
        Claim("lowest_average_under_defenses", f"averaged over the {len(defenses)} defenses ({', '.join(defenses)}), "
              "DUNE's victim accuracy is the lowest of all schemes: the paired 95% CI of (rival - DUNE) is above 0 "
              "for every rival", PAPER_ROBUST,
              {"dune_avg": mean_ci(avg["dune"]).rounded(), "runner_up": runner,
               "margin_to_runner_up": margins[runner].rounded(),
               "avg": {s: round(float(avg[s].mean()), 4) for s in schemes}},
              all(m.lo > 0 for m in margins.values())),
        Claim("spatial_recovers_under_jpeg_and_at", "the spatial-only branch loses its effect under JPEG and under "
              f"adversarial training: victim accuracy rises by >= {p.recover_gap:g} over no defense under each",
              "spatial-domain UEs are removed by JPEG / adversarial training (the paper's motivation)",
              {d: round(gain["spatial", d], 4) for d in ("jpeg", "adv_train")},
              min(gain["spatial", "jpeg"], gain["spatial", "adv_train"]) >= p.recover_gap),
        Claim("colour_recovers_under_grayscale", "the colour-only branch loses its effect under grayscale: victim "
              f"accuracy rises by >= {p.recover_gap:g} over no defense",
              "colour-domain perturbations are removed by grayscale (the paper's motivation)",
              round(gain["colour", "grayscale"], 4), gain["colour", "grayscale"] >= p.recover_gap),
        Claim("branches_cover_each_other", "under JPEG, adversarial training and grayscale, DUNE's victim accuracy "
              f"is at most the better branch's + {p.cover_tol:g}",
              "dual-branch DUNE stays robust where a single-domain branch fails",
              {d: round(v, 4) for d, v in cover.items()}, max(cover.values()) <= p.cover_tol),
        Claim("within_budget_every_image", "every perturbed image of every scheme is within its budget (L_inf eps; "
              "one pixel for OPS; PSNR and SSIM floors for the colour part), checked exactly on all images",
              "L_inf 8/255 spatial budget plus PSNR/SSIM-constrained colour offsets",
              {s: ok for s, ok in budget_ok.items()}, all(budget_ok.values())),
        Claim("clean_models_learn", f"sanity gate: the clean-data victim (no defense) and the surrogate reach test "
              f"accuracy >= {p.sanity_min:g} (chance 0.1)", "clean CIFAR-10 accuracy ~94% (standard ResNet-18)",
              {"clean_victim": round(clean, 4), "surrogate": round(surrogate_acc, 4)},
              min(clean, surrogate_acc) >= p.sanity_min),
    ]
