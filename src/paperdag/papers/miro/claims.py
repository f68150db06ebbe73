"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Across-seed comparisons are paired (every method is trained on the same seeds) and use Student-t intervals
(paperdag.common.stats) at level ``confidence``, judged by the shared rules (paperdag.common.verdicts).
Preconditions, before a claim is judged:

- competence: every generator's GenEval accuracy beats the caption-mean image (trivial.py), and both detectors (the
  one behind the alignment reward, and GenEval's evaluator) read held-out clean renders;
- the mechanism can act: each reward ranks every corruption it can observe below clean (held-out renders, each
  corruption alone, paired; an image-only reward cannot see a caption mismatch), and the cell MIRO samples toward
  (every reward in its top bin) holds a stated share of the data;
- GenEval's evaluator is independent of the rewards (a second detector trained on disjoint renders).

"Higher on every reward" and the speed-up compare MIRO with the multi-reward baselines on every reward and with the
single-reward model on the rewards it was not trained on (on its own reward it is the specialist by design).
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

EVALUATOR_REWARDS: tuple[str, ...] = ()  # rewards computed by GenEval's evaluator (none: alignment uses the detector)
TRIVIAL = "the caption-mean image (mean of the training images with the prompt's layout; trivial.py)"


def preconditions(finals: dict[str, dict[str, np.ndarray]], gaps: dict[str, dict[str, Interval]],
                  top_share: float, accuracy: dict[str, float], trivial_geneval: float,
                  p: ClaimParams) -> list[Claim]:
    """Competence of the generators and of both detectors, the rewards' sanity, the all-top cell, the evaluator."""
    geneval = {m: mean_ci(f["geneval_overall"], p.confidence) for m, f in finals.items()}
    role = {"detector": "the detector behind the alignment reward", "evaluator": "GenEval's evaluator"}
    return [
        precondition("generators_beat_caption_mean", "every generator's GenEval-like overall accuracy (object, "
                     "colour and position right) beats the caption-mean image's on the same prompts", TRIVIAL,
                     {"trivial": round(trivial_geneval, 4)} | {m: g.rounded() for m, g in geneval.items()},
                     all_of({m: superiority(g, reference=trivial_geneval, what=f"{m} GenEval")
                               for m, g in geneval.items()})),
        *(precondition(f"{net}_reads_clean_renders", f"{role[net]}: its all-checks accuracy on held-out clean "
                       f"renders is above {p.min_detector_acc:g} (chance 1/216)", f"the stated floor "
                       f"{p.min_detector_acc:g}", {"overall": round(acc, 4), "required": p.min_detector_acc},
                       acc > p.min_detector_acc, f"one network on a fixed held-out set: {acc:.4f} vs "
                       f"{p.min_detector_acc:g}") for net, acc in accuracy.items()),
        *(precondition(f"{r}_ranks_corruptions_below_clean", f"the {r} reward is higher on held-out clean renders "
                       f"than on the same renders with each corruption it can observe alone ({', '.join(gaps[r])}; "
                       "paired CI)", "the held-out clean renders", {k: g.rounded() for k, g in gaps[r].items()},
                       all_of({k: superiority(g, what=f"clean - {k}") for k, g in gaps[r].items()}))
          for r in REWARDS),
        precondition("all_top_cell_populated", f"the cell MIRO samples toward (every reward in its top bin) holds "
                     f">= {p.top_cell_min:g} of the training data", "the training data's share in that cell",
                     {"share": round(top_share, 5), "required": p.top_cell_min}, top_share >= p.top_cell_min,
                     f"a count over the fixed training set: {top_share:.4f} vs {p.top_cell_min:g}"),
        precondition("evaluator_independent_of_rewards", "GenEval's checks come from a model that no reward is "
                     "computed from", "the rewards the generators are conditioned on",
                     {"evaluator": "a second detector trained on clean renders disjoint from the reward detector's",
                      "rewards_from_it": list(EVALUATOR_REWARDS)}, not EVALUATOR_REWARDS,
                     "a reward computed by the evaluator would let a reward-conditioned method be scored by the "
                     "model it was steered by"),
    ]


