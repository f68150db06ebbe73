"""trudi science against independent oracles: the batched simulators against scalar references, the chain KL bound
against the closed-form KL of a linear-Gaussian chain, densities and KLs against torch.distributions, DPPO's loss
against a transcription of its published loss (clip, clamp, mean over dimensions, denoising discount, approx_kl) and
its per-seed KL stop, the clip ablation's per-step clipped loss against a loop over steps (and the ablation
reported beside the stability claim, judged by none), SeedAdam's int64 count, GAE against its definition, the detour's mirror symmetry and its congestion
(a split batch beats a one-sided one by the closed-form amount), the plateau rule (window sizes, the slope and noise
sd against numpy's least squares, the budget it chooses), the ladder's scripted controllers (reacher's action
against autograd's Jacobian, the detour split against prepare's route rollout, the pendulum's energy pumping and
catch) and its linear controller (its rollouts against the zero-action rollout and a per-candidate loop, its random
search against a quadratic's gradient), the claims' verdicts (inconclusive where the regime is not reached, competence judged against
the strongest rung), and the smoke pipeline (the matched epsilon). The platform contract is
in test_paper_contract.py."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest
import torch
from torch.distributions import Normal, kl_divergence

from paperdag.common.plans import SamplePlan
from paperdag.common.verdicts import resolve
from paperdag.io import read_table
from paperdag.papers.trudi import controller, scripted
from paperdag.papers.trudi.analysis import plateau, plateau_window, plateaus
from paperdag.papers.trudi.claims import claims
from paperdag.papers.trudi.envs import SPECS, Detour, Pendulum, Reacher, make_env
from paperdag.papers.trudi.nets import SeedAdam, clip_grad_norms, mlp
from paperdag.papers.trudi.params import ENVS, ClaimParams, DPPOParams, Plans, PolicyParams, PPOParams
from paperdag.papers.trudi.policies import DiffusionPolicy, GaussianPolicy
from paperdag.papers.trudi.ppo import old_policy, policy_loss, train
from paperdag.papers.trudi.rollout import constant_action_returns, gae, route_returns
from paperdag.papers.trudi.trust_region import chain_kl, project

SLUG = "trudi"
DPPO = DPPOParams(clip=0.01, logp_min=-5.0, logp_max=2.0, gamma_denoising=0.99, target_kl=1.0)  # DPPO's hopper config


def _detour_ref(state: dict, a: list[float]) -> float:
    """The detour's step without the congestion term (added over the batch by ``_crowding``)."""
    a = [min(max(x, -1.0), 1.0) for x in a]
    nxt = [state["p"][i] + Detour.speed * Detour.dt * a[i] for i in range(2)]
    blocked = state["blocked"] = math.hypot(*nxt) < Detour.radius
    state["p"] = state["p"] if blocked else nxt
    return -math.hypot(state["p"][0], state["p"][1] - 1.0) - Detour.penalty * blocked


def _crowding(states: list[dict]) -> list[float]:
    """Congestion of each point: crowding x (the number of points in its lane / n), 0 off the lanes."""
    lanes = [0 if abs(s["p"][0]) < Detour.lane else (1 if s["p"][0] > 0 else -1) for s in states]
    return [Detour.crowding * lanes.count(ln) / len(lanes) if ln else 0.0 for ln in lanes]


def _pendulum_ref(state: dict, a: list[float]) -> float:
    u = Pendulum.max_torque * min(max(a[0], -1.0), 1.0)
    th, thdot = state["th"], state["thdot"]
    wrapped = ((th + math.pi) % (2 * math.pi)) - math.pi
    reward = -(wrapped**2 + 0.1 * thdot**2 + 0.001 * u**2)
    thdot = min(max(thdot + (15.0 * math.sin(th) + 3.0 * u) * Pendulum.dt, -8.0), 8.0)
    state["th"], state["thdot"] = th + thdot * Pendulum.dt, thdot
    return reward


def _reacher_ref(state: dict, a: list[float]) -> float:
    a = [min(max(x, -1.0), 1.0) for x in a]
    q = [state["q"][i] + Reacher.speed * Reacher.dt * a[i] for i in range(2)]
    state["q"] = q
    tip = (0.5 * math.cos(q[0]) + 0.5 * math.cos(q[0] + q[1]), 0.5 * math.sin(q[0]) + 0.5 * math.sin(q[0] + q[1]))
    return -math.hypot(tip[0] - state["target"][0], tip[1] - state["target"][1]) - 0.01 * (a[0] ** 2 + a[1] ** 2)


@pytest.mark.parametrize("name", ENVS)
def test_batched_env_matches_scalar_reference_step_for_step(name: str, float64) -> None:
    """n = 6 environments (one pushed into the obstacle's path; clipped actions) stepped for the full horizon, in
    float64 so that the chaotic pendulum does not amplify rounding."""
    env = make_env(name, 6)
    env.reset(torch.Generator().manual_seed(3))
    states = [{"p": env.p[i].tolist()} if name == "detour" else
              {"th": float(env.th[i]), "thdot": float(env.thdot[i])} if name == "pendulum" else
              {"q": env.q[i].tolist(), "target": env.target[i].tolist()} for i in range(6)]
    ref = {"detour": _detour_ref, "pendulum": _pendulum_ref, "reacher": _reacher_ref}[name]
    gen, blocked = torch.Generator().manual_seed(4), 0
    for _ in range(SPECS[name].horizon):
        a = 1.5 * (torch.rand(6, SPECS[name].act_dim, generator=gen) * 2 - 1)
        if name == "detour":
            a[0] = torch.tensor([0.0, 1.0])  # straight up from (0, -1): runs into the disk
        _, reward = env.step(a)
        expected = [ref(s, a[i].tolist()) for i, s in enumerate(states)]
        if name == "detour":
            expected = [e - c for e, c in zip(expected, _crowding(states))]
        np.testing.assert_allclose(reward.numpy(), expected, rtol=1e-9, atol=1e-9)
        blocked += name == "detour" and states[0]["blocked"]
    assert name != "detour" or blocked > 0


