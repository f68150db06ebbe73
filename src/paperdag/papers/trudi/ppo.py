"""On-policy training: PPO's surrogate with GAE (Schulman et al. 2017) for four policy updates.

With r(theta) = pi_theta(chain | s) / pi_old(chain | s) (the chain's density for a diffusion policy, the action's
for a Gaussian one) and normalised advantages A:
- ``gauss`` (Gaussian PPO): L = -E min(r A, clip(r, 1 -+ c) A).
- ``clip`` (DPPO, Ren et al. 2024: ratio clipping only, per denoising step): each step t of the chain is an action
  of the denoising MDP with ratio r_t = N(a_{t-1}; mu_new,t, sigma_t^2) / N(a_{t-1}; mu_old,t, sigma_t^2) and the
  environment step's advantage, L = -E sum_t min(r_t A, clip(r_t, 1 -+ c) A) (the sum of per-step clipped
  objectives; the whole-chain ratio is prod_t r_t, which this clipping does not bound).
- ``trudi``: L = -E r_proj A + alpha E KL_chain(mu_proj || mu_theta), r_proj the ratio of the projected chain
  (trust_region.project: whole-chain KL <= epsilon), the second term pulls the network onto its projection.
- ``final``: the same with the projection of the last denoising step only.
The value network minimises (V(s) - R)^2 / 2 in the same Adam step. Updates with a non-finite loss are skipped and
counted; policy and value gradients are norm-clipped separately. After each iteration the mean KL(old || new) of
the network's policy on the batch is recorded.
"""

from __future__ import annotations

import torch
from torch import nn

from .envs import SPECS
from .params import PolicyParams, PPOParams
from .policies import DiffusionPolicy, GaussianPolicy
from .rollout import Policy, gae, rollout
from .trust_region import chain_kl, project

METHODS = ("trudi", "clip", "final", "gauss")


def make_policy(method: str, env_name: str, p: PolicyParams) -> Policy:
    """The Gaussian policy for ``gauss``, the diffusion policy otherwise (same hidden width)."""
    spec = SPECS[env_name]
    if method == "gauss":
        return GaussianPolicy(spec.obs_dim, spec.act_dim, p.hidden, p.init_std)
    return DiffusionPolicy(spec.obs_dim, spec.act_dim, p.hidden, p.steps, p.sigma_max, p.sigma_min, p.init_std)


def old_policy(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor) -> dict[str, torch.Tensor]:
    """What the update compares against: log pi_old(chain | s), and the old step means or Gaussian mean and std."""
    with torch.no_grad():
        if method == "gauss":
            return {"logp": policy.log_prob(obs, chain), "mean": policy.mean(obs),
                    "log_std": policy.log_std.detach().clone().expand(len(obs), -1)}
        mu = policy.means(obs, chain)
        return {"logp": policy.log_prob_from_means(chain, mu), "logp_steps": policy.step_log_probs(chain, mu), "mu": mu}


def policy_loss(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor, adv: torch.Tensor,
                old: dict[str, torch.Tensor], p: PPOParams, epsilon: float) -> torch.Tensor:
    """The policy part of L (module docstring) on one minibatch."""
    if method == "gauss":
        ratio = (policy.log_prob(obs, chain) - old["logp"]).exp()
        return -torch.min(ratio * adv, ratio.clamp(1 - p.clip, 1 + p.clip) * adv).mean()
    mu = policy.means(obs, chain)
    if method == "clip":
        ratio, a = (policy.step_log_probs(chain, mu) - old["logp_steps"]).exp(), adv[:, None]
        return -torch.min(ratio * a, ratio.clamp(1 - p.clip, 1 + p.clip) * a).sum(-1).mean()
    proj = project(old["mu"], mu, policy.sigmas, epsilon, final_only=method == "final")
    ratio = (policy.log_prob_from_means(chain, proj) - old["logp"]).exp()
    return -(ratio * adv).mean() + p.tr_reg * chain_kl(proj.detach(), mu, policy.sigmas).mean()


@torch.no_grad()
def policy_kl(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor,
              old: dict[str, torch.Tensor]) -> float:
    """Mean KL(pi_old || pi_new) per state: closed form (Gaussian) or the chain KL at the stored chains."""
    if method == "gauss":
        return float(policy.kl(obs, old["mean"], old["log_std"]).mean())
    return float(chain_kl(old["mu"], policy.means(obs, chain), policy.sigmas).mean())


def train(env_name: str, method: str, pol: PolicyParams, p: PPOParams, lr: float, epsilon: float, seed: int,
          device: str, report=None) -> tuple[Policy, list[dict[str, float]]]:
    """Train one policy for ``p.iterations`` rollouts of ``p.n_envs`` episodes; returns it and per-iteration rows
    (env_steps, mean episode return, KL of the update, skipped non-finite updates)."""
    torch.manual_seed(seed)
    gen = torch.Generator(device).manual_seed(seed)
    policy = make_policy(method, env_name, pol).to(device)
    value = nn.Sequential(nn.Linear(SPECS[env_name].obs_dim, pol.hidden), nn.Tanh(), nn.Linear(pol.hidden, pol.hidden),
                          nn.Tanh(), nn.Linear(pol.hidden, 1)).to(device)
    opt = torch.optim.Adam([*policy.parameters(), *value.parameters()], lr=lr)
    rows, skipped = [], 0
    for it in range(p.iterations):
        batch = rollout(env_name, p.n_envs, policy, value, gen, device, p.reward_scale[env_name])
        adv, ret = gae(batch["reward"], batch["value"], p.gamma, p.lam)
        obs, chain = batch["obs"].flatten(0, 1), batch["chain"].flatten(0, 1)
        adv, ret = adv.flatten(), ret.flatten()
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        old = old_policy(method, policy, obs, chain)
        for _ in range(p.epochs):
            for idx in torch.randperm(len(obs), generator=gen, device=device).chunk(p.minibatches):
                mb_old = {k: v[idx] for k, v in old.items()}
                loss = policy_loss(method, policy, obs[idx], chain[idx], adv[idx], mb_old, p, epsilon)
                loss = loss + 0.5 * ((value(obs[idx]).squeeze(-1) - ret[idx]) ** 2).mean()
                if not torch.isfinite(loss):
                    skipped += 1
                    continue
                opt.zero_grad()
                loss.backward()
                for net in (policy, value):
                    nn.utils.clip_grad_norm_(net.parameters(), p.max_grad_norm)
                opt.step()
        rows.append({"iteration": it, "env_steps": (it + 1) * p.n_envs * SPECS[env_name].horizon,
                     "return": float(batch["episode_return"].mean()),
                     "kl": policy_kl(method, policy, obs, chain, old), "skipped": skipped})
        if report is not None:
            report(it + 1, p.iterations)
    return policy, rows
