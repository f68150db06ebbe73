"""The paper's claims restated for our scale: a pure function from measured numbers to claims of three kinds.

Every interval is over the unit its values vary with, judged by the shared rules (paperdag.common.verdicts) under the
sample-size plan of that unit (params.yaml ``plans``): comparisons of generators are paired over the training seeds
(every method is trained on the same seeds; ``plans.seeds``, a sequential plan: its final look is judged at Pocock's
nominal level), the detectors' accuracy and the rewards' clean-minus-corrupted gaps are over held-out clean renders
(``plans.renders``). Preconditions, before a claim is judged:

- competence: every generator's GenEval accuracy exceeds a declared fraction (``replay_fraction``) of its own
  replay's (trivial.py: training images of the prompt's layout nearest to what the generator is conditioned toward:
  base all, filter the kept rows, single its reward's top bin, MIRO the all-top cell), paired over seeds (own-replay
  draw s beside seed s); the caption-mean image is the rung below, the clean replay (uncorrupted images of the
  layout) and the other trivial generators (all-data replay, fitted Gaussian, retrieval) are reported beside. Each
  claim that reads a generator's images requires that generator's competence;
- both detectors (the one behind the alignment reward, and GenEval's evaluator) read held-out clean renders above a
  stated floor (an exact binomial interval over the renders);
- the mechanism can act: each reward ranks every corruption it can observe below clean (held-out renders, each
  corruption alone, paired; an image-only reward cannot see a caption mismatch), and the cell MIRO samples toward
  (every reward in its top bin) holds a stated share of the training set (a count over that fixed set: exact);
- GenEval's evaluator is independent of the rewards (an enumeration of the rewards computed from it: exact).

Every claim on MIRO's samples names the sampler it judges (``sampler``: the paper's, one for all claims: guidance
weight, positive and negative conditions, bins, Euler steps); the caption-guided MIRO (negative: empty caption,
rewards kept at the top) is reported beside ``geneval_higher``, with the all-top cell's replay.

The speed-up is read per seed from the checkpoint grid (analysis.py): MIRO "reaches" a baseline when its curve meets
that seed's baseline final value at some checkpoint s* <= T, and is faster when s* < T. A part holds when the share
of seeds with s* < T has an exact binomial interval above ``speedup_share``. The log speed-up log(T / s*) is reported
among the seeds that reach it, with its censoring: a seed that never reaches it is censored below 1 (counted in the
share, not in the log mean), one that reaches it at the first checkpoint is censored above at the grid's cap.

"Higher on every reward" and the speed-up compare MIRO with the multi-reward baselines on every reward and with the
single-reward model on the rewards it was not trained on (on its own reward it is the specialist by design). A claim
over several parts holds when every part holds and fails only under Holm's correction over its parts (``all_of``).
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, bootstrap_ratio_ci, mean_ci, paired_diff_ci, proportion_ci
from paperdag.common.verdicts import (
    Claim,
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


def sampler_named(guidance: float, n_steps: int, per_prompt: int, single_reward: str) -> dict[str, object]:
    """The paper's sampler, the one every claim on MIRO's samples judges (flow.guided_velocity, methods.py)."""
    return {"mode": "caption_reward", "guidance": guidance, "euler_steps": n_steps, "per_prompt": per_prompt,
            "positive": "(caption, every reward target at its top bin 1)",
            "negative": "(empty caption, every reward at its lowest bin 0)",
            "baselines": f"base and filter: classifier-free guidance at the same w against the empty caption; single: "
                         f"(caption, {single_reward} at 1) against (empty caption, {single_reward} at 0)"}


def _said(sampler: dict[str, object]) -> str:
    return (f"MIRO sampled with v(pos) + w (v(pos) - v(neg)), w = {sampler['guidance']:g}, pos = "
            f"{sampler['positive']}, neg = {sampler['negative']}, {sampler['euler_steps']} Euler steps")


def _ratio(a: np.ndarray, b: np.ndarray) -> float | None:
    """mean(a) / mean(b) rounded (reported beside a verdict, never judged); None where mean(b) is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.float64(np.mean(a)) / np.float64(np.mean(b))
    return round(float(r), 4) if np.isfinite(r) else None