def _linear_chain(alpha: list[float], b: list[float], sigmas: list[float], s0: float) -> list[tuple[float, float]]:
    """Mean and variance of a_K, ..., a_0 for a_{t-1} = alpha_k a_t + b_k + sigma_k eps."""
    m, v, out = 0.0, s0**2, [(0.0, s0**2)]
    for al, bb, s in zip(alpha, b, sigmas):
        m, v = al * m + bb, al**2 * v + s**2
        out.append((m, v))
    return out


def test_chain_kl_bounds_the_exact_final_action_kl_on_a_linear_gaussian_chain() -> None:
    """Closed forms: the chain KL sum_k E_old[(da_k a + db_k)^2] / 2 sigma_k^2 >= KL of the Gaussian marginals of a_0;
    the per-chain estimator chain_kl averages to the closed-form bound."""
    sigmas, s0 = [0.5, 0.3, 0.1], 1.0
    old, new = ([0.8, 0.9, 1.0], [0.1, -0.2, 0.0]), ([0.7, 1.1, 0.95], [0.3, -0.1, 0.05])
    moments = _linear_chain(*old, sigmas, s0)
    bound = sum(((a1 - a0) ** 2 * (m**2 + v) + 2 * (a1 - a0) * (b1 - b0) * m + (b1 - b0) ** 2) / (2 * s**2)
                for (m, v), a0, b0, a1, b1, s in zip(moments, *old, *new, sigmas))
    (m_old, v_old), (m_new, v_new) = moments[-1], _linear_chain(*new, sigmas, s0)[-1]
    exact = math.log(math.sqrt(v_new / v_old)) + (v_old + (m_old - m_new) ** 2) / (2 * v_new) - 0.5
    assert 0 < exact < bound
    gen = torch.Generator().manual_seed(0)
    a, mu_old, mu_new = torch.randn(200_000, 1, generator=gen, dtype=torch.float64) * s0, [], []
    for a0, b0, a1, b1, s in zip(*old, *new, sigmas):
        mu_old.append(a0 * a + b0)
        mu_new.append(a1 * a + b1)
        a = mu_old[-1] + s * torch.randn(a.shape, generator=gen, dtype=torch.float64)
    est = chain_kl(torch.stack(mu_old, 1), torch.stack(mu_new, 1), torch.tensor(sigmas, dtype=torch.float64))
    assert abs(float(est.mean()) - bound) < 0.02 * bound


def test_projection_caps_the_chain_kl_at_epsilon() -> None:
    """After projection KL(mu_old, mu_proj) = min(KL, epsilon) per state; final_only leaves the other steps free."""
    gen = torch.Generator().manual_seed(1)
    mu_old, mu_new = torch.randn(50, 4, 2, generator=gen), torch.randn(50, 4, 2, generator=gen)
    mu_new[:5] = mu_old[:5] + 1e-3 * mu_new[:5]  # inside the region: untouched
    sigmas = torch.tensor([0.4, 0.3, 0.2, 0.1])
    kl = chain_kl(mu_old, mu_new, sigmas)
    proj = project(mu_old, mu_new, sigmas, 0.5)
    torch.testing.assert_close(chain_kl(mu_old, proj, sigmas), kl.clamp(max=0.5))
    torch.testing.assert_close(proj[:5], mu_new[:5])
    last = project(mu_old, mu_new, sigmas, 0.5, final_only=True)
    torch.testing.assert_close(last[:, :-1], mu_new[:, :-1])
    assert float(chain_kl(mu_old[:, -1:], last[:, -1:], sigmas[-1:]).max()) <= 0.5 + 1e-5


def test_chain_density_and_deterministic_sampling_against_torch_distributions() -> None:
    pol = DiffusionPolicy(3, 2, 16, 3, 0.5, 0.1, 0.5, [torch.Generator().manual_seed(0)])
    torch.nn.init.normal_(pol.f[-1].weight, std=0.3)
    obs, gens = torch.randn(1, 7, 3), [torch.Generator().manual_seed(2)]
    chain = pol.sample(obs, gens)
    mu = pol.means(obs, chain)
    oracle = sum(Normal(mu[..., k, :], pol.sigmas[k]).log_prob(chain[..., k + 1, :]).sum(-1) for k in range(3))
    torch.testing.assert_close(pol.log_prob_from_means(chain, mu), oracle)
    det = pol.sample(obs, gens, deterministic=True)
    torch.testing.assert_close(pol.means(obs, det), det[..., 1:, :])
    assert torch.allclose(pol.sigmas, torch.tensor([0.5, 0.5 * 0.2**0.5, 0.1]))


def test_gaussian_policy_kl_against_torch_distributions() -> None:
    torch.manual_seed(0)
    pol = GaussianPolicy(3, 2, 8, 0.5, [torch.Generator().manual_seed(0)])
    torch.nn.init.normal_(pol.mean[-1].weight)
    obs, mean_old, log_std_old = torch.randn(1, 5, 3), torch.randn(1, 5, 2), torch.randn(1, 5, 2) * 0.3
    oracle = kl_divergence(Normal(mean_old, log_std_old.exp()), Normal(pol.mean(obs), pol.log_std.exp())).sum(-1)
    torch.testing.assert_close(pol.kl(obs, mean_old, log_std_old), oracle)


def test_gae_matches_its_definition() -> None:
    gen = torch.Generator().manual_seed(0)
    r, v = torch.randn(6, 3, generator=gen, dtype=torch.float64), torch.randn(7, 3, generator=gen, dtype=torch.float64)
    adv, ret = gae(r, v, 0.9, 0.8)
    delta = r + 0.9 * v[1:] - v[:-1]
    oracle = torch.stack([sum((0.9 * 0.8) ** (l - t) * delta[l] for l in range(t, 6)) for t in range(6)])
    torch.testing.assert_close(adv, oracle)
    torch.testing.assert_close(ret, adv + v[:-1])


