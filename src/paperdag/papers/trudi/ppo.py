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

The S seeds of a configuration train in one computation (nets.py): every loss is a vector over seeds whose sum is
differentiated (seed s's gradient is its own loss's), each seed's environments, noise, minibatch permutations and
initial weights come from its own generator seeded with its seed, and a non-finite loss skips that seed's step only.
"""

from __future__ import annotations

import torch

from .envs import SPECS
from .nets import Generators, SeedAdam, clip_grad_norms, mlp
from .params import PolicyParams, PPOParams
from .policies import DiffusionPolicy, GaussianPolicy
from .rollout import Policy, gae, rollout
from .trust_region import chain_kl, project

METHODS = ("trudi", "clip", "final", "gauss")


def make_policy(method: str, env_name: str, p: PolicyParams, gens: Generators) -> Policy:
    """The Gaussian policy for ``gauss``, the diffusion policy otherwise (same hidden width), one per seed."""
    spec = SPECS[env_name]
    if method == "gauss":
        return GaussianPolicy(spec.obs_dim, spec.act_dim, p.hidden, p.init_std, gens)
    return DiffusionPolicy(spec.obs_dim, spec.act_dim, p.hidden, p.steps, p.sigma_max, p.sigma_min, p.init_std, gens)


def old_policy(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor) -> dict[str, torch.Tensor]:
    """What the update compares against: log pi_old(chain | s), and the old step means or Gaussian mean and std."""
    with torch.no_grad():
        if method == "gauss":
            return {"logp": policy.log_prob(obs, chain), "mean": policy.mean(obs),
                    "log_std": policy.log_std.detach().clone().expand(*obs.shape[:-1], -1)}
        mu = policy.means(obs, chain)
        return {"logp": policy.log_prob_from_means(chain, mu), "logp_steps": policy.step_log_probs(chain, mu), "mu": mu}


def policy_loss(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor, adv: torch.Tensor,
                old: dict[str, torch.Tensor], p: PPOParams, epsilon: float) -> torch.Tensor:
    """The policy part of L (module docstring) per seed [S] on one minibatch (states [S, B, obs_dim])."""
    if method == "gauss":
        ratio = (policy.log_prob(obs, chain) - old["logp"]).exp()
        return -torch.min(ratio * adv, ratio.clamp(1 - p.clip, 1 + p.clip) * adv).mean(-1)
    mu = policy.means(obs, chain)
    if method == "clip":
        ratio, a = (policy.step_log_probs(chain, mu) - old["logp_steps"]).exp(), adv[..., None]
        return -torch.min(ratio * a, ratio.clamp(1 - p.clip, 1 + p.clip) * a).sum(-1).mean(-1)
    proj = project(old["mu"], mu, policy.sigmas, epsilon, final_only=method == "final")
    ratio = (policy.log_prob_from_means(chain, proj) - old["logp"]).exp()
    return -(ratio * adv).mean(-1) + p.tr_reg * chain_kl(proj.detach(), mu, policy.sigmas).mean(-1)


@torch.no_grad()
def policy_kl(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor,
              old: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean KL(pi_old || pi_new) per state, per seed [S]: closed form (Gaussian) or the chain KL at the stored
    chains."""
    if method == "gauss":
        return policy.kl(obs, old["mean"], old["log_std"]).mean(-1)
    return chain_kl(old["mu"], policy.means(obs, chain), policy.sigmas).mean(-1)


def _per_seed_batch(x: torch.Tensor) -> torch.Tensor:
    """[H, S, n, ...] -> [S, H n, ...]: one seed's rollout as one batch."""
    return x.transpose(0, 1).flatten(1, 2)


def train(env_name: str, method: str, pol: PolicyParams, p: PPOParams, lr: float, epsilon: float, seeds: list[int],
          device: str, report=None) -> tuple[Policy, list[dict[str, float]]]:
    """Train one policy per seed for ``p.iterations[env_name]`` rollouts of ``p.n_envs`` episodes; returns the
    seed-stacked policy and per-iteration, per-seed rows (seed index, env_steps, mean episode return, KL of the
    update, skipped non-finite updates so far)."""
    gens = [torch.Generator(device).manual_seed(s) for s in seeds]
    policy = make_policy(method, env_name, pol, gens).to(device)
    value = mlp(SPECS[env_name].obs_dim, 1, pol.hidden, gens).to(device)
    opt = SeedAdam([*policy.parameters(), *value.parameters()], lr, len(seeds))
    rows, skipped, seed_rows = [], torch.zeros(len(seeds), dtype=torch.long), torch.arange(len(seeds))[:, None]
    iterations = p.iterations[env_name]
    for it in range(iterations):
        batch = rollout(env_name, p.n_envs, policy, value, gens, device, p.reward_scale[env_name])
        adv, ret = (_per_seed_batch(x) for x in gae(batch["reward"], batch["value"], p.gamma, p.lam))
        obs, chain = _per_seed_batch(batch["obs"]), _per_seed_batch(batch["chain"])
        adv = (adv - adv.mean(1, keepdim=True)) / (adv.std(1, keepdim=True) + 1e-8)
        old = old_policy(method, policy, obs, chain)
        for _ in range(p.epochs):
            perm = torch.stack([torch.randperm(obs.shape[1], generator=g, device=device) for g in gens])
            for idx in perm.chunk(p.minibatches, dim=1):
                mb_old = {k: v[seed_rows, idx] for k, v in old.items()}
                mb_obs = obs[seed_rows, idx]
                loss = policy_loss(method, policy, mb_obs, chain[seed_rows, idx], adv[seed_rows, idx], mb_old, p,
                                   epsilon)
                loss = loss + 0.5 * ((value(mb_obs).squeeze(-1) - ret[seed_rows, idx]) ** 2).mean(-1)
                finite = torch.isfinite(loss)
                skipped += (~finite).cpu()
                opt.zero_grad()
                loss.sum().backward()
                for net in (policy, value):
                    clip_grad_norms(net.parameters(), p.max_grad_norm)
                opt.step(finite)
        kl, ret_mean = policy_kl(method, policy, obs, chain, old).tolist(), batch["episode_return"].mean(1).tolist()
        rows += [{"seed": i, "iteration": it, "env_steps": (it + 1) * p.n_envs * SPECS[env_name].horizon,
                  "return": ret_mean[i], "kl": kl[i], "skipped": int(skipped[i])} for i in range(len(seeds))]
        if report is not None:
            report(it + 1, iterations)
    return policy, rows
