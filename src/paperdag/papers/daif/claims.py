"""The paper's claims restated for our scale: a pure function from per-seed scores to claims of two kinds.

Scores are normalised (0 = best state-ignoring policy: uniform random or a constant action; 1 = optimal); every
interval is a t interval over the shared environment seeds at level ``confidence`` (paired where agents are compared).

- precondition (the regime): every agent a claim compares beats the strongest trivial baseline of its task. On the
  exploration task, its learning curve: normalised AULC above 0, i.e. above the uniform random policy, reported beside
  how many seeds ever earned the reward and the random policy's chance of earning it in as many episodes. On a dense
  task, its greedy policy after training: normalised score above ``learned_min``. An ablation that never explores is
  not a baseline the method can be said to beat.
- evidence: DAIF's AULC above QR-DQN's and above its lambda = 0 ablation's on the exploration task (superiority of
  the paired difference), and on each dense task not below QR-DQN's by more than ``par_margin`` (non-inferiority).
The abstract reports no number, so ``paper_value`` quotes its claim.
"""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.verdicts import Claim, evidence, noninferiority, precondition, superiority

from .params import ClaimParams

PAPER = "the abstract states no number: active inference inside distributional RL 'makes its performance " \
        "advantages accessible without transition dynamics modeling'"
LABELS = {"daif": "DAIF", "daif_lam0": "DAIF's lambda = 0 ablation", "qrdqn": "QR-DQN", "dqn": "DQN"}


def competent(task: str, agent: str) -> str:
    """The id of the precondition that ``agent`` beats the trivial baseline of ``task``."""
    return f"competent_{task}_{agent}"


def explores(task: str, agent: str, aulc: np.ndarray, reach: dict, c: float) -> Claim:
    """On the exploration task: the agent's normalised AULC lies above 0 (the best state-ignoring policy)."""
    iv = mean_ci(aulc, c)
    return precondition(
        competent(task, agent), f"on {task}, {LABELS[agent]}'s learning curve beats the best state-ignoring policy "
        f"(the uniform random one): its normalised AULC lies above 0 ({100 * c:g}% t interval over {iv.n} seeds); "
        "reported beside the seeds that ever earned the +1 and the random policy's chance to in as many episodes",
        f"uniform random policy on {task} (normalised 0)",
        {"aulc": iv.rounded(), "seeds_earning_reward": f"{reach['seeds_reaching']}/{iv.n}",
         "random_policy_earns_it_per_seed": round(reach["random_reach_chance"], 4),
         "episodes": reach["episodes"], "first_success_step": reach["first_success_step"]},
        superiority(iv, what=f"{agent}'s normalised AULC"))


def learns(task: str, agent: str, score: np.ndarray, p: ClaimParams) -> Claim:
    """On a dense task: the agent's greedy score after training lies above ``learned_min``."""
    iv = mean_ci(score, p.confidence)
    return precondition(
        competent(task, agent), f"on {task}, {LABELS[agent]}'s greedy policy after training scores above "
        f"{p.learned_min:g} of the way from the best state-ignoring policy to the optimum "
        f"({100 * p.confidence:g}% t interval over {iv.n} seeds)",
        f"uniform random policy on {task} (normalised 0)",
        {"greedy_score": iv.rounded(), "bar": p.learned_min},
        superiority(iv, margin=p.learned_min, sesoi=p.learned_min, what=f"{agent}'s normalised greedy score"))


def claims(aulc: dict[str, dict[str, np.ndarray]], learned: dict[str, dict[str, np.ndarray]],
           reach: dict[str, dict], exploration: str, dense: list[str], p: ClaimParams) -> list[Claim]:
    """``aulc[task][agent]`` and ``learned[task][agent]`` (greedy evaluation after training) hold per-seed
    normalised scores; ``reach[agent]`` how each agent earned the exploration task's reward (evaluate: episodes,
    seeds_reaching, first_success_step, random_reach_chance); ``exploration`` names the hard-exploration task,
    ``dense`` the dense-reward tasks."""
    c, ex = p.confidence, aulc[exploration]
    level = f"{100 * c:g}% paired t interval over {len(ex['daif'])} seeds"
    out = [explores(exploration, a, ex[a], reach[a], c) for a in ("daif", "qrdqn", "daif_lam0")]
    out += [learns(task, a, learned[task][a], p) for task in dense for a in ("daif", "qrdqn")]
    gain, ablation = paired_diff_ci(ex["daif"], ex["qrdqn"], c), paired_diff_ci(ex["daif"], ex["daif_lam0"], c)
    out += [
        evidence("exploration_aulc_beats_qrdqn",
                 f"on {exploration}, the free-energy agent's normalised AULC exceeds QR-DQN's ({level} of the "
                 "difference above 0)", PAPER + " (sample efficiency)",
                 {"daif": mean_ci(ex["daif"], c).rounded(), "qrdqn": mean_ci(ex["qrdqn"], c).rounded(),
                  "difference": gain.rounded()},
                 superiority(gain, what="DAIF - QR-DQN normalised AULC"),
                 requires=[competent(exploration, "daif"), competent(exploration, "qrdqn")]),
        evidence("exploration_gain_needs_free_energy",
                 f"on {exploration}, lambda = 0 loses the advantage: DAIF's AULC exceeds its lambda = 0 ablation's "
                 f"({level} of the difference above 0)", PAPER + " (the epistemic term is the source)",
                 {"daif_lam0": mean_ci(ex["daif_lam0"], c).rounded(), "daif_minus_lam0": ablation.rounded(),
                  "lam0_minus_qrdqn": paired_diff_ci(ex["daif_lam0"], ex["qrdqn"], c).rounded()},
                 superiority(ablation, what="DAIF - lambda = 0 normalised AULC"),
                 requires=[competent(exploration, "daif"), competent(exploration, "daif_lam0")]),
    ]
    for task in dense:
        d = paired_diff_ci(aulc[task]["daif"], aulc[task]["qrdqn"], c)
        out.append(evidence(
            f"dense_on_par_{task}", f"on {task} (dense reward), DAIF is on par with QR-DQN: the {level} of the "
            f"normalised-AULC difference lies above -{p.par_margin:g}", "on par (qualitative)",
            {"daif": mean_ci(aulc[task]["daif"], c).rounded(), "qrdqn": mean_ci(aulc[task]["qrdqn"], c).rounded(),
             "difference": d.rounded()},
            noninferiority(d, margin=p.par_margin, direction="above", what="DAIF - QR-DQN normalised AULC"),
            requires=[competent(task, "daif"), competent(task, "qrdqn")]))
    return out
