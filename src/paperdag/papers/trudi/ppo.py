"""On-policy training: PPO's surrogate with GAE (Schulman et al. 2017) for four policy updates.

With r(theta) = pi_theta(chain | s) / pi_old(chain | s) (the chain's density for a diffusion policy, the action's
for a Gaussian one) and normalised advantages A:
- ``gauss`` (Gaussian PPO): L = -E min(r A, clip(r, 1 -+ c) A).
- ``dppo`` (DPPO as published, Ren et al. 2024, ``agent/finetune/diffusion_ppo.py`` ``PPODiffusion.loss`` with the
  settings of ``cfg/gym/finetune/hopper-v2/ft_ppo_diffusion_mlp.yaml``, params.yaml ``ppo.dppo``): each denoising step
  k of the chain is its own sample of the denoising MDP. Its log-probability is the per-action-dimension
  log N(a_{k+1,j}; mu_k,j, sigma_k^2), each clamped to [logp_min, logp_max] (-5, 2), then averaged over the action
  dimensions; r_k = exp(new - old). The advantage is normalised over the minibatch's (state, step) samples and scaled
  by the denoising discount gamma_d^(K - k - 1) (0.99), and L = mean over (state, step) of max(-A r_k, -A clip(r_k,
  1 -+ c_d)) with c_d = 0.01 (clip_ploss_coef = clip_ploss_coef_base, so the same at every step). KL stop (target_kl
  1): approx_kl = mean((r - 1) - log r) is measured with the minibatch's loss, before its step; the step is taken, and
  a seed whose approx_kl exceeded target_kl takes no further step in this iteration (DPPO breaks out of its minibatch
  and epoch loops; here the other seeds go on).
- ``clip`` (the labelled ablation, run beside DPPO and reported beside the stability claim, judged by none: DPPO's
  per-step structure with PPO's settings, the form of the earlier runs): ratio r_k of the summed, unclamped step log-density, the environment step's advantage, L = -E sum_k min(r_k
  A, clip(r_k, 1 -+ c) A) with PPO's c, no denoising discount, no KL stop (the whole-chain ratio prod_k r_k is not
  bounded by this clipping).
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

import math

import torch

from .envs import SPECS
from .nets import Generators, SeedAdam, clip_grad_norms, mlp
from .params import DPPOParams, PolicyParams, PPOParams
from .policies import DiffusionPolicy, GaussianPolicy
from .rollout import Policy, gae, rollout
from .trust_region import chain_kl, project

METHODS = ("trudi", "dppo", "clip", "final", "gauss")


def make_policy(method: str, env_name: str, p: PolicyParams, gens: Generators) -> Policy:
    """The Gaussian policy for ``gauss``, the diffusion policy otherwise (same hidden width), one per seed."""
    spec = SPECS[env_name]
    if method == "gauss":
        return GaussianPolicy(spec.obs_dim, spec.act_dim, p.hidden, p.init_std, gens)
    return DiffusionPolicy(spec.obs_dim, spec.act_dim, p.hidden, p.steps, p.sigma_max, p.sigma_min, p.init_std, gens)


def old_policy(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor,
               d: DPPOParams | None = None) -> dict[str, torch.Tensor]:
    """What the update compares against: log pi_old(chain | s), and the old step means or Gaussian mean and std (for
    ``dppo`` also its clamped step log-probabilities, with ``d``)."""
    with torch.no_grad():
        if method == "gauss":
            return {"logp": policy.log_prob(obs, chain), "mean": policy.mean(obs),
                    "log_std": policy.log_std.detach().clone().expand(*obs.shape[:-1], -1)}
        mu = policy.means(obs, chain)
        out = {"logp": policy.log_prob_from_means(chain, mu), "logp_steps": policy.step_log_probs(chain, mu), "mu": mu}
        if method == "dppo":
            out["dppo_logp_steps"] = dppo_step_log_probs(policy, chain, mu, d)
        return out


def dppo_step_log_probs(policy: DiffusionPolicy, chain: torch.Tensor, mu: torch.Tensor, d: DPPOParams) -> torch.Tensor:
    """DPPO's step log-probabilities [..., K]: per action dimension log N(a_{k+1,j}; mu_k,j, sigma_k^2), clamped to
    [logp_min, logp_max], averaged over the action dimensions."""
    sig = policy.sigmas[:, None]
    per_dim = -(((chain[..., 1:, :] - mu) / sig) ** 2 / 2 + sig.log() + 0.5 * math.log(2 * math.pi))
    return per_dim.clamp(d.logp_min, d.logp_max).mean(-1)


def dppo_loss(policy: DiffusionPolicy, obs: torch.Tensor, chain: torch.Tensor, adv: torch.Tensor,
              old: dict[str, torch.Tensor], d: DPPOParams) -> tuple[torch.Tensor, torch.Tensor]:
    """DPPO's policy loss and approx_kl per seed [S] on one minibatch (module docstring)."""
    new = dppo_step_log_probs(policy, chain, policy.means(obs, chain), d)  # [S, B, K]
    k = new.shape[-1]
    a = adv[..., None].expand_as(new).flatten(1)  # the env step's advantage on each of its K samples
    a = (a - a.mean(1, keepdim=True)) / (a.std(1, keepdim=True) + 1e-8)
    discount = d.gamma_denoising ** torch.arange(k - 1, -1, -1, device=new.device, dtype=new.dtype)
    a = a * discount.repeat(new.shape[1])
    log_ratio = (new - old["dppo_logp_steps"]).flatten(1)
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean(1)
    loss = torch.max(-a * ratio, -a * ratio.clamp(1 - d.clip, 1 + d.clip)).mean(1)
    return loss, approx_kl


