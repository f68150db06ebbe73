"""One configuration (simulator, method, learning rate, epsilon) trained over seeds and evaluated.

Seed i of a configuration uses torch seed 1000 * root + offset + i (offset: stress_seed_offset for the stress
runs, else 0; its generator; all seeds train in one batched computation,
ppo.py), the same for every method, so methods are compared on paired seeds. Evaluation: the mean return of
``episodes`` episodes with stochastic and with deterministic sampling, and on ``detour`` the share of episodes from the
symmetric start that pass left of the obstacle (mean x of the path < 0); mode coverage = min(left share, right share),
0 for a policy that always takes the same side.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .nets import Generators
from .params import PolicyParams, PPOParams
from .ppo import train
from .rollout import Policy, detour_sides, episode_returns


def evaluate_policy(env_name: str, policy: Policy, episodes: int, gens: Generators,
                    device: str) -> tuple[list[dict[str, float]], torch.Tensor]:
    """Per seed: mean returns (stochastic, deterministic) and, on detour, the mode coverages; and the first actions of
    the first seed's stochastic episodes from the symmetric start ([episodes, 2]; empty on the other simulators)."""
    out = {f"return_{mode}": episode_returns(env_name, episodes, policy, gens, device, mode == "det").mean(1)
           for mode in ("stoch", "det")}
    first = torch.empty(0, policy.act_dim)
    if env_name == "detour":
        for mode in ("det", "stoch"):
            first, mean_x, _ = detour_sides(policy, episodes, gens, device, mode == "det")
            left = (mean_x < 0).float().mean(1)
            out[f"coverage_{mode}"] = torch.minimum(left, 1 - left)
        first = first[0].cpu()
    return [{k: float(v[i]) for k, v in out.items()} for i in range(len(gens))], first


def run_config(env_name: str, method: str, pol: PolicyParams, p: PPOParams, lr: float, epsilon: float, seeds: int,
               root: int, episodes: int, device: str, report: Callable[[int, int], None] | None = None,
               offset: int = 0) -> dict:
    """Train and evaluate ``seeds`` policies in one seed-batched computation: per-iteration rows, per-seed
    evaluations, the first seed's detour actions and the seed-stacked weights (leading axis = seed)."""
    seed_ids = [1000 * root + offset + i for i in range(seeds)]
    policy, rows = train(env_name, method, pol, p, lr, epsilon, seed_ids, device, report)
    gens = [torch.Generator(device).manual_seed(s + 7) for s in seed_ids]
    results, actions = evaluate_policy(env_name, policy, episodes, gens, device)
    curves = [row | {"epsilon": epsilon} for row in rows]
    evals = []
    for i, result in enumerate(results):
        own = [r for r in rows if r["seed"] == i]
        evals.append(result | {"seed": i, "epsilon": epsilon, "final_train_return": own[-1]["return"],
                               "max_kl": max(r["kl"] for r in own), "mean_kl": sum(r["kl"] for r in own) / len(own)})
    weights = {k: v.detach().cpu().contiguous() for k, v in policy.state_dict().items()}
    return {"curves": curves, "evals": evals, "weights": weights, "actions": actions}