def test_detour_is_mirror_symmetric(float64) -> None:
    """Mirrored states and actions (x -> -x) earn identical rewards step for step (congestion included): a policy and
    its mirror image have the same return, so neither route is preferred."""
    env, mirror = make_env("detour", 8), make_env("detour", 8)
    env.reset(torch.Generator().manual_seed(0), jitter=0.0)
    mirror.reset(torch.Generator().manual_seed(0), jitter=0.0)
    flip = torch.tensor([-1.0, 1.0])
    gen = torch.Generator().manual_seed(1)
    for _ in range(SPECS["detour"].horizon):
        a = torch.rand(8, 2, generator=gen) * 2 - 1
        (_, r), (_, r_mirror) = env.step(a), mirror.step(a * flip)
        torch.testing.assert_close(r, r_mirror)
        torch.testing.assert_close(env.p * flip, mirror.p)


def test_split_routes_beat_one_route_by_the_halved_congestion(float64) -> None:
    """Scripted batches: all on one route pay crowding x 1 per lane step, a half-half split crowding x 1/2, so the
    split earns crowding / 2 x (lane steps of one path, counted with the scalar reference) more."""
    state, lane_steps = {"p": [0.0, -1.0]}, 0
    for _ in range(SPECS["detour"].horizon):
        target = [0.75, 0.0] if state["p"][1] < 0 else [0.0, 1.0]
        d = [target[0] - state["p"][0], target[1] - state["p"][1]]
        norm = max(math.hypot(*d), Detour.speed * Detour.dt)
        _detour_ref(state, [d[0] / norm, d[1] / norm])
        assert not state["blocked"]
        lane_steps += abs(state["p"][0]) >= Detour.lane
    one, split = route_returns(64, 1.0, "cpu"), route_returns(64, 0.5, "cpu")
    assert lane_steps > 0
    assert split - one == pytest.approx(Detour.crowding / 2 * lane_steps, rel=1e-6)


def test_clip_ablation_clips_every_denoising_step_ratio() -> None:
    """The ``clip`` ablation (DPPO's per-step structure with PPO's settings) against a loop over steps with torch.distributions: -mean_b sum_k min(r_k A, clip(r_k) A), which
    is not the clipped objective of the whole-chain ratio prod_k r_k."""
    torch.manual_seed(0)
    pol = DiffusionPolicy(3, 2, 16, 3, 0.5, 0.1, 0.5, [torch.Generator().manual_seed(0)])
    obs, gens = torch.randn(1, 64, 3), [torch.Generator().manual_seed(1)]
    chain, adv = pol.sample(obs, gens), torch.randn(1, 64)
    old = old_policy("clip", pol, obs, chain)
    torch.nn.init.normal_(pol.f[-1].weight, std=0.02)
    p = PPOParams(n_envs=2, iterations={e: 1 for e in ENVS}, epochs=1, minibatches=1, gamma=0.99, lam=0.95, clip=0.2,
                  tr_reg=1.0, max_grad_norm=0.5, reward_scale={e: 1.0 for e in ENVS}, dppo=DPPO)
    mu = pol.means(obs, chain)
    oracle = 0.0
    for k in range(3):
        r = (Normal(mu[..., k, :], pol.sigmas[k]).log_prob(chain[..., k + 1, :]).sum(-1)
             - Normal(old["mu"][..., k, :], pol.sigmas[k]).log_prob(chain[..., k + 1, :]).sum(-1)).exp()
        oracle = oracle + torch.min(r * adv, r.clamp(0.8, 1.2) * adv)
    loss = policy_loss("clip", pol, obs, chain, adv, old, p, epsilon=0.1)
    torch.testing.assert_close(loss, -oracle.mean(-1))
    whole = (pol.log_prob_from_means(chain, mu) - old["logp"]).exp()
    assert not torch.allclose(loss, -torch.min(whole * adv, whole.clamp(0.8, 1.2) * adv).mean(-1))


def _dppo_reference(newlogprobs, oldlogprobs, advantages, denoising_inds, ft_denoising_steps, d):
    """A transcription of DPPO's ``PPODiffusion.loss`` (irom-lab/dppo, model/diffusion/diffusion_ppo.py) for one
    minibatch of (state, denoising step) samples with per-element log-probs [N, act_dim] (horizon 1, no BC loss, no
    advantage quantile clipping: the hopper config's 0 and 1 quantiles), clip_ploss_coef = clip_ploss_coef_base."""
    newlogprobs = newlogprobs.clamp(min=d.logp_min, max=d.logp_max)
    oldlogprobs = oldlogprobs.clamp(min=d.logp_min, max=d.logp_max)
    newlogprobs = newlogprobs.mean(dim=-1).view(-1)
    oldlogprobs = oldlogprobs.mean(dim=-1).view(-1)
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    discount = torch.tensor([d.gamma_denoising ** (ft_denoising_steps - i - 1) for i in denoising_inds])
    advantages = advantages * discount
    logratio = newlogprobs - oldlogprobs
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
    pg_loss1 = -advantages * ratio
    pg_loss2 = -advantages * torch.clamp(ratio, 1 - d.clip, 1 + d.clip)
    return torch.max(pg_loss1, pg_loss2).mean(), approx_kl