def policy_loss(method: str, policy: Policy, obs: torch.Tensor, chain: torch.Tensor, adv: torch.Tensor,
                old: dict[str, torch.Tensor], p: PPOParams, epsilon: float,
                stats: dict[str, torch.Tensor] | None = None) -> torch.Tensor:
    """The policy part of L (module docstring) per seed [S] on one minibatch (states [S, B, obs_dim]); for ``dppo``
    the minibatch's approx_kl per seed goes to ``stats["approx_kl"]`` when given."""
    if method == "dppo":
        loss, approx_kl = dppo_loss(policy, obs, chain, adv, old, p.dppo)
        if stats is not None:
            stats["approx_kl"] = approx_kl
        return loss
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
    update, skipped non-finite updates so far, whether DPPO's KL stop fired in this iteration and the minibatch steps
    the seed took)."""
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
        old = old_policy(method, policy, obs, chain, p.dppo)
        going = torch.ones(len(seeds), dtype=torch.bool, device=device)  # dppo: seeds whose KL stop has not fired
        steps = torch.zeros(len(seeds), dtype=torch.long)
        for _ in range(p.epochs):
            perm = torch.stack([torch.randperm(obs.shape[1], generator=g, device=device) for g in gens])
            for idx in perm.chunk(p.minibatches, dim=1):
                mb_old = {k: v[seed_rows, idx] for k, v in old.items()}
                mb_obs, stats = obs[seed_rows, idx], {}
                loss = policy_loss(method, policy, mb_obs, chain[seed_rows, idx], adv[seed_rows, idx], mb_old, p,
                                   epsilon, stats)
                loss = loss + 0.5 * ((value(mb_obs).squeeze(-1) - ret[seed_rows, idx]) ** 2).mean(-1)
                finite = torch.isfinite(loss)
                skipped += (~finite).cpu()
                opt.zero_grad()
                loss.sum().backward()
                for net in (policy, value):
                    clip_grad_norms(net.parameters(), p.max_grad_norm)
                opt.step(finite & going)
                steps += (finite & going).cpu()
                if "approx_kl" in stats:  # DPPO's stop: this minibatch's step is taken, the seed's later ones not
                    going &= ~(stats["approx_kl"] > p.dppo.target_kl)
        kl, ret_mean = policy_kl(method, policy, obs, chain, old).tolist(), batch["episode_return"].mean(1).tolist()
        rows += [{"seed": i, "iteration": it, "env_steps": (it + 1) * p.n_envs * SPECS[env_name].horizon,
                  "return": ret_mean[i], "kl": kl[i], "skipped": int(skipped[i]), "kl_stop": int(not going[i]),
                  "updates": int(steps[i])} for i in range(len(seeds))]
        if report is not None:
            report(it + 1, iterations)
    return policy, rows