def competence(finals: dict[str, dict[str, np.ndarray]], own: dict[str, np.ndarray], cover: dict[str, float],
               targets: dict[str, str], trivial: dict[str, np.ndarray], p: ClaimParams, plans: Plans) -> list[Claim]:
    """Per generator: its GenEval against ``replay_fraction`` x its own replay (``own[m]``, one draw per seed), the
    caption-mean image the rung below; clean replay (``own["clean"]``) and the other trivial rungs beside."""
    f, out = p.replay_fraction, []
    beside = {f"{k}_replay" if k == "clean" else k: mean_ci(v, unit="seed").rounded() if v.size > 1
              else round(float(v[0]), 4) for k, v in (("clean", own["clean"]), *trivial.items())}
    for m, fin in finals.items():
        gen = fin["geneval_overall"]
        rungs = {f"{f:g} x {m}'s own replay ({targets[m]})": f * own[m], RUNGS["caption_mean"]: trivial["caption_mean"]}
        ladder = Ladder.of("higher", {n: float(v[0]) if v.size == 1 else mean_ci(v, unit="seed")
                                     for n, v in rungs.items()})
        bar = np.broadcast_to(rungs[ladder.strongest.name], gen.shape)
        d = paired_diff_ci(gen, bar, unit="seed")
        out.append(precondition(
            f"{m}_reaches_own_replay", f"{m}'s GenEval-like overall accuracy on the held-out captions exceeds {f:g} "
            f"of its own replay's (training images of the caption's layout from {targets[m]}; paired over the "
            f"{plans.seeds.n} training seeds); the caption-mean image is the rung below, the clean replay beside",
            ladder.strongest.name,
            {"geneval": mean_ci(gen, unit="seed").rounded(), "own_replay": mean_ci(own[m], unit="seed").rounded(),
             "own_replay_exact_cover": round(cover[m], 4), "fraction": f,
             "over_own_replay": _ratio(gen, own[m]),
             "minus_bar": d.rounded()} | beside,
            superiority(d, what=f"{m} - {ladder.strongest.name} GenEval", plan=plans.seeds), ladder=ladder))
    return out


def preconditions(finals: dict[str, dict[str, np.ndarray]], gaps: dict[str, dict[str, Interval]],
                  top: tuple[int, int], correct: dict[str, tuple[int, int]], trivial: dict[str, np.ndarray],
                  own: dict[str, np.ndarray], cover: dict[str, float], targets: dict[str, str],
                  p: ClaimParams, plans: Plans) -> list[Claim]:
    """Competence of the generators against their own replay and of both detectors, the rewards' sanity, the
    all-top cell, the evaluator's independence."""
    role = {"detector": "the detector behind the alignment reward", "evaluator": "GenEval's evaluator"}
    accuracy = {net: proportion_ci(k, n, unit="render") for net, (k, n) in correct.items()}
    share = top[0] / top[1]
    return [
        *competence(finals, own, cover, targets, trivial, p, plans),
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
                       all_of({k: superiority(g, what=f"clean - {k}", plan=plans.renders) for k, g in gaps[r].items()}))
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


def speedup_part(v: np.ndarray, cap: float) -> tuple[Interval, dict[str, object]]:
    """Per-seed speed-ups ``v`` = T / s* (0: never reached; ``cap``: reached at the grid's first checkpoint): the
    exact binomial interval of the share of seeds with s* < T (v > 1), and what is reported beside it: the log
    speed-up among the seeds that reach the baseline (v > 0) with the censoring of each end."""
    n, reached = len(v), v > 0
    faster = int((v > 1).sum())
    logs = np.log(v[reached])
    among = (mean_ci(logs, unit="seed").rounded() if logs.size >= 2
             else round(float(logs[0]), 4) if logs.size else None)
    return proportion_ci(faster, n, unit="seed"), {
        "faster_seeds": faster, "seeds": n, "reached_seeds": int(reached.sum()),
        "never_reached": int(n - reached.sum()), "at_cap": int(np.isclose(v, cap).sum()),
        "log_speedup_among_reached": among,
        "speedup_among_reached_geomean": round(float(np.exp(logs.mean())), 4) if logs.size else None}