@pytest.mark.parametrize("scale", [0.02, 0.3])
def test_dppo_loss_matches_a_transcription_of_dppo(scale: float) -> None:
    """Two seeds' DPPO losses and approx_kl (ppo.dppo_loss through policy_loss) against the transcription above on
    random batches: per-element log-probs from torch.distributions, the (state, step) samples shuffled into one flat
    minibatch as DPPO stores them. sigma_min 0.02 puts log-densities above the clamp's 2 and the perturbation puts
    some below -5, so the clamp, the mean over dimensions and the clip all act; the KL stop reads this approx_kl."""
    torch.manual_seed(0)
    k_steps, act = 3, 2
    pol = DiffusionPolicy(3, act, 16, k_steps, 0.5, 0.02, 0.5, [torch.Generator().manual_seed(s) for s in (0, 1)])
    obs, gens = torch.randn(2, 40, 3), [torch.Generator().manual_seed(s) for s in (2, 3)]
    chain, adv = pol.sample(obs, gens), torch.randn(2, 40)
    old = old_policy("dppo", pol, obs, chain, DPPO)
    torch.nn.init.normal_(pol.f[-1].weight, std=scale)
    p = PPOParams(n_envs=2, iterations={e: 1 for e in ENVS}, epochs=1, minibatches=1, gamma=0.99, lam=0.95, clip=0.2,
                  tr_reg=1.0, max_grad_norm=0.5, reward_scale={e: 1.0 for e in ENVS}, dppo=DPPO)
    stats = {}
    loss = policy_loss("dppo", pol, obs, chain, adv, old, p, epsilon=0.1, stats=stats)
    mu = pol.means(obs, chain)
    clamped = 0
    for s in range(2):
        new_e, old_e, a, inds = [], [], [], []
        for b in torch.randperm(40).tolist():
            for k in range(k_steps):
                x = chain[s, b, k + 1]
                new_e.append(Normal(mu[s, b, k], pol.sigmas[k]).log_prob(x))
                old_e.append(Normal(old["mu"][s, b, k], pol.sigmas[k]).log_prob(x))
                a.append(adv[s, b])
                inds.append(k)
        new_e, old_e = torch.stack(new_e), torch.stack(old_e)
        clamped += int(((new_e < -5) | (new_e > 2)).sum())
        want, want_kl = _dppo_reference(new_e, old_e, torch.stack(a), inds, k_steps, DPPO)
        torch.testing.assert_close(loss[s], want, rtol=1e-4, atol=1e-6)
        torch.testing.assert_close(stats["approx_kl"][s], want_kl, rtol=1e-4, atol=1e-7)
        unclamped, _ = _dppo_reference(new_e, old_e, torch.stack(a), inds, k_steps,
                                       DPPO.model_copy(update={"logp_min": -1e9, "logp_max": 1e9}))
        if scale > 0.1:
            assert not torch.allclose(loss[s], unclamped)
    assert clamped > 0


def test_dppo_kl_stop_ends_a_seeds_update_after_the_exceeding_minibatch() -> None:
    """target_kl 1e-9: a minibatch's approx_kl is measured before its step, so the first one's is 0 (the policy has
    not moved) and the second's exceeds the target; its step is still taken and then the stop fires (DPPO's order):
    exactly two steps per seed and iteration out of 4. target_kl 1e9: all epochs x minibatches steps. A seed trains
    the same beside another as alone (the stop is per seed)."""
    pol = PolicyParams(hidden=8, steps=2, sigma_max=0.3, sigma_min=0.1, init_std=0.5)
    p = PPOParams(n_envs=8, iterations={e: 2 for e in ENVS}, epochs=2, minibatches=2, gamma=0.99, lam=0.95, clip=0.2,
                  tr_reg=1.0, max_grad_norm=0.5, reward_scale={e: 1.0 for e in ENVS}, dppo=DPPO)
    tight = p.model_copy(update={"dppo": DPPO.model_copy(update={"target_kl": 1e-9})})
    loose = p.model_copy(update={"dppo": DPPO.model_copy(update={"target_kl": 1e9})})
    _, rows = train("detour", "dppo", pol, tight, 0.003, 0.1, [7, 8], "cpu")
    assert all(r["updates"] == 2 and r["kl_stop"] == 1 for r in rows) and len(rows) == 4
    _, rows = train("detour", "dppo", pol, loose, 0.003, 0.1, [7, 8], "cpu")
    assert all(r["updates"] == 4 and r["kl_stop"] == 0 for r in rows)
    _, both = train("detour", "dppo", pol, p, 0.03, 0.1, [7, 8], "cpu")
    _, alone = train("detour", "dppo", pol, p, 0.03, 0.1, [8], "cpu")
    for r, a in zip([r for r in both if r["seed"] == 1], alone):
        assert r["updates"] == a["updates"] and r["return"] == pytest.approx(a["return"], rel=1e-5)


