"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Every interval is over the unit its values vary with, judged by the shared rules (paperdag.common.verdicts) under the
sample-size plan of that unit (params.yaml ``plans``): comparisons of generators are paired over the training seeds
(every method is trained on the same seeds; ``plans.seeds``, a sequential plan: its final look is judged at Pocock's
nominal level), the detectors' accuracy and the rewards' clean-minus-corrupted gaps are over held-out clean renders
(``plans.renders``). Preconditions, before a claim is judged:

- competence: every generator's GenEval accuracy beats the strongest trivial generator of the ladder (trivial.py: a
  Gaussian fitted per layout, replay of training images with the prompt's layout, nearest-neighbour retrieval by
  layout, the caption-mean image), each scored by the same evaluator on the same held-out captions; the stochastic
  rungs are drawn once per training seed, so the comparison is paired over seeds (draw s beside seed s);
- both detectors (the one behind the alignment reward, and GenEval's evaluator) read held-out clean renders above a
  stated floor (an exact binomial interval over the renders);
- the mechanism can act: each reward ranks every corruption it can observe below clean (held-out renders, each
  corruption alone, paired; an image-only reward cannot see a caption mismatch), and the cell MIRO samples toward
  (every reward in its top bin) holds a stated share of the training set (a count over that fixed set: exact);
- GenEval's evaluator is independent of the rewards (an enumeration of the rewards computed from it: exact).

"Higher on every reward" and the speed-up compare MIRO with the multi-reward baselines on every reward and with the
single-reward model on the rewards it was not trained on (on its own reward it is the specialist by design). A claim
over several parts holds when every part holds and fails only under Holm's correction over its parts (``all_of``).
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, bootstrap_ratio_ci, mean_ci, paired_diff_ci, proportion_ci
from paperdag.common.verdicts import (
    Claim,
    Judgement,
    Ladder,
    all_of,
    evidence,
    exact,
    noninferiority,
    precondition,
    superiority,
)

from .analysis import fitted_rise
from .params import ClaimParams, Plans
from .rewards import REWARDS

EVALUATOR_REWARDS: tuple[str, ...] = ()  # rewards computed by GenEval's evaluator (none: alignment uses the detector)
RUNGS = {"replay": "replay of training images with the prompt's layout",
         "gaussian": "a Gaussian fitted to the training images of the prompt's layout",
         "retrieval": "nearest-neighbour retrieval of a training image by layout",
         "caption_mean": "the caption-mean image (mean of the training images with the prompt's layout)"}


def every(parts: dict[str, Judgement]) -> Judgement:
    """``all_of`` over the parts. Where every part fails under Holm's correction, verdicts.all_of's step-down loop
    divides by zero (it runs once more after the last part); that case is the claim failing with every part, stated
    here in all_of's words."""
    try:
        return all_of(parts)
    except ZeroDivisionError:
        k, first = len(parts), next(iter(parts.values()))
        shown = "; ".join(f"{name}: {j.reason}" for name, j in list(parts.items())[:3])
        more = f"; +{k - 3} more" if k > 3 else ""
        return Judgement("fails", f"{k} parts ({k} fails; {k} fail under Holm's correction over {k} parts): "
                         f"{shown}{more}", first.rule, first.unit, min(j.n for j in parts.values()), first.plan)


def trivial_ladder(trivial: dict[str, np.ndarray]) -> tuple[Ladder, dict[str, np.ndarray]]:
    """The ladder of trivial generators from their GenEval overall per draw (one value: deterministic; one per
    training seed: drawn afresh beside each seed), and each rung's values by rung name."""
    named = {RUNGS[k]: np.asarray(v, dtype=float) for k, v in trivial.items()}
    values = {n: float(v[0]) if v.size == 1 else mean_ci(v, unit="seed") for n, v in named.items()}
    return Ladder.of("higher", values), named


def preconditions(finals: dict[str, dict[str, np.ndarray]], gaps: dict[str, dict[str, Interval]],
                  top: tuple[int, int], correct: dict[str, tuple[int, int]], trivial: dict[str, np.ndarray],
                  p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence of the generators against the ladder and of both detectors, the rewards' sanity, the all-top cell,
    the evaluator's independence."""
    ladder, rungs = trivial_ladder(trivial)
    strongest = ladder.strongest.name
    bar = np.broadcast_to(rungs[strongest], finals["miro"]["geneval_overall"].shape)
    geneval = {m: mean_ci(f["geneval_overall"], unit="seed") for m, f in finals.items()}
    beats = {m: paired_diff_ci(f["geneval_overall"], bar, unit="seed") for m, f in finals.items()}
    role = {"detector": "the detector behind the alignment reward", "evaluator": "GenEval's evaluator"}
    accuracy = {net: proportion_ci(k, n, unit="render") for net, (k, n) in correct.items()}
    share = top[0] / top[1]
    return [
        precondition("generators_beat_trivial_generators", "every generator's GenEval-like overall accuracy (object, "
                     "colour and position right) beats the strongest trivial generator's on the same held-out "
                     f"captions ({', '.join(RUNGS.values())}; paired over the {plans.seeds.n} training seeds)",
                     strongest, {m: g.rounded() for m, g in geneval.items()}
                     | {f"{m}_minus_strongest": b.rounded() for m, b in beats.items()},
                     every({m: superiority(b, what=f"{m} - {strongest} GenEval", plan=plans.seeds)
                             for m, b in beats.items()}), ladder=ladder),
        *(precondition(f"{net}_reads_clean_renders", f"{role[net]}: its all-checks accuracy on the "
                       f"{plans.renders.n} held-out clean renders is above {p.min_detector_acc:g} (chance 1/216; exact "
                       "binomial interval)", f"the stated floor {p.min_detector_acc:g}",
                       {"overall": accuracy[net].rounded(), "renders": correct[net][1],
                        "required": p.min_detector_acc},
                       superiority(accuracy[net], reference=p.min_detector_acc, what=f"{net} accuracy",
                                   plan=plans.renders)) for net in correct),
        *(precondition(f"{r}_ranks_corruptions_below_clean", f"the {r} reward is higher on the {plans.renders.n} "
                       "held-out clean renders than on the same renders with each corruption it can observe alone "
                       f"({', '.join(gaps[r])}; paired interval)", "the held-out clean renders",
                       {k: g.rounded() for k, g in gaps[r].items()},
                       every({k: superiority(g, what=f"clean - {k}", plan=plans.renders) for k, g in gaps[r].items()}))
          for r in REWARDS),
        precondition("all_top_cell_populated", f"the cell MIRO samples toward (every reward in its top bin) holds "
                     f">= {p.top_cell_min:g} of the training set", "the training set's share in that cell",
                     {"share": round(share, 5), "images": top[0], "of": top[1], "required": p.top_cell_min},
                     exact(top[0] >= p.top_cell_min * top[1], f"{top[0]} of the {top[1]} training images ({share:.4f}) "
                           f"vs {p.top_cell_min:g}: a count over the set every generator trains on",
                           basis="fixed set")),
        precondition("evaluator_independent_of_rewards", "GenEval's checks come from a model that no reward is "
                     "computed from", "the rewards the generators are conditioned on",
                     {"evaluator": "a second detector trained on clean renders disjoint from the reward detector's",
                      "rewards_from_it": list(EVALUATOR_REWARDS)},
                     exact(not EVALUATOR_REWARDS, f"rewards computed from the evaluator: {list(EVALUATOR_REWARDS)} (a "
                           "reward computed by the evaluator would let a reward-conditioned method be scored by the "
                           "model it was steered by)", basis="enumeration")),
    ]


def claims(finals: dict[str, dict[str, np.ndarray]], speedup: dict[str, dict[str, np.ndarray]],
           control: dict[str, np.ndarray], levels: dict[str, np.ndarray], reward_std: dict[str, float],
           gaps: dict[str, dict[str, Interval]], top: tuple[int, int], correct: dict[str, tuple[int, int]],
           trivial: dict[str, np.ndarray], data_diversity: float, single_reward: str,
           guided: dict[str, dict[str, np.ndarray]], p: ClaimParams, plans: Plans) -> list[Claim]:
    """``finals[method][score]``: per-seed final scores; ``speedup[baseline][reward]``: per-seed T / s* on that
    reward ("aggregate" too, reported); ``control[reward]``: seeds x target levels (``levels[reward]``) of that
    reward under MIRO; ``reward_std``: each reward's std over the training data; ``gaps``: clean minus corrupted
    reward intervals over held-out renders; ``top``: (training images with every reward in its top bin, training
    images); ``correct``: (held-out clean renders read right on every check, renders) of the reward detector and of
    the evaluator; ``trivial[rung]``: the trivial generators' GenEval overall (trivial.py), one value per training
    seed for a drawn rung, one for a deterministic one; ``data_diversity``: the diversity of clean renders of the
    evaluation prompts (the data's own); ``single_reward``: the single-reward baseline's reward;
    ``guided[score][mode]``: per-seed aggregate reward and GenEval overall of MIRO's samples under each guidance mode
    (guidance.py)."""
    miro, baselines, seeds = finals["miro"], [m for m in finals if m != "miro"], plans.seeds

    def diff(b: str, key: str) -> Interval:
        return paired_diff_ci(miro[key], finals[b][key], unit="seed")

    def judged(b: str) -> tuple[str, ...]:  # the single-reward model is not judged on its own reward
        return tuple(r for r in REWARDS if not (b == "single" and r == single_reward))

    rewards = {b: {r: diff(b, f"reward_{r}") for r in judged(b)} for b in baselines}
    div = {b: bootstrap_ratio_ci(miro["diversity"], finals[b]["diversity"], unit="seed") for b in baselines}
    fast = {b: {r: mean_ci(speedup[b][r], unit="seed") for r in ("aggregate", *judged(b))} for b in baselines}
    gen = {b: diff(b, "geneval_overall") for b in baselines}
    reward_part = paired_diff_ci(guided["aggregate"]["caption_reward"], guided["aggregate"]["caption"], unit="seed")
    rise = {r: mean_ci(fitted_rise(levels[r], control[r], reward_std[r]), unit="seed") for r in REWARDS}
    sane = [f"{r}_ranks_corruptions_below_clean" for r in REWARDS]
    competent = ["generators_beat_trivial_generators", *(f"{net}_reads_clean_renders" for net in correct)]
    level = f"{seeds.confidence:.1%} interval of the paired seed difference"
    return [
        *preconditions(finals, gaps, top, correct, trivial, p, plans),
        evidence("miro_higher_every_reward", "at equal training steps MIRO's mean reward is higher than the "
                 f"multi-reward baselines' on each of the {len(REWARDS)} rewards and than the single-reward model's "
                 f"on the rewards it was not trained on ({level} above 0; Holm over the parts for fails)",
                 "MIRO beats single-reward and filtering baselines on every preference score (GenEval, "
                 "PickScore, ImageReward, HPSv2; ~1B-param text-to-image model)",
                 {b: {r: i.rounded() for r, i in v.items()} for b, v in rewards.items()},
                 every({f"{b}/{r}": superiority(i, what=f"miro - {b} ({r})", plan=seeds)
                         for b, v in rewards.items() for r, i in v.items()}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("miro_keeps_diversity", f"MIRO's within-prompt diversity (spread of L2-normalised evaluator "
                 f"features) is at least {1 - p.diversity_tol:g}x every baseline's (ratio of the seeds' mean "
                 "diversities, paired bootstrap over seeds)", "diversity preserved vs single-reward optimisation",
                 {b: v.rounded() for b, v in div.items()} | {"data": round(data_diversity, 4)}
                 | {f"{m}_over_data": round(float(f["diversity"].mean() / data_diversity), 4)
                    for m, f in finals.items()},
                 every({b: noninferiority(v, margin=p.diversity_tol, direction="above", reference=1.0,
                                           what=f"diversity miro / {b}", plan=seeds) for b, v in div.items()}),
                 requires=competent),
        evidence("training_speedup", "per reward, MIRO reaches each baseline's final value of that reward before the "
                 "end of training, seed by seed (the single-reward model on the rewards it was not trained on): the "
                 "interval of the speed-up T / s* over seeds lies above 1 (0 = never reached; the checkpoint grid "
                 "caps it); the aggregate is reported",
                 "up to 19x faster to reach the baselines' quality (per reward)",
                 {b: {r: i.rounded() for r, i in v.items()} for b, v in fast.items()},
                 every({f"{b}/{r}": superiority(i, reference=1.0, what=f"speed-up over {b} ({r})", plan=seeds)
                         for b, v in fast.items() for r, i in v.items() if r != "aggregate"}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("geneval_higher", "GenEval-like compositional accuracy (object, colour and position all right by the "
                 f"independent evaluator) is higher for MIRO than for every baseline ({level} above 0)",
                 "GenEval 0.75 overall, state of the art at its scale",
                 {"miro": mean_ci(miro["geneval_overall"], unit="seed").rounded()}
                 | {f"miro_minus_{b}": i.rounded() for b, i in gen.items()},
                 every({b: superiority(i, what=f"miro - {b} GenEval", plan=seeds) for b, i in gen.items()}),
                 requires=[*competent, "evaluator_independent_of_rewards"]),
        evidence("reward_guidance_adds", "MIRO's sampler (negative = empty caption and lowest reward bins) gives a "
                 "higher aggregate reward than the same guidance with the rewards held at the top bins in the "
                 f"negative (caption-only guidance), from the same noise ({level} above 0); the reward-only "
                 "negative (the caption kept, lowest bins), the unguided model and each mode's GenEval are reported",
                 "MIRO guides with low-reward negatives (no separate number)",
                 {"caption_reward_minus_caption": reward_part.rounded()}
                 | {f"{k}_{mode}": mean_ci(v, unit="seed").rounded() for k, by in guided.items()
                    for mode, v in by.items()},
                 superiority(reward_part, what="aggregate (caption_reward) - (caption) guidance", plan=seeds),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        *(evidence(f"controllable_{r}", f"raising the {r} target from its lowest to its top bin (others at top) "
                   f"raises the {r} reward under MIRO by more than {p.control_floor:g} of its std over the training "
                   "data (per-seed least-squares rise over the levels, interval over seeds)", "per-reward targets "
                   "steer the matching score", {"rise_in_data_std": rise[r].rounded(),
                                                "curve": [round(float(v), 4) for v in control[r].mean(0)]},
                   superiority(rise[r], margin=p.control_floor, what=f"{r} rise / std", plan=seeds),
                   requires=[competent[0], f"{r}_ranks_corruptions_below_clean"]) for r in REWARDS),
    ]
