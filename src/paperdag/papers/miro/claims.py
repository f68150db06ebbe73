"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Across-seed comparisons are paired (every method is trained on the same seeds) and use Student-t intervals
(paperdag.common.stats) at level ``confidence``, judged by the shared rules (paperdag.common.verdicts).
Preconditions, before a reward claim is judged:

- competence: every generator's GenEval accuracy beats the caption-mean image (trivial.py), and the detector that
  backs the alignment reward and GenEval reads clean renders;
- the mechanism can act: each reward ranks every corruption it can observe below clean (training rows; an
  image-only reward cannot see a caption mismatch), and the cell MIRO samples toward (every reward in its top bin)
  holds a stated share of the data;
- GenEval's evaluator is independent of the rewards (here it is not: the alignment reward is the same detector).
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, mean_ci, paired_diff_ci
from paperdag.common.verdicts import (
    Claim,
    all_of,
    evidence,
    noninferiority,
    precondition,
    superiority,
)

from .analysis import fitted_rise
from .params import ClaimParams
from .rewards import REWARDS

DETECTOR_REWARDS = ("alignment",)  # rewards computed by the detector that GenEval also uses
TRIVIAL = "the caption-mean image (mean of the training images with the prompt's layout; trivial.py)"


def preconditions(finals: dict[str, dict[str, np.ndarray]], gaps: dict[str, dict[str, Interval]],
                  top_share: float, detector: float, trivial_geneval: float, p: ClaimParams) -> list[Claim]:
    """Competence of the generators and of the detector, the rewards' sanity, the all-top cell, the evaluator."""
    geneval = {m: mean_ci(f["geneval_overall"], p.confidence) for m, f in finals.items()}
    return [
        precondition("generators_beat_caption_mean", "every generator's GenEval-like overall accuracy (object, "
                     "colour and position right) beats the caption-mean image's on the same prompts", TRIVIAL,
                     {"trivial": round(trivial_geneval, 4)} | {m: g.rounded() for m, g in geneval.items()},
                     all_of({m: superiority(g, reference=trivial_geneval, what=f"{m} GenEval")
                               for m, g in geneval.items()})),
        precondition("detector_reads_clean_renders", f"the detector's all-checks accuracy on held-out clean renders "
                     f"is above {p.min_detector_acc:g} (chance 1/216)", f"the stated floor {p.min_detector_acc:g}",
                     {"detector_overall": round(detector, 4), "required": p.min_detector_acc},
                     detector > p.min_detector_acc, f"one detector on a fixed held-out set: {detector:.4f} vs "
                     f"{p.min_detector_acc:g}"),
        *(precondition(f"{r}_ranks_corruptions_below_clean", f"the {r} reward is higher on clean training rows "
                       f"than on rows with each corruption it can observe alone ({', '.join(gaps[r])}; Welch CI)",
                       "the clean training rows (no corruption)", {k: g.rounded() for k, g in gaps[r].items()},
                       all_of({k: superiority(g, what=f"clean - {k}") for k, g in gaps[r].items()}))
          for r in REWARDS),
        precondition("all_top_cell_populated", f"the cell MIRO samples toward (every reward in its top bin) holds "
                     f">= {p.top_cell_min:g} of the training data", "the training data's share in that cell",
                     {"share": round(top_share, 5), "required": p.top_cell_min}, top_share >= p.top_cell_min,
                     f"a count over the fixed training set: {top_share:.4f} vs {p.top_cell_min:g}"),
        precondition("evaluator_independent_of_rewards", "GenEval's checks come from a model that no reward is "
                     "computed from", "the rewards the generators are conditioned on",
                     {"evaluator": "detector.py", "rewards_from_it": list(DETECTOR_REWARDS)}, not DETECTOR_REWARDS,
                     "the alignment reward is the GenEval detector's probability: a reward-conditioned method is "
                     "scored by the model it was steered by"),
    ]


