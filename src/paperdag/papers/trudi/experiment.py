"""One configuration (simulator, method, learning rate, epsilon) trained over seeds and evaluated.

Seed i of a configuration uses torch seed 1000 * root + i, the same for every method, so methods are compared on
paired seeds. Evaluation: the mean return of ``episodes`` episodes with stochastic and with deterministic sampling,
and on ``detour`` the share of episodes from the symmetric start that pass left of the obstacle (mean x of the path
< 0); mode coverage = min(left share, right share), 0 for a policy that always takes the same side.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .params import PolicyParams, PPOParams
from .ppo import train
from .rollout import Policy, detour_sides, episode_returns


def evaluate_policy(env_name: str, policy: Policy, episodes: int, gen: torch.Generator,
                    device: str) -> tuple[dict[str, float], torch.Tensor]:
    """Mean returns (stochastic, deterministic) and, on detour, the mode coverages and the first actions of the
    stochastic episodes from the symmetric start ([episodes, 2]; empty on the other simulators)."""
    out = {f"return_{mode}": float(episode_returns(env_name, episodes, policy, gen, device, mode == "det").mean())
           for mode in ("stoch", "det")}
    if env_name != "detour":
        return out, torch.empty(0, policy.act_dim)
    first = torch.empty(0, 2)
    for mode in ("det", "stoch"):
        first, mean_x, _ = detour_sides(policy, episodes, gen, device, mode == "det")
        left = float((mean_x < 0).float().mean())
        out[f"coverage_{mode}"] = min(left, 1 - left)
    return out, first.cpu()


def run_config(env_name: str, method: str, pol: PolicyParams, p: PPOParams, lr: float, epsilon: float, seeds: int,
               root: int, episodes: int, device: str, report: Callable[[int, int], None] | None = None) -> dict:
    """Train and evaluate ``seeds`` policies: per-iteration rows, per-seed evaluations, the first seed's detour
    actions and every seed's weights (``seed<i>.<name>``)."""
    curves, evals, weights, actions = [], [], {}, torch.empty(0, pol.steps)
    for i in range(seeds):
        seed = 1000 * root + i
        policy, rows = train(env_name, method, pol, p, lr, epsilon, seed, device, report)
        result, first = evaluate_policy(env_name, policy, episodes, torch.Generator(device).manual_seed(seed + 7),
                                        device)
        curves += [row | {"seed": i, "epsilon": epsilon} for row in rows]
        evals.append(result | {"seed": i, "epsilon": epsilon, "final_train_return": rows[-1]["return"],
                               "max_kl": max(r["kl"] for r in rows), "mean_kl": sum(r["kl"] for r in rows) / len(rows)})
        weights |= {f"seed{i}.{k}": v.detach().cpu().contiguous() for k, v in policy.state_dict().items()}
        actions = first if i == 0 else actions
    return {"curves": curves, "evals": evals, "weights": weights, "actions": actions}