def claims(finals: dict[str, dict[str, np.ndarray]], speedup: dict[str, dict[str, np.ndarray]], speed_cap: float,
           control: dict[str, np.ndarray], levels: dict[str, np.ndarray], reward_std: dict[str, float],
           gaps: dict[str, dict[str, Interval]], top: tuple[int, int], correct: dict[str, tuple[int, int]],
           trivial: dict[str, np.ndarray], own: dict[str, np.ndarray], cover: dict[str, float],
           targets: dict[str, str], data_diversity: float, single_reward: str,
           guided: dict[str, dict[str, np.ndarray]], sampler: dict[str, object], p: ClaimParams,
           plans: Plans) -> list[Claim]:
    """``finals[method][score]``: per-seed final scores; ``speedup[baseline][reward]``: per-seed T / s* on that
    reward ("aggregate" too, reported), ``speed_cap`` the largest the checkpoint grid measures; ``control[reward]``:
    seeds x target levels (``levels[reward]``) of that reward under MIRO; ``reward_std``: each reward's std over the
    training data; ``gaps``: clean minus corrupted reward intervals over held-out renders; ``top``: (training images
    with every reward in its top bin, training images); ``correct``: (held-out clean renders read right on every
    check, renders) of the reward detector and of the evaluator; ``trivial[rung]``: the trivial generators' GenEval
    overall (trivial.py), one value per training seed for a drawn rung, one for a deterministic one;
    ``own[method]``: the GenEval of each generator's own replay, one draw per seed (``own["clean"]``: the clean
    replay), ``cover[method]`` the share of captions whose layout holds an image at that generator's target and
    ``targets[method]`` the target in words; ``data_diversity``: the diversity of clean renders of the evaluation
    prompts (the data's own); ``single_reward``: the single-reward baseline's reward; ``guided[score][mode]``:
    per-seed aggregate reward and GenEval overall of MIRO's samples under each guidance mode (guidance.py);
    ``sampler``: the sampler every claim on MIRO's samples judges (``sampler_named``)."""
    miro, baselines, seeds = finals["miro"], [m for m in finals if m != "miro"], plans.seeds

    def diff(b: str, key: str) -> Interval:
        return paired_diff_ci(miro[key], finals[b][key], unit="seed")

    def judged(b: str) -> tuple[str, ...]:  # the single-reward model is not judged on its own reward
        return tuple(r for r in REWARDS if not (b == "single" and r == single_reward))

    rewards = {b: {r: diff(b, f"reward_{r}") for r in judged(b)} for b in baselines}
    div = {b: bootstrap_ratio_ci(miro["diversity"], finals[b]["diversity"], unit="seed") for b in baselines}
    fast = {b: {r: speedup_part(speedup[b][r], speed_cap) for r in ("aggregate", *judged(b))} for b in baselines}
    gen = {b: diff(b, "geneval_overall") for b in baselines}
    reward_part = paired_diff_ci(guided["aggregate"]["caption_reward"], guided["aggregate"]["caption"], unit="seed")
    rise = {r: mean_ci(fitted_rise(levels[r], control[r], reward_std[r]), unit="seed") for r in REWARDS}
    sane = [f"{r}_ranks_corruptions_below_clean" for r in REWARDS]
    nets = [f"{net}_reads_clean_renders" for net in correct]
    competent = [*(f"{m}_reaches_own_replay" for m in finals), *nets]
    miro_competent = ["miro_reaches_own_replay", *nets]
    level = f"{seeds.confidence:.1%} interval of the paired seed difference"
    said = _said(sampler)
    caption_guided = guided["geneval"]["caption"]
    return [
        *preconditions(finals, gaps, top, correct, trivial, own, cover, targets, p, plans),
        evidence("miro_higher_every_reward", "at equal training steps MIRO's mean reward is higher than the "
                 f"multi-reward baselines' on each of the {len(REWARDS)} rewards and than the single-reward model's "
                 f"on the rewards it was not trained on ({level} above 0; Holm over the parts for fails); {said}",
                 "MIRO beats single-reward and filtering baselines on every preference score (GenEval, "
                 "PickScore, ImageReward, HPSv2; ~1B-param text-to-image model)",
                 {b: {r: i.rounded() for r, i in v.items()} for b, v in rewards.items()} | {"sampler": sampler},
                 all_of({f"{b}/{r}": superiority(i, what=f"miro - {b} ({r})", plan=seeds)
                          for b, v in rewards.items() for r, i in v.items()}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("miro_keeps_diversity", f"MIRO's within-prompt diversity (spread of L2-normalised evaluator "
                 f"features) is at least {1 - p.diversity_tol:g}x every baseline's (ratio of the seeds' mean "
                 f"diversities, paired bootstrap over seeds); {said}", "diversity preserved vs single-reward "
                 "optimisation",
                 {b: v.rounded() for b, v in div.items()} | {"data": round(data_diversity, 4)}
                 | {f"{m}_over_data": round(float(f["diversity"].mean() / data_diversity), 4)
                    for m, f in finals.items()} | {"sampler": sampler},
                 all_of({b: noninferiority(v, margin=p.diversity_tol, direction="above", reference=1.0,
                                            what=f"diversity miro / {b}", plan=seeds) for b, v in div.items()}),
                 requires=competent),
        evidence("training_speedup", "per reward, MIRO reaches each baseline's final value of that reward before the "
                 "last step in most seeds (the single-reward model on the rewards it was not trained on): the share "
                 f"of training seeds whose MIRO curve meets that seed's baseline final at a checkpoint s* < T has an "
                 f"exact binomial interval above {p.speedup_share:g}; beside it the log speed-up log(T / s*) among "
                 "the seeds that reach it (censored: a seed that never reaches it is below 1 and only counted in the "
                 f"share; one reaching it at the first checkpoint is at the grid's cap {speed_cap:g}, a lower "
                 f"bound); the aggregate is reported; curves scored with {said}",
                 "up to 19x faster to reach the baselines' quality (per reward)",
                 {b: {r: {"share_faster": i.rounded()} | rest for r, (i, rest) in v.items()}
                  for b, v in fast.items()} | {"cap": speed_cap, "sampler": sampler},
                 all_of({f"{b}/{r}": superiority(i, reference=p.speedup_share, what=f"share of seeds faster than {b} "
                                                 f"({r})", plan=seeds)
                          for b, v in fast.items() for r, (i, _) in v.items() if r != "aggregate"}),
                 requires=[*competent, *sane, "all_top_cell_populated"]),
        evidence("geneval_higher", "GenEval-like compositional accuracy (object, colour and position all right by the "
                 f"independent evaluator) is higher for MIRO than for every baseline ({level} above 0); {said}; "
                 "beside it (reported, not judged): MIRO with caption-only guidance (neg = empty caption, rewards "
                 "kept at the top bins; one sample per caption) minus base, and the all-top cell's replay",
                 "GenEval 0.75 overall, state of the art at its scale",
                 {"miro": mean_ci(miro["geneval_overall"], unit="seed").rounded()}
                 | {f"miro_minus_{b}": i.rounded() for b, i in gen.items()}
                 | {"miro_caption_guided": mean_ci(caption_guided, unit="seed").rounded(),
                    "miro_caption_guided_minus_base": paired_diff_ci(caption_guided, finals["base"]["geneval_overall"],
                                                                     unit="seed").rounded(),
                    "all_top_replay": mean_ci(own["miro"], unit="seed").rounded(),
                    "clean_replay": mean_ci(own["clean"], unit="seed").rounded(), "sampler": sampler},
                 all_of({b: superiority(i, what=f"miro - {b} GenEval", plan=seeds) for b, i in gen.items()}),
                 requires=[*competent, "evaluator_independent_of_rewards"]),
        evidence("reward_guidance_adds", f"MIRO's sampler ({said}) gives a "
                 "higher aggregate reward than the same guidance with the rewards held at the top bins in the "
                 f"negative (caption-only guidance), from the same noise ({level} above 0); the reward-only "
                 "negative (the caption kept, lowest bins), the unguided model and each mode's GenEval are reported",
                 "MIRO guides with low-reward negatives (no separate number)",
                 {"caption_reward_minus_caption": reward_part.rounded()}
                 | {f"{k}_{mode}": mean_ci(v, unit="seed").rounded() for k, by in guided.items()
                    for mode, v in by.items()} | {"sampler": sampler},
                 superiority(reward_part, what="aggregate (caption_reward) - (caption) guidance", plan=seeds),
                 requires=[*miro_competent, *sane, "all_top_cell_populated"]),
        *(evidence(f"controllable_{r}", f"raising the {r} target from its lowest to its top bin (others at top) "
                   f"raises the {r} reward under MIRO by more than {p.control_floor:g} of its std over the training "
                   f"data (per-seed least-squares rise over the levels, interval over seeds); {said}, the {r} target "
                   "moved in the positive only", "per-reward targets "
                   "steer the matching score", {"rise_in_data_std": rise[r].rounded(),
                                                "curve": [round(float(v), 4) for v in control[r].mean(0)],
                                                "sampler": sampler},
                   superiority(rise[r], margin=p.control_floor, what=f"{r} rise / std", plan=seeds),
                   requires=[*miro_competent, f"{r}_ranks_corruptions_below_clean"]) for r in REWARDS),
    ]