def test_seed_adam_counts_steps_in_int64() -> None:
    """Past 2^24 a float32 count stops at 2^24 (2^24 + 1 is not representable); the int64 count goes on, and the bias
    corrections (float64) equal Adam's at that step: a step from zero moments is lr sign(g) there as at step 1."""
    net = mlp(2, 1, 4, [torch.Generator().manual_seed(0)])
    opt = SeedAdam(net.parameters(), 0.01, 1)
    assert opt.t.dtype == torch.int64
    opt.t.fill_(2**24)
    before = [q.detach().clone() for q in net.parameters()]
    opt.zero_grad()
    net(torch.ones(1, 3, 2)).sum().backward()
    grads = [q.grad.clone() for q in net.parameters()]
    opt.step(torch.tensor([True]))
    assert int(opt.t[0]) == 2**24 + 1
    t = 2**24 + 1
    for q, b, g in zip(net.parameters(), before, grads):
        m, v = 0.1 * g.double(), 0.001 * g.double() ** 2
        want = b.double() - 0.01 / (1 - 0.9**t) * m / (v.sqrt() / math.sqrt(1 - 0.999**t) + 1e-8)
        torch.testing.assert_close(q.detach().double(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ENVS)
def test_seed_batched_env_is_each_seed_alone(name: str) -> None:
    """Environments of S = 2 seeds stepped as one [2, n] batch equal each seed's n environments stepped alone (from
    the same generator): in particular the detour's congestion counts only its own seed's batch."""
    both, alone = make_env(name, 5), [make_env(name, 5) for _ in range(2)]
    both.reset([torch.Generator().manual_seed(s) for s in (3, 4)])
    for s, env in zip((3, 4), alone):
        env.reset(torch.Generator().manual_seed(s))
    gen = torch.Generator().manual_seed(5)
    for _ in range(SPECS[name].horizon):
        a = torch.rand(2, 5, SPECS[name].act_dim, generator=gen) * 2 - 1
        obs, reward = both.step(a)
        for i, env in enumerate(alone):
            o, r = env.step(a[i])
            torch.testing.assert_close(obs[i], o)
            torch.testing.assert_close(reward[i], r)


def test_seed_adam_and_clipping_match_torch_per_seed() -> None:
    """Two seeds stacked: per-seed gradient clipping equals clip_grad_norm_ on each seed's copy, SeedAdam equals
    torch.optim.Adam on each seed alone, and an inactive seed is left untouched (no step, no moments)."""
    gens = [torch.Generator().manual_seed(s) for s in (0, 1)]
    net = mlp(3, 2, 8, gens)
    copies = [[torch.nn.Parameter(q.detach()[i].clone()) for q in net.parameters()] for i in range(2)]
    opt, refs = SeedAdam(net.parameters(), 0.01, 2), [torch.optim.Adam(c, lr=0.01) for c in copies]
    x = torch.randn(2, 6, 3, generator=gens[0])
    for step in range(3):
        active = torch.tensor([True, step != 1])
        opt.zero_grad()
        (net(x) ** 2).sum().backward()
        clip_grad_norms(net.parameters(), 0.1)
        opt.step(active)
        for i, (c, ref) in enumerate(zip(copies, refs)):
            if not active[i]:
                continue
            ref.zero_grad()
            h = x[i]
            for j in range(0, 6, 2):
                h = h @ c[j] + c[j + 1]
                h = torch.tanh(h) if j < 4 else h
            (h**2).sum().backward()
            torch.nn.utils.clip_grad_norm_(c, 0.1)
            ref.step()
        for i, c in enumerate(copies):
            for q, r in zip(net.parameters(), c):
                torch.testing.assert_close(q.detach()[i], r.detach())


def test_a_seed_trains_the_same_batched_as_alone() -> None:
    """Seed 8 trained beside seed 7 (one batched computation) gives the rows it gives when trained alone."""
    pol = PolicyParams(hidden=8, steps=2, sigma_max=0.3, sigma_min=0.1, init_std=0.5)
    p = PPOParams(n_envs=8, iterations={e: 2 for e in ENVS}, epochs=2, minibatches=2, gamma=0.99, lam=0.95, clip=0.2,
                  tr_reg=1.0, max_grad_norm=0.5, reward_scale={e: 1.0 for e in ENVS}, dppo=DPPO)
    for method in ("trudi", "gauss", "dppo"):
        _, both = train("detour", method, pol, p, 0.003, 0.1, [7, 8], "cpu")
        _, alone = train("detour", method, pol, p, 0.003, 0.1, [8], "cpu")
        second = [r for r in both if r["seed"] == 1]
        assert len(second) == len(alone) == 2
        for r, a in zip(second, alone):
            assert r["return"] == pytest.approx(a["return"], rel=1e-5) and r["kl"] == pytest.approx(a["kl"], rel=1e-4)


@pytest.mark.parametrize(("iterations", "window"), [(20, 5), (80, 16), (100, 20), (26, 6), (3, 3), (2, 2)])
def test_plateau_window_is_the_larger_of_5_and_a_fifth(iterations: int, window: int) -> None:
    assert plateau_window(iterations, 0.2, 5) == window


def test_plateau_slope_and_noise_sd_against_least_squares() -> None:
    """On the last 8 of 40 points: the slope is numpy's least-squares slope, the noise sd the residual sd on 6
    degrees of freedom, and the 95% t interval is slope +- t_{0.975, 6} se; a 2-point window has no interval."""
    rng = np.random.default_rng(0)
    curve = 0.3 * np.arange(40) + rng.normal(0, 1, 40)
    got = plateau(curve, 0.2, 5)
    x, y = np.arange(32, 40), curve[32:]
    (slope, icpt), rss = np.polyfit(x, y, 1, full=True)[:2]
    sd = math.sqrt(rss[0] / 6)
    half = 2.446912 * sd / math.sqrt(((x - x.mean()) ** 2).sum())
    assert got["window"] == 8 and got["noise_sd"] == pytest.approx(sd, rel=1e-9)
    assert (got["slope"].mean, got["slope"].lo, got["slope"].hi) == pytest.approx((slope, slope - half, slope + half),
                                                                                   rel=1e-5)
    assert math.isnan(plateau(curve[:2], 0.2, 5)["slope"].lo)


def _curves(env: str, trudi: np.ndarray, gauss: np.ndarray, seeds: int = 2) -> pa.Table:
    return pa.Table.from_pylist([{"env": env, "method": m, "setting": "main", "seed": s, "iteration": i,
                                  "return": float(v + s)} for m, c in (("trudi", trudi), ("gauss", gauss))
                                 for s in range(seeds) for i, v in enumerate(c)])


WIGGLE = 0.5 * (-1.0) ** np.arange(200)  # noise sd ~0.5 with no trend


def test_plateau_chooses_the_first_declared_budget_where_both_curves_are_flat() -> None:
    """Curves rising until iteration 60 and flat after: judged on prefixes, budget 40 fails (a rise of 1 per
    iteration against noise sd ~0.5), 80 holds and is the budget chosen; a Gaussian curve still rising at 80
    fails the precondition and leaves the on-par claim inconclusive."""
    flat = WIGGLE[:80] + np.minimum(np.arange(80), 60)
    rising = WIGGLE[:80] + np.arange(80)
    p = P.model_copy(update={"plateau_sweep": {e: [40, 80, 120] for e in ENVS}})
    s = _summaries(True) | {"plateau": {e: plateaus(_curves(e, flat, flat), [40, 80, 120], 0.2, 5, env=e)
                                        for e in ENVS}}
    out = {c.id: c for c in resolve(claims(s, RUNGS, p, PLANS))}
    m = out["plateau_pendulum"].measured
    assert out["plateau_pendulum"].verdict == "holds" and m["by_budget"] == {"40": "fails", "80": "holds"}
    assert m["chosen_budget"] == 80 and m["budget"] == 80 and m["budgets_not_run"] == [120]
    assert m["TruDi"]["window"] == 16 and m["TruDi"]["noise_sd"] == pytest.approx(0.5, abs=0.05)
    s["plateau"]["reacher"] = plateaus(_curves("reacher", flat, rising), [40, 80], 0.2, 5, env="reacher")
    out = {c.id: c for c in resolve(claims(s, RUNGS, p, PLANS))}
    assert out["plateau_reacher"].verdict == "fails" and out["plateau_reacher"].measured["chosen_budget"] is None
    assert out["unimodal_on_par_reacher"].verdict == "inconclusive" and "plateau_reacher" in \
        out["unimodal_on_par_reacher"].reason


def test_reacher_script_is_the_jacobian_transpose_p_controller() -> None:
    """Below saturation a = k J(q)^T (target - tip), J from autograd of the simulator's own tip(q)."""
    torch.manual_seed(0)
    env = Reacher(6)
    env.reset(torch.Generator().manual_seed(1))
    a = scripted.reacher_action(env.obs(), 0.2)
    for i in range(6):
        q, target = env.q[i].clone(), env.target[i]
        probe = Reacher(1)

        def tip(x: torch.Tensor, probe=probe) -> torch.Tensor:
            probe.q = x[None]
            return probe.tip()[0]
        jac = torch.autograd.functional.jacobian(tip, q)
        want = 0.2 * jac.T @ (target - tip(q))
        torch.testing.assert_close(a[i], want.clamp(-1, 1), rtol=1e-5, atol=1e-6)
    assert (a.abs() < 1).all()  # the small gain leaves every action unclipped: the comparison is of the law itself


def test_detour_script_from_the_symmetric_start_is_prepares_split_route(float64) -> None:
    """From the symmetric start the scripted split earns route_returns(n, 1/2) (prepare's independent rollout)."""
    n = 64
    env = make_env("detour", n)
    env.reset(torch.Generator(), jitter=0.0)
    total = 0.0
    for _ in range(SPECS["detour"].horizon):
        total = total + env.step(scripted.detour_action(env, 0.75))[1]
    assert float(total.mean()) == pytest.approx(route_returns(n, 0.5, "cpu"), rel=1e-9)


def test_pendulum_script_pumps_energy_then_catches(float64) -> None:
    """Outside the catch region with E < E* the torque is full and has the sign of thdot (dE/dt = b u thdot >= 0),
    with E > E* the opposite; started near the top it is caught and held, and a swing from below the horizontal is
    pumped up and held within the horizon."""
    rng = np.random.default_rng(0)
    th, thdot = torch.tensor(rng.uniform(0.5, math.pi, 200) * rng.choice([-1, 1], 200)), \
        torch.tensor(rng.uniform(-6, 6, 200))
    u = scripted.pendulum_action(torch.stack([th.cos(), th.sin(), thdot / 8], -1), 2.0)[:, 0]
    below = thdot**2 / 2 + 15.0 * th.cos() < 15.0
    assert (u.abs() == 1).all()
    assert (torch.where(below, u * thdot, -u * thdot) >= 0).all()
    env = Pendulum(2)
    env.th, env.thdot = torch.tensor([0.2, math.pi - 0.3]), torch.tensor([0.0, 0.5])
    for _ in range(SPECS["pendulum"].horizon):
        env.step(scripted.pendulum_action(env.obs(), 2.0))
    assert (torch.remainder(env.th + math.pi, 2 * math.pi) - math.pi).abs().max() < 0.05


def _seeds(x: float, spread: float = 0.1, n: int = 5) -> np.ndarray:
    return x + spread * np.linspace(-1, 1, n)


def _summaries(trudi_better: bool, kl_gauss: float = 0.1, one_mode_optimal: bool = False) -> dict:
    """Per-seed summaries with every regime precondition met (unless ``kl_gauss`` unmatches the step sizes or
    ``one_mode_optimal`` makes the scripted split batch no better than the one-sided one)."""
    sign = 1.0 if trudi_better else -1.0
    competence = {f"{e}/{m}/{st}": {"returns": _seeds(10.0), "seeds": list(range(5)), "env": e}
                  for e, m, st in [("detour", "trudi", "main"), ("detour", "gauss", "main"),
                                   ("pendulum", "trudi", "main"), ("pendulum", "gauss", "main"),
                                   ("reacher", "trudi", "main"), ("reacher", "gauss", "main"),
                                   ("reacher", "dppo", "base"), ("reacher", "final", "base"),
                                   ("reacher", "trudi", "stress")]}
    stress = {"env": "reacher", "lr": 0.03, "max_kl_trudi": _seeds(0.1, 0.01), "max_kl_dppo": _seeds(100.0, 1.0),
              "max_kl_final": _seeds(10.0, 0.5) ** 1.1, "max_kl_clip": _seeds(1000.0, 10.0),
              **{f"mean_kl_{m}": _seeds(0.05, 0.01) for m in ("trudi", "dppo", "final", "clip")},
              "return_trudi": _seeds(-10.0), "return_dppo": _seeds(-10 - sign, 0.3),
              "return_final": _seeds(-10 - sign, 0.2), "return_clip": _seeds(-15.0, 0.4),
              "base_return_clip": _seeds(-5.0, 0.4),
              **{f"drop_{m}": _seeds(0.5) for m in ("trudi", "dppo", "final", "clip")}}
    detour = {"coverage_trudi": _seeds(0.4 if trudi_better else 0.05, 0.02), "coverage_gauss": _seeds(0.0, 0.0),
              "coverage_det_trudi": _seeds(0.0, 0.0), "return_trudi": _seeds(-20 + sign), "return_gauss": _seeds(-20, 0.3)}
    par = {e: {"return_trudi": _seeds(-30 + (0 if trudi_better else -50)), "return_gauss": _seeds(-30),
               "mean_kl_trudi": _seeds(0.1, 0.001), "mean_kl_gauss": _seeds(kl_gauss, 0.002), "gain_gauss": _seeds(100.0, 3.0)}
           for e in ("pendulum", "reacher")}
    flat = {m: {40: plateau(WIGGLE[:40], 0.2, 5)} for m in ("trudi", "gauss")}
    sweep = {"env": "detour", "epsilons": [0.1, 1.0], "mean_kl": [], "return": [], "kl_increasing": trudi_better}
    return {"stress": stress, "detour": detour, "par": par, "plateau": {e: flat for e in ENVS}, "sweep": sweep,
            "competence": competence,
            "throughput": {}, "throughput_constant": trudi_better,
            "routes": {"one_sided": -30.0, "split": -30.0 if one_mode_optimal else -24.0}}


P = ClaimParams(kl_factor=2.0, par_tol=0.2, min_coverage=0.2, plateau_window=0.2, plateau_min_iterations=5,
                plateau_sweep={e: [20, 40] for e in ENVS})
PLAN = SamplePlan(unit="seed", n=5, basis="budget", effect=None, power=None, pilot_n=0, pilot_sd=None, looks=1,
                  spending="none", why="the test's seeds, fixed by the test")
PLANS = Plans(seeds=PLAN, stress_seeds=PLAN, plateau=PLAN.model_copy(update={"unit": "iteration", "basis": "design"}))
RUNGS = {e: {"zero-action policy": -20.0, "uniform random-action policy": -25.0, "scripted controller": _seeds(-5.0),
             "random-search linear controller": _seeds(0.0, 0.5)} for e in (*ENVS, "stress")}


def _verdicts(s: dict, rungs: dict | None = None) -> dict[str, str]:
    return {c.id: c.verdict for c in resolve(claims(s, rungs or RUNGS, P, PLANS))}


def test_claims_hold_or_fail_on_the_numbers_once_the_regime_is_reached() -> None:
    """Every measured precondition met: TruDi ahead makes every comparison hold; TruDi behind makes them fail; a
    detour whose scripted split earns no more than one route leaves the coverage claim inconclusive."""
    good, bad = _verdicts(_summaries(True)), _verdicts(_summaries(False))
    pre = [k for k in good if k.startswith(("competent_", "stress_", "step_size", "plateau_", "detour_rewards"))]
    assert pre and all(good[k] == bad[k] == "holds" for k in pre)
    compared = ("stable_where_clip_unstable", "whole_chain_beats_final_step_constraint", "multimodal_beats_gaussian",
                "multimodal_captures_both_modes", "unimodal_on_par_pendulum", "unimodal_on_par_reacher")
    assert all(good[k] == "holds" for k in compared) and all(bad[k] == "fails" for k in compared), (good, bad)
    one_mode = _verdicts(_summaries(True, one_mode_optimal=True))
    assert one_mode["detour_rewards_both_modes"] == "fails"
    assert one_mode["multimodal_captures_both_modes"] == "inconclusive"
    assert good["epsilon_sensitivity"] == "holds" and bad["epsilon_sensitivity"] == "fails"


def test_clip_ablation_is_reported_beside_the_stability_claim_and_judged_by_none() -> None:
    """The stability claim judges DPPO as published: its verdict and interval are DPPO's, and moving the clip
    ablation's returns to either side of TruDi's changes neither; the ablation's paired differences (TruDi - clip,
    DPPO - clip) and its KL sit beside it, and no claim is about the ablation."""
    s = _summaries(True)
    out = {c.id: c for c in resolve(claims(s, RUNGS, P, PLANS))}
    stable = out["stable_where_clip_unstable"]
    assert stable.verdict == "holds" and stable.measured["return_trudi_minus_dppo"]["mean"] == pytest.approx(1.0)
    ab = stable.measured["ablation_clip"]
    assert "clip 0.2" in ab["what"] and ab["return_trudi_minus_clip"]["mean"] == pytest.approx(5.0)
    assert ab["return_dppo_minus_clip"]["mean"] == pytest.approx(4.0)
    assert ab["log_max_kl_clip_over_trudi"]["mean"] == pytest.approx(float(np.mean(np.log(
        s["stress"]["max_kl_clip"]) - np.log(s["stress"]["max_kl_trudi"]))), abs=1e-4)
    assert not [c for c in out if "clip" in c and c != "stable_where_clip_unstable"]
    for shift in (-20.0, 20.0):
        moved = _summaries(True)
        moved["stress"]["return_clip"] = moved["stress"]["return_clip"] + shift
        again = {c.id: c for c in resolve(claims(moved, RUNGS, P, PLANS))}["stable_where_clip_unstable"]
        assert again.verdict == stable.verdict and again.measured["return_trudi_minus_dppo"] == \
            stable.measured["return_trudi_minus_dppo"]


def test_on_par_is_inconclusive_when_the_step_sizes_are_not_matched() -> None:
    """Gaussian PPO stepping 10x less far per update than TruDi: TruDi far behind is not reported as failing the
    on-par claim; the reason names the unmatched step size."""
    out = {c.id: c for c in resolve(claims(_summaries(False, kl_gauss=0.01), RUNGS, P, PLANS))}
    assert out["step_size_matched_pendulum"].verdict == "fails"
    on_par = out["unimodal_on_par_pendulum"]
    assert on_par.verdict == "inconclusive" and "step_size_matched_pendulum" in on_par.reason
    assert "judged alone: fails" in on_par.reason
    assert out["stable_where_clip_unstable"].verdict == "fails"


def test_competence_is_judged_against_the_strongest_rung() -> None:
    """A controller above the configurations' returns on reacher is the judged rung (the next one recorded): every
    reacher configuration fails it and the reacher evidence is inconclusive; a controller below the zero-action policy
    leaves that policy the judged rung when the scripted one is below it too."""
    strong = RUNGS | {"reacher": RUNGS["reacher"] | {"random-search linear controller": _seeds(15.0, 0.5)}}
    out = {c.id: c for c in resolve(claims(_summaries(True), strong, P, PLANS))}
    claim = out["competent_reacher_trudi_main"]
    assert claim.verdict == "fails" and claim.against == "random-search linear controller"
    assert [r.name for r in claim.ladder.rungs][:2] == ["random-search linear controller", "scripted controller"]
    assert out["unimodal_on_par_reacher"].verdict == "inconclusive" == out["stable_where_clip_unstable"].verdict
    assert out["unimodal_on_par_pendulum"].verdict == "holds"
    weak = RUNGS | {"detour": RUNGS["detour"] | {"random-search linear controller": _seeds(-40.0, 0.5),
                                                 "scripted controller": _seeds(-30.0)}}
    assert {c.id: c for c in claims(_summaries(True), weak, P, PLANS)}["competent_detour_trudi_main"].against \
        == "zero-action policy"


@pytest.mark.parametrize("name", ENVS)
def test_controller_at_zero_weights_is_the_zero_action_policy(name: str) -> None:
    """W = 0 acts 0 everywhere: its return over n episodes is rollout.constant_action_returns' zero-action return
    from the same generator's initial states (an independent rollout)."""
    spec = SPECS[name]
    w = torch.zeros(1, 1, spec.act_dim, spec.obs_dim + 1)
    got = controller.returns(name, w, 64, [torch.Generator().manual_seed(5)], "cpu")
    want = constant_action_returns(name, 64, torch.Generator().manual_seed(5), "cpu", 0.0)
    assert got.shape == (1, 1) and float(got[0, 0]) == pytest.approx(want, rel=1e-6)


def test_controller_candidates_are_separate_batches() -> None:
    """Three candidates of m = 4 detour episodes in one call return what each earns alone on its own slice of the
    initial states (a loop over candidates; the congestion share is each candidate's own batch)."""
    torch.manual_seed(0)
    spec, m, c = SPECS["detour"], 4, 3
    w = torch.randn(1, c, spec.act_dim, spec.obs_dim + 1)
    got = controller.returns("detour", w, m, [torch.Generator().manual_seed(2)], "cpu")[0]
    start = make_env("detour", c * m)
    start.reset([torch.Generator().manual_seed(2)])
    for k in range(c):
        env = make_env("detour", m)
        env.p, env.t, total = start.p[:, k * m:(k + 1) * m].clone(), 0, 0.0
        for _ in range(spec.horizon):
            a = (torch.cat([env.obs(), torch.ones(1, m, 1)], -1) @ w[0, k].T).clamp(-1, 1)
            total = total + env.step(a)[1]
        assert float(got[k]) == pytest.approx(float(total.mean()), rel=1e-5)


def test_random_search_climbs_a_quadratic(monkeypatch) -> None:
    """With returns -||W - W*||^2 the ARS V1 step follows the gradient's direction: the distance to W* shrinks, and
    one iteration's step matches alpha / (N sigma_R) sum_k (r_k^+ - r_k^-) delta_k computed by hand."""
    target = torch.full((1, 2, 9), 0.5)
    monkeypatch.setattr(controller, "returns", lambda env, w, m, gens, dev: -((w - target[:, None]) ** 2).sum((-1, -2)))
    far = float(((torch.zeros_like(target) - target) ** 2).sum())
    w = controller.random_search("reacher", [torch.Generator().manual_seed(1)], 200, 64, 8, 0.05, 0.1, "cpu")
    assert float(((w - target) ** 2).sum()) < 0.2 * far
    one = controller.random_search("reacher", [torch.Generator().manual_seed(3)], 1, 64, 8, 0.05, 0.1, "cpu")
    delta = controller.seeded_randn([torch.Generator().manual_seed(3)], 8, 2, 9)
    r = -torch.cat([(0.1 * delta - target[:, None]) ** 2, (-0.1 * delta - target[:, None]) ** 2], 1).sum((-1, -2))
    step = 0.05 / 8 * torch.einsum("sk,skad->sad", (r[:, :8] - r[:, 8:]) / r.std(1, keepdim=True), delta)
    torch.testing.assert_close(one, step)


def test_smoke_pipeline_trains_every_configuration(smoke_runs) -> None:
    """Every configuration is evaluated on every seed with finite returns; kernel counts do not grow with n."""
    runs = smoke_runs(SLUG)
    evals = read_table(runs["evaluate"] / "evals.parquet").to_pylist()
    configs = {(r["env"], r["method"], r["setting"]) for r in evals}
    assert {(e, m, "main") for e in ENVS for m in ("trudi", "gauss")} <= configs
    assert {("reacher", m, st) for m in ("trudi", "dppo", "final", "clip") for st in ("base", "stress")} - \
        {("reacher", "trudi", "base")} <= configs
    assert not [c for c in runs.metrics()["claims"] if c["id"].startswith("competent_") and "clip" in c["id"]]
    stable = next(c for c in runs.metrics()["claims"] if c["id"] == "stable_where_clip_unstable")
    assert math.isfinite(stable["measured"]["ablation_clip"]["return_trudi_minus_clip"]["mean"])
    assert all(math.isfinite(r["return_stoch"]) and math.isfinite(r["return_det"]) for r in evals)
    kl_gauss = [r["mean_kl"] for r in evals if (r["env"], r["method"], r["setting"]) == ("pendulum", "gauss", "main")]
    eps_trudi = {r["epsilon"] for r in evals if (r["env"], r["method"], r["setting"]) == ("pendulum", "trudi", "main")}
    assert len(eps_trudi) == 1 and eps_trudi.pop() == pytest.approx(float(np.mean(kl_gauss)))  # matched step size
    ladder = json.loads((runs["baselines"] / "baselines.json").read_text())
    assert ladder["reacher"]["seeds"] == [0, 1] == ladder["pendulum"]["seeds"] and ladder["stress"]["seeds"] == [0, 1, 2]
    stress = [r for r in evals if (r["env"], r["setting"]) == ("reacher", "stress")]
    base = {(r["method"], r["seed"]): r["return_stoch"] for r in evals if r["setting"] == "base"}
    assert all(r["return_stoch"] != base.get((r["method"], r["seed"])) for r in stress)  # fresh seeds, not base's
    assert all(math.isfinite(x) for v in ladder.values() for k in ("controller", "scripted") for x in v[k])
    assert all(len(v["scripted"]) == len(v["seeds"]) for v in ladder.values())
    assert all(len(c["ladder"]) == 4 for c in runs.metrics()["claims"] if c["id"].startswith("competent_"))
    tp = read_table(runs["prepare"] / "throughput.parquet").to_pylist()
    assert "steps_per_second" not in tp[0]  # no wall clock in a cached output
    for name in ENVS:
        assert len({r["kernels_per_call"] for r in tp if r["env"] == name}) == 1
