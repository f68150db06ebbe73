"""The paper's claims restated for our scale: a pure function from measured numbers to ``Claim``s.

Across-seed comparisons are paired (every method is trained on the same seeds) and use Student-t intervals
(paperdag.common.stats) at level ``confidence``: "higher" means the interval of the per-seed difference lies above 0.
"""

from __future__ import annotations

import numpy as np

from paperdag.claims import Claim
from paperdag.common.stats import mean_ci, paired_diff_ci

from .analysis import is_monotone
from .params import ClaimParams
from .rewards import REWARDS

CHANCE_COLOUR = 1 / 12  # both colours right by guessing: 1/4 for the first, 1/3 for a distinct second


def claims(finals: dict[str, dict[str, np.ndarray]], speedup: dict[str, float], control: dict[str, np.ndarray],
           detector_overall: float, p: ClaimParams) -> list[Claim]:
    """``finals[method][score]``: per-seed final scores; ``speedup[baseline]``: T / s* on the aggregate reward;
    ``control[reward]``: seeds x target levels of that reward's mean under MIRO; ``detector_overall``: the
    detector's all-checks accuracy on held-out clean renders."""
    miro, baselines = finals["miro"], [m for m in finals if m != "miro"]

    def diff(b: str, key: str):
        return paired_diff_ci(miro[key], finals[b][key], p.confidence)

    rewards = {b: {r: diff(b, f"reward_{r}") for r in REWARDS} for b in baselines}
    div = {b: float(miro["diversity"].mean() / finals[b]["diversity"].mean()) for b in baselines}
    gen = {b: diff(b, "geneval_overall") for b in baselines}
    curves = {r: [mean_ci(c[:, k], p.confidence).mean for k in range(c.shape[1])] for r, c in control.items()}
    colour = {m: float(f["geneval_colour"].mean()) for m, f in finals.items()}
    return [
        Claim("miro_higher_every_reward", "at equal training steps MIRO's mean reward is higher than every "
              f"baseline's on each of the {len(REWARDS)} rewards ({p.confidence:.0%} CI of the paired seed "
              "difference above 0)", "MIRO beats single-reward and filtering baselines on every preference score "
              "(GenEval, PickScore, ImageReward, HPSv2; ~1B-param text-to-image model)",
              {b: {r: i.rounded() for r, i in v.items()} for b, v in rewards.items()},
              all(i.lo > 0 for v in rewards.values() for i in v.values())),
        Claim("miro_keeps_diversity", f"MIRO's within-prompt diversity (detector-feature spread) is at least "
              f"{1 - p.diversity_tol:g}x every baseline's", "diversity preserved vs single-reward optimisation",
              {b: round(v, 4) for b, v in div.items()}, all(v >= 1 - p.diversity_tol for v in div.values())),
        Claim("training_speedup", "MIRO's mean aggregate reward (mean over the 5 rewards of z, the reward "
              "standardised over the training data) reaches each baseline's final value before the end of "
              "training: speed-up T / s* > 1 (0 = never reached)",
              "up to 19x faster to reach the baselines' quality", {b: round(v, 3) for b, v in speedup.items()},
              all(v > 1 for v in speedup.values())),
        Claim("geneval_higher", "GenEval-like compositional accuracy (object, colour and position all right by the "
              "detector) is higher for MIRO than for every baseline (paired CI above 0)",
              "GenEval 0.75 overall, state of the art at its scale",
              {"miro": mean_ci(miro["geneval_overall"], p.confidence).rounded()}
              | {f"miro_minus_{b}": i.rounded() for b, i in gen.items()}, all(i.lo > 0 for i in gen.values())),
        Claim("controllable_rewards", "raising one reward's target bin (others at top) raises that reward "
              f"monotonically under MIRO (mean over seeds; drops <= {p.monotone_tol:g} allowed, last > first)",
              "per-reward targets steer the matching score", {r: [round(v, 4) for v in c] for r, c in curves.items()},
              all(is_monotone(np.array(c), p.monotone_tol) for c in curves.values())),
        Claim("models_learn", f"sanity: every generator's GenEval colour accuracy >= {p.min_colour_acc:g} (chance "
              f"{CHANCE_COLOUR:.3f}) and the detector's all-checks accuracy on held-out clean renders >= "
              f"{p.min_detector_acc:g}",
              "every compared model learned its task", {"colour_acc": colour, "detector_overall": detector_overall},
              all(v >= p.min_colour_acc for v in colour.values()) and detector_overall >= p.min_detector_acc),
    ]