def claims(finals: dict[str, dict[str, np.ndarray]], speedup: dict[str, np.ndarray],
           control: dict[str, np.ndarray], levels: dict[str, np.ndarray], reward_std: dict[str, float],
           gaps: dict[str, dict[str, Interval]], top_share: float, detector: float,
           trivial_geneval: float, p: ClaimParams) -> list[Claim]:
    """``finals[method][score]``: per-seed final scores; ``speedup[baseline]``: per-seed T / s* on the aggregate
    reward; ``control[reward]``: seeds x target levels (``levels[reward]``) of that reward under MIRO;
    ``reward_std``: each reward's std over the training data; ``gaps``: clean minus corrupted reward intervals;
    ``top_share``: the training share with every reward in its top bin; ``detector``: the all-checks accuracy on
    held-out clean renders; ``trivial_geneval``: the caption-mean image's GenEval overall."""
    miro, baselines = finals["miro"], [m for m in finals if m != "miro"]

    def diff(b: str, key: str) -> Interval:
        return paired_diff_ci(miro[key], finals[b][key], p.confidence)

    rewards = {b: {r: diff(b, f"reward_{r}") for r in REWARDS} for b in baselines}
    div = {b: mean_ci(miro["diversity"] / finals[b]["diversity"], p.confidence) for b in baselines}
    fast = {b: mean_ci(v, p.confidence) for b, v in speedup.items()}
    gen = {b: diff(b, "geneval_overall") for b in baselines}
    rise = {r: mean_ci(fitted_rise(levels[r], control[r], reward_std[r]), p.confidence) for r in REWARDS}
    sane = [f"{r}_ranks_corruptions_below_clean" for r in REWARDS]
    competent = ["generators_beat_caption_mean", "detector_reads_clean_renders"]
    return [
        *preconditions(finals, gaps, top_share, detector, trivial_geneval, p),
        evidence("miro_higher_every_reward", "at equal training steps MIRO's mean reward is higher than every "
                 f"baseline's on each of the {len(REWARDS)} rewards ({p.confidence:.0%} CI of the paired seed "
                 "difference above 0)", "MIRO beats single-reward and filtering baselines on every preference "
                 "score (GenEval, PickScore, ImageReward, HPSv2; ~1B-param text-to-image model)",
                 {b: {r: i.rounded() for r, i in v.items()} for b, v in rewards.items()},
                 all_of({f"{b}/{r}": superiority(i, what=f"miro - {b} ({r})")
                           for b, v in rewards.items() for r, i in v.items()}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("miro_keeps_diversity", f"MIRO's within-prompt diversity (detector-feature spread) is at least "
                 f"{1 - p.diversity_tol:g}x every baseline's (per-seed ratio, CI)",
                 "diversity preserved vs single-reward optimisation", {b: v.rounded() for b, v in div.items()},
                 all_of({b: noninferiority(v, margin=p.diversity_tol, direction="above", reference=1.0,
                                             what=f"diversity miro / {b}") for b, v in div.items()}),
                 requires=competent),
        evidence("training_speedup", "MIRO's aggregate reward (mean over the 5 rewards of z, the reward standardised "
                 "over the training data) reaches each baseline's final value before the end of training, seed by "
                 "seed: the CI of the speed-up T / s* lies above 1 (0 = never reached)",
                 "up to 19x faster to reach the baselines' quality", {b: v.rounded() for b, v in fast.items()},
                 all_of({b: superiority(v, reference=1.0, what=f"speed-up over {b}") for b, v in fast.items()}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("geneval_higher", "GenEval-like compositional accuracy (object, colour and position all right by the "
                 "detector) is higher for MIRO than for every baseline (paired CI above 0)",
                 "GenEval 0.75 overall, state of the art at its scale",
                 {"miro": mean_ci(miro["geneval_overall"], p.confidence).rounded()}
                 | {f"miro_minus_{b}": i.rounded() for b, i in gen.items()},
                 all_of({b: superiority(i, what=f"miro - {b} GenEval") for b, i in gen.items()}),
                 requires=[*competent, "evaluator_independent_of_rewards"]),
        *(evidence(f"controllable_{r}", f"raising the {r} target from its lowest to its top bin (others at top) "
                   f"raises the {r} reward under MIRO by more than {p.control_floor:g} of its std over the training "
                   "data (per-seed least-squares rise over the levels, CI)", "per-reward targets steer the "
                   "matching score", {"rise_in_data_std": rise[r].rounded(),
                                      "curve": [round(float(v), 4) for v in control[r].mean(0)]},
                   superiority(rise[r], margin=p.control_floor, sesoi=p.control_floor, what=f"{r} rise / std"),
                   requires=[competent[0], f"{r}_ranks_corruptions_below_clean"]) for r in REWARDS),
    ]