def claims(finals: dict[str, dict[str, np.ndarray]], speedup: dict[str, dict[str, np.ndarray]],
           control: dict[str, np.ndarray], levels: dict[str, np.ndarray], reward_std: dict[str, float],
           gaps: dict[str, dict[str, Interval]], top_share: float, accuracy: dict[str, float],
           trivial_geneval: float, data_diversity: float, single_reward: str, guided: dict[str, dict[str, np.ndarray]],
           p: ClaimParams) -> list[Claim]:
    """``finals[method][score]``: per-seed final scores; ``speedup[baseline][reward]``: per-seed T / s* on that
    reward ("aggregate" too, reported); ``control[reward]``: seeds x target levels (``levels[reward]``) of that
    reward under MIRO; ``reward_std``: each reward's std over the training data; ``gaps``: clean minus corrupted
    reward intervals; ``top_share``: the training share with every reward in its top bin; ``accuracy``: the
    all-checks accuracy of the reward detector and of the evaluator on held-out clean renders; ``trivial_geneval``:
    the caption-mean image's GenEval overall; ``data_diversity``: the diversity of clean renders of the evaluation
    prompts (the data's own); ``single_reward``: the single-reward baseline's reward; ``guided[score][mode]``:
    per-seed aggregate reward and GenEval overall of MIRO's samples under each guidance mode (guidance.py)."""
    miro, baselines = finals["miro"], [m for m in finals if m != "miro"]

    def diff(b: str, key: str) -> Interval:
        return paired_diff_ci(miro[key], finals[b][key], p.confidence)

    def judged(b: str) -> tuple[str, ...]:  # the single-reward model is not judged on its own reward
        return tuple(r for r in REWARDS if not (b == "single" and r == single_reward))

    rewards = {b: {r: diff(b, f"reward_{r}") for r in judged(b)} for b in baselines}
    div = {b: mean_ci(miro["diversity"] / finals[b]["diversity"], p.confidence) for b in baselines}
    fast = {b: {r: mean_ci(speedup[b][r], p.confidence) for r in ("aggregate", *judged(b))} for b in baselines}
    gen = {b: diff(b, "geneval_overall") for b in baselines}
    reward_part = paired_diff_ci(guided["aggregate"]["caption_reward"], guided["aggregate"]["caption"], p.confidence)
    rise = {r: mean_ci(fitted_rise(levels[r], control[r], reward_std[r]), p.confidence) for r in REWARDS}
    sane = [f"{r}_ranks_corruptions_below_clean" for r in REWARDS]
    competent = ["generators_beat_caption_mean", *(f"{net}_reads_clean_renders" for net in accuracy)]
    return [
        *preconditions(finals, gaps, top_share, accuracy, trivial_geneval, p),
        evidence("miro_higher_every_reward", "at equal training steps MIRO's mean reward is higher than the "
                 f"multi-reward baselines' on each of the {len(REWARDS)} rewards and than the single-reward model's "
                 f"on the rewards it was not trained on ({p.confidence:.0%} CI of the paired seed difference above "
                 "0)", "MIRO beats single-reward and filtering baselines on every preference score (GenEval, "
                 "PickScore, ImageReward, HPSv2; ~1B-param text-to-image model)",
                 {b: {r: i.rounded() for r, i in v.items()} for b, v in rewards.items()},
                 all_of({f"{b}/{r}": superiority(i, what=f"miro - {b} ({r})")
                           for b, v in rewards.items() for r, i in v.items()}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("miro_keeps_diversity", f"MIRO's within-prompt diversity (spread of L2-normalised evaluator "
                 f"features) is at least {1 - p.diversity_tol:g}x every baseline's (per-seed ratio, CI)",
                 "diversity preserved vs single-reward optimisation",
                 {b: v.rounded() for b, v in div.items()} | {"data": round(data_diversity, 4)}
                 | {f"{m}_over_data": round(float(f["diversity"].mean() / data_diversity), 4)
                    for m, f in finals.items()},
                 all_of({b: noninferiority(v, margin=p.diversity_tol, direction="above", reference=1.0,
                                             what=f"diversity miro / {b}") for b, v in div.items()}),
                 requires=competent),
        evidence("training_speedup", "per reward, MIRO reaches each baseline's final value of that reward before the "
                 "end of training, seed by seed (the single-reward model on the rewards it was not trained on): the "
                 "CI of the speed-up T / s* lies above 1 (0 = never reached); the aggregate is reported",
                 "up to 19x faster to reach the baselines' quality (per reward)",
                 {b: {r: i.rounded() for r, i in v.items()} for b, v in fast.items()},
                 all_of({f"{b}/{r}": superiority(i, reference=1.0, what=f"speed-up over {b} ({r})")
                           for b, v in fast.items() for r, i in v.items() if r != "aggregate"}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("geneval_higher", "GenEval-like compositional accuracy (object, colour and position all right by the "
                 "independent evaluator) is higher for MIRO than for every baseline (paired CI above 0)",
                 "GenEval 0.75 overall, state of the art at its scale",
                 {"miro": mean_ci(miro["geneval_overall"], p.confidence).rounded()}
                 | {f"miro_minus_{b}": i.rounded() for b, i in gen.items()},
                 all_of({b: superiority(i, what=f"miro - {b} GenEval") for b, i in gen.items()}),
                 requires=[*competent, "evaluator_independent_of_rewards"]),
        evidence("reward_guidance_adds", "MIRO's sampler (negative = empty caption and lowest reward bins) gives a "
                 "higher aggregate reward than the same guidance with the rewards held at the top bins in the "
                 "negative (caption-only guidance), from the same noise (paired CI above 0); the reward-only "
                 "negative (the caption kept, lowest bins), the unguided model and each mode's GenEval are reported",
                 "MIRO guides with low-reward negatives (no separate number)",
                 {"caption_reward_minus_caption": reward_part.rounded()}
                 | {f"{k}_{mode}": mean_ci(v, p.confidence).rounded() for k, by in guided.items()
                    for mode, v in by.items()},
                 superiority(reward_part, what="aggregate (caption_reward) - (caption) guidance"),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        *(evidence(f"controllable_{r}", f"raising the {r} target from its lowest to its top bin (others at top) "
                   f"raises the {r} reward under MIRO by more than {p.control_floor:g} of its std over the training "
                   "data (per-seed least-squares rise over the levels, CI)", "per-reward targets steer the "
                   "matching score", {"rise_in_data_std": rise[r].rounded(),
                                      "curve": [round(float(v), 4) for v in control[r].mean(0)]},
                   superiority(rise[r], margin=p.control_floor, sesoi=p.control_floor, what=f"{r} rise / std"),
                   requires=[competent[0], f"{r}_ranks_corruptions_below_clean"]) for r in REWARDS),
    ]

