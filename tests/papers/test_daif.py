"""daif science against independent oracles: the quantile loss against the empirical CDF and scipy's quantiles,
the information gain against its closed form and under accumulating data, DeepSea against brute-force enumeration,
the random policy's exact chance of DeepSea's reward against enumeration, an agent solving a tiny chain, the NIG
critic's loss, moments and shrinking epistemic variance against scipy and the conjugate NIG update, the
statistics against scipy, the baseline ladder's controllers (open-loop search against the enumerated DeepSea optimum,
the search's step budget, a known CartPole balancer), the claims' verdicts (inconclusive where a compared agent is
not competent, judged against the strongest rung), the NIG competence stage's extra seeds (kept off the paired
tasks; the power argument of its plan) and the smoke run. The platform contract is checked for every paper by tests/test_paper_contract.py."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from paperdag.common.plans import SamplePlan
from paperdag.common.stats import mean_ci, paired_diff_ci
from paperdag.common.verdicts import resolve, superiority
from paperdag.io import read_table
from paperdag.papers.daif.agents import Batch, Learner, agent_spec, select_actions
from paperdag.papers.daif.claims import claims, learns
from paperdag.papers.daif.competence import competence_seeds
from paperdag.papers.daif.curves import binned_curve
from paperdag.papers.daif import ladder
from paperdag.papers.daif.envs import DeepSea, make_env, optimal_return, spec_of, trivial_return
from paperdag.papers.daif.evaluate import stage_seeds
from paperdag.papers.daif.free_energy import (
    expected_free_energy,
    information_gain,
    variance,
)
from paperdag.papers.daif.networks import Critic
from paperdag.papers.daif.nig import (
    NIGCritic,
    epistemic_variance,
    evidential_loss,
    nig_free_energy,
)
from paperdag.papers.daif.params import ClaimParams, Params, Plans
from paperdag.papers.daif.pipeline import AGENTS, COMPETENCE, NIG
from paperdag.papers.daif.quantile import midpoints, quantile_huber_loss
from paperdag.papers.daif.nig_grid import pick
from paperdag.papers.daif.reach import (
    commit_episodes,
    first_success,
    random_reach_probability,
    random_success_probability,
    reach_summary,
    solve_episode,
)
from paperdag.papers.daif.training import Hyper, free_energy_weights, train_agent
from paperdag.params import load_params, read_params_file

SLUG = "daif"


@pytest.fixture(autouse=True)
def _one_thread():
    """One intra-op thread, as the stages run (small batched ops; avoids thread contention on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_pinball_gradient_is_empirical_cdf_minus_tau() -> None:
    """kappa = 0: d/d theta_i mean_j rho_tau_i(T_j - theta_i) = F_n(theta_i) - tau_i (F_n: empirical CDF)."""
    rng = np.random.default_rng(0)
    target = torch.as_tensor(rng.standard_normal(501))
    theta = torch.linspace(-1.5, 1.5, 8, dtype=torch.float64).requires_grad_(True)
    quantile_huber_loss(theta, target, kappa=0.0).backward()
    cdf = (target[None, :] < theta.detach()[:, None]).double().mean(1)
    assert torch.allclose(theta.grad, cdf - midpoints(8).double(), atol=1e-12)


def test_quantile_huber_gradient_matches_closed_form() -> None:
    """kappa > 0: d/d theta_i = -mean_j |tau_i - 1{u_ij < 0}| clip(u_ij, -kappa, kappa) / kappa, u = T_j - theta_i."""
    rng = np.random.default_rng(1)
    target = torch.as_tensor(rng.normal(size=40) * 3)
    theta = torch.as_tensor(rng.normal(size=5)).requires_grad_(True)
    quantile_huber_loss(theta, target, kappa=1.0).backward()
    u = target[None, :] - theta.detach()[:, None]
    tau = midpoints(5).double()[:, None]
    expected = -((tau - (u < 0).double()).abs() * u.clamp(-1.0, 1.0)).mean(1)
    assert torch.allclose(theta.grad, expected, atol=1e-12)


def test_quantile_loss_is_stationary_at_the_true_quantiles() -> None:
    """Targets at 2000 equally spaced probability levels of Exp(1): the gradient vanishes (|.| <= 1/2000) at scipy's
    expon.ppf(tau_i) and points back towards it from either side, for the pinball and the Huber version."""
    target = torch.as_tensor(stats.expon.ppf((np.arange(2000) + 0.5) / 2000))
    true = torch.as_tensor(stats.expon.ppf(midpoints(8).double().numpy()))
    for kappa in (0.0, 1e-4):
        grads = []
        for shift in (0.0, -0.1, 0.1):
            theta = (true + shift).requires_grad_(True)
            quantile_huber_loss(theta, target, kappa).backward()
            grads.append(theta.grad)
        assert grads[0].abs().max() <= 1 / 2000 + 1e-9
        assert (grads[1] < 0).all() and (grads[2] > 0).all()


def test_information_gain_closed_form_and_limits() -> None:
    """IG = (1/2K) sum_k log(1 + Var_m / (mean_m Var_k + sigma_0^2)) by numpy; zero when members agree; G adds
    -lambda IG to minus the posterior mean."""
    rng = np.random.default_rng(2)
    z = rng.normal(size=(6, 3, 5))  # members, actions, quantiles
    ale = z.var(axis=2).mean(axis=0)
    oracle = 0.5 * np.log1p(z.var(axis=0) / (ale[:, None] + 0.1)).mean(axis=1)
    zt = torch.as_tensor(z)
    assert np.allclose(information_gain(zt, 0.1).numpy(), oracle)
    agree = torch.as_tensor(np.broadcast_to(z[:1], z.shape).copy())
    assert torch.allclose(information_gain(agree, 0.1), torch.zeros(3, dtype=torch.float64))
    g = expected_free_energy(zt, 2.0, 0.1)
    assert np.allclose(g.numpy(), -z.mean(axis=(0, 2)) - 2.0 * oracle)


def test_antithetic_priors_cancel_in_the_ensemble_mean() -> None:
    """With the trainable part zeroed, members 2j and 2j + 1 are exactly opposite and the mean is 0."""
    critic = Critic(6, 5, 16, 3, 4, 10.0, torch.Generator().manual_seed(0))
    for p in critic.net.parameters():
        p.data.zero_()
    z = critic(torch.randn(7, 5).expand(6, 7, 5))  # every member sees the same inputs
    assert torch.allclose(z.mean(0), torch.zeros(7, 3, 4), atol=1e-6) and z.abs().max() > 0.1


def test_one_hot_learner_computes_the_plain_learners_loss() -> None:
    """On a finite state space the learner that takes states (first layer reading W1[s], the prior's table and the
    target network's table: networks.tabulate / lookup) gives the TD loss, gradients and values of the plain learner,
    which multiplies one-hot vectors e_s through every layer (same initial weights, same transitions, over updates
    and target syncs)."""
    spec, states, critics = agent_spec("daif", 4, 4, 10.0, 1.0), 9, 3 * 4
    plain, tabled = (Learner(spec, 3, states, 2, 16, 1e-3, 0.9, 1.0, 0.01, torch.Generator().manual_seed(5), "cpu",
                             one_hot=flag) for flag in (False, True))
    gen = torch.Generator().manual_seed(6)
    for _ in range(3):
        s, s_next = (torch.randint(0, states, (critics, 32), generator=gen) for _ in range(2))
        action, reward = torch.randint(0, 2, (critics, 32), generator=gen), torch.randn(critics, 32, generator=gen)
        one_hot = Batch(torch.nn.functional.one_hot(s, states).float(), action, reward,
                        torch.nn.functional.one_hot(s_next, states).float(), torch.zeros(critics, 32))
        indexed = Batch(s, action, reward, s_next, torch.zeros(critics, 32))
        for learner, batch in ((plain, one_hot), (tabled, indexed)):
            learner.sync_target()
            learner.optimizer.zero_grad()
            learner.loss(batch).backward()
        assert torch.allclose(plain.loss(one_hot), tabled.loss(indexed), rtol=1e-6)
        for p, q in zip(plain.online.net.parameters(), tabled.online.net.parameters(), strict=True):
            assert torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6), (p.grad - q.grad).abs().max()
        plain.optimizer.step()
        tabled.optimizer.step()
    obs = torch.eye(states)[:3]
    assert torch.allclose(plain.values(obs), tabled.values(obs), rtol=1e-6, atol=1e-6)


def test_variance_is_torch_var() -> None:
    """free_energy.variance (two passes in float64) against torch.var (Welford in float64) along either axis."""
    z = torch.randn(10, 32, 8, 2, 8, generator=torch.Generator().manual_seed(7)) * 3 + 5
    for dim in (-3, -1):
        assert torch.allclose(variance(z, dim), z.var(dim=dim, unbiased=False), rtol=1e-6, atol=0)


def test_information_gain_shrinks_as_data_accumulates() -> None:
    """A one-state bandit with rewards N(a, 0.5^2): data on action 0 alone collapses IG(a=0) while IG(a=1) stays
    high; once action 1's data arrives, IG(a=1) collapses too."""
    gen = torch.Generator().manual_seed(0)
    learner = Learner(agent_spec("daif", 8, 8, 10.0, 1.0), 1, 1, 2, 32, 3e-3, 0.9, 1.0, 0.01, gen, "cpu")
    rng = np.random.default_rng(3)
    obs = torch.ones(1, 1)
    ig = [information_gain(learner.values(obs).detach(), 0.01)[0]]
    for arms in ([0], [0, 1]):
        actions = rng.choice(arms, size=64)
        rewards = actions + 0.5 * rng.standard_normal(64)
        for _ in range(100):
            idx = np.broadcast_to(rng.integers(0, 64, size=(1, 32)), (8, 32))
            batch = Batch(torch.ones(8, 32, 1), torch.as_tensor(actions[idx]),
                          torch.as_tensor(rewards[idx], dtype=torch.float32), torch.ones(8, 32, 1), torch.ones(8, 32))
            learner.update(batch)
        ig.append(information_gain(learner.values(obs).detach(), 0.01)[0])
    assert ig[1][0] < 0.2 * ig[0][0] and ig[1][1] > 0.5 * ig[0][1], ig
    assert ig[2][1] < 0.2 * ig[0][1], ig


def test_nig_loss_and_moments_match_scipy() -> None:
    """With reg = 0 the evidential loss is -log of scipy's Student-t density with 2 alpha dof, location gamma and
    scale^2 beta (1 + nu) / (nu alpha); beta / (nu (alpha - 1)) is the variance of mu under NIG draws (scipy
    invgamma, then normal); the regulariser adds reg |y - gamma| (2 nu + alpha); G by numpy."""
    rng = np.random.default_rng(5)
    y, gamma = rng.normal(size=6), rng.normal(size=6)
    nu, alpha, beta = rng.uniform(0.2, 3, 6), rng.uniform(1.5, 4, 6), rng.uniform(0.1, 2, 6)
    args = [torch.as_tensor(a) for a in (y, gamma, nu, alpha, beta)]
    oracle = -stats.t.logpdf(y, 2 * alpha, loc=gamma, scale=np.sqrt(beta * (1 + nu) / (nu * alpha)))
    assert np.allclose(evidential_loss(*args, reg=0.0).numpy(), oracle)
    assert np.allclose(evidential_loss(*args, reg=0.3).numpy(), oracle + 0.3 * np.abs(y - gamma) * (2 * nu + alpha))
    sigma2 = stats.invgamma.rvs(3.0, scale=0.8, size=400_000, random_state=6)
    mu = stats.norm.rvs(0.0, np.sqrt(sigma2 / 2.0), random_state=7)
    v = epistemic_variance(torch.tensor(2.0), torch.tensor(3.0), torch.tensor(0.8)).item()
    assert v == pytest.approx(0.8 / (2.0 * 2.0)) and mu.var() == pytest.approx(v, rel=0.02)
    g, var = rng.normal(size=(3, 2, 4)), rng.uniform(0, 1, size=(3, 2, 4))
    ig = 0.5 * np.log1p(var / (g.var(axis=-1, keepdims=True) + 0.01)).mean(-1)
    out = nig_free_energy(torch.as_tensor(g), torch.as_tensor(var), 2.0, 0.01).numpy()
    assert np.allclose(out, -g.mean(-1) - 2.0 * ig)


def test_nig_epistemic_variance_shrinks_as_data_on_a_state_grows() -> None:
    """Observations y ~ N(0.5, 0.1^2) of one state, one evidential Adam step each (as online TD learning sees them):
    the learned Var[mu] = beta / (nu (alpha - 1)) falls at every checkpoint n = 10, 100, 1000 and ends below 5% of
    its start, as the closed-form conjugate NIG update from the head's initial (gamma, nu, alpha, beta) with the same
    data does (nu_n = nu_0 + n, alpha_n = alpha_0 + n / 2, beta_n = beta_0 + S_n / 2 + n nu_0 (ybar - gamma_0)^2 /
    (2 (nu_0 + n)), S_n the sum of squared deviations from ybar)."""
    critic = NIGCritic(1, 2, 16, 1, 1, torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    state = torch.tensor([[[1.0, 0.0]]])
    with torch.no_grad():
        g0, nu0, a0, b0 = (t.item() for t in critic(state))
    ys = 0.5 + 0.1 * np.random.default_rng(8).standard_normal(1000)
    learned, exact = [], []
    for n, y in enumerate(ys, start=1):
        loss = evidential_loss(torch.tensor(y, dtype=torch.float32), *critic(state), reg=0.01).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if n in (10, 100, 1000):
            with torch.no_grad():
                learned.append(epistemic_variance(*critic(state)[1:]).item())
            seen = ys[:n]
            beta = b0 + 0.5 * ((seen - seen.mean())**2).sum() + n * nu0 * (seen.mean() - g0)**2 / (2 * (nu0 + n))
            exact.append(beta / ((nu0 + n) * (a0 + n / 2 - 1)))
    start = b0 / (nu0 * (a0 - 1))
    assert np.all(np.diff([start, *exact]) < 0) and exact[-1] < 0.05 * start, exact
    assert np.all(np.diff([start, *learned]) < 0) and learned[-1] < 0.05 * start, (start, learned)


def test_deepsea_optimum_matches_brute_force_enumeration() -> None:
    """Backward induction equals the best of all 2^N action sequences, bsuite's optimal return 1 - 0.01; exactly one
    sequence (all right) earns the +1: 'left, then N - 1 rights' ends in column N - 1 but pays nothing."""
    for size, mapping in ((6, 5), (10, 3)):
        env = DeepSea(size, mapping_seed=mapping)
        best, winners = -np.inf, 0
        for seq in itertools.product((0, 1), repeat=size):
            env.reset()
            total = sum(env.step(a)[1] for a in seq)
            best, winners = max(best, total), winners + (total > 0.5)
        assert optimal_return(env, size) == pytest.approx(best, abs=1e-12) == pytest.approx(0.99, abs=1e-12)
        assert winners == 1
        env.reset()
        rights = env.right_action
        first_left = [1 - rights[0, 0]] + [rights[r, r - 1] for r in range(1, size)]  # left, then right every row
        assert sum(env.step(a)[1] for a in first_left) == pytest.approx(-0.01 * (size - 1) / size)


class BsuiteDeepSea:
    """A transcription of bsuite's deterministic DeepSea (bsuite/environments/deep_sea.py, DeepSea(size,
    deterministic=True, unscaled_move_cost=0.01, randomize_actions=True, mapping_seed)): its mapping draw, ``_reset``
    and ``_step`` (reward, transition, bad-episode flag, termination), statement by statement, on numpy alone."""

    def __init__(self, size: int, mapping_seed: int) -> None:
        self._size, self._unscaled_move_cost = size, 0.01
        self._action_mapping = np.random.RandomState(mapping_seed).binomial(1, 0.5, [size, size])
        self._row = self._column = 0
        self._bad_episode = False

    def _reset(self) -> None:
        self._row, self._column, self._bad_episode = 0, 0, False

    def _step(self, action: int) -> tuple[float, bool, tuple[int, int] | None]:
        reward = 0.0
        action_right = action == self._action_mapping[self._row, self._column]
        if self._column == self._size - 1 and action_right:
            reward += 1.0
        if action_right:
            self._column = np.clip(self._column + 1, 0, self._size - 1)
            reward -= self._unscaled_move_cost / self._size
        else:
            if self._row == self._column:
                self._bad_episode = True
            self._column = np.clip(self._column - 1, 0, self._size - 1)
        self._row += 1
        position = None if self._row >= self._size else (self._row, int(self._column))
        return reward, self._row == self._size, position


def test_deepsea_steps_as_bsuites_step_on_random_action_sequences() -> None:
    """For N = 6 and 10, several mapping seeds and random action sequences (many episodes each): our DeepSea's
    reward, termination and observed cell match the transcription of bsuite's ``_step`` at every step; the mapping is
    bsuite's draw; an episode earns the +1 iff bsuite calls it good (no bad step)."""
    rng = np.random.default_rng(80)
    for size in (6, 10):
        for mapping in (0, 1, 17):
            ours, ref = DeepSea(size, mapping), BsuiteDeepSea(size, mapping)
            assert np.array_equal(ours.right_action, ref._action_mapping)
            for episode in range(300):
                ours.reset()
                ref._reset()
                # biased sequences too, so that the rewarded path and its neighbours occur
                bias = rng.random() if episode % 2 else 0.5
                total, done, steps = 0.0, False, 0
                while not done:
                    right = ref._action_mapping[ref._row, ref._column]
                    a = int(right if rng.random() < bias else rng.integers(2)) if episode % 3 == 0 else \
                        int(rng.integers(2))
                    obs, r, done, truncated, _ = ours.step(a)
                    r_ref, done_ref, position = ref._step(a)
                    assert r == pytest.approx(r_ref, abs=1e-15) and done == done_ref and not truncated
                    if position is not None:
                        assert obs == position[0] * size + position[1]
                    total, steps = total + r, steps + 1
                assert steps == size and (total > 0.5) == (not ref._bad_episode)


def test_trivial_policies_almost_never_reach_deepsea_reward() -> None:
    """Random policy success 2^-N: its mean return on N = 8 is below 0.05; on CartPole a constant push falls
    sooner than random play (~22 steps), and ``best`` is the maximum."""
    triv = trivial_return("deepsea", 8, 8, 200, [0, 1])
    assert triv["random"] < 0.05
    pole = trivial_return("cartpole", 0, 200, 50, [0])
    assert pole["constant_0"] < pole["random"] == pole["best"] and 15 < pole["random"] < 30


def test_free_energy_agent_solves_a_tiny_chain() -> None:
    """DeepSea N = 5 (random policy succeeds 1 episode in 32; 400 episodes): DAIF's greedy policy earns the +1 for
    every seed (within 0.01 of the optimum)."""
    task = spec_of("deepsea", "deepsea", 5, 5)
    h = Hyper(hidden=32, lr=1e-3, gamma=0.99, batch=16, buffer=2000, learning_starts=50, train_every=1,
              target_every=50, kappa=1.0, eps_start=1.0, eps_end=0.05, eps_decay_frac=0.3, noise_floor=0.01)
    out = train_agent(task, agent_spec("daif", 4, 8, 10.0, 1.0), h, [0, 1, 2], 2000, 1, "cpu")
    assert (np.array(out.eval_return) > task.optimal_return - 0.01).all(), out.eval_return


def test_curves_and_intervals_against_scipy() -> None:
    """Bins average the episodes that end in them and carry values over gaps; t intervals match scipy."""
    curve = binned_curve(np.array([1, 2, 9]), np.array([1.0, 3.0, 5.0]), 10, 5, start=-1.0)  # bins 0, 0, 4
    assert curve.tolist() == [2.0, 2.0, 2.0, 2.0, 5.0]
    x = np.array([0.3, 0.5, 0.9, 0.4])
    lo, hi = stats.t.interval(0.9, 3, loc=x.mean(), scale=stats.sem(x))
    iv = mean_ci(x, 0.9)
    assert iv.lo == pytest.approx(lo) and iv.hi == pytest.approx(hi)
    assert paired_diff_ci(x + 1, x, 0.9).lo == pytest.approx(1.0)


def test_posterior_sampling_acts_greedily_on_the_sampled_member() -> None:
    """Per-episode posterior sampling: each seed plays argmax_a mean_k theta_mk(s, a) of its own sampled member m,
    which differs from the ensemble-mean action where members disagree."""
    z = torch.zeros(2, 3, 2, 4)  # seeds, members, actions, quantiles
    z[:, 0, 0], z[:, 1, 1], z[:, 2, 1] = 1.0, 1.0, 1.0  # member 0 prefers action 0, members 1 and 2 action 1
    spec = agent_spec("daif_lam0_ps", 4, 3, 10.0, 1.0)
    rng = np.random.default_rng(0)
    assert select_actions(spec, z, 0.0, 0.01, rng, np.array([0, 1])).tolist() == [0, 1]
    assert select_actions(spec, z, 0.0, 0.01, rng, np.array([2, 0])).tolist() == [1, 0]
    eps = agent_spec("daif_lam0_eps", 4, 3, 10.0, 1.0)  # epsilon 0: greedy on the posterior mean
    assert select_actions(eps, z, 0.0, 0.01, rng, np.array([0, 0])).tolist() == [1, 1]


def test_bsuite_solve_episode_matches_a_direct_count() -> None:
    """solve_episode = the first e with (bad episodes among the first e) / e < threshold, by a plain loop."""
    rng = np.random.default_rng(4)
    for _ in range(50):
        returns = np.where(rng.random(40) < rng.random(), 0.99, -0.01)
        expected = next((e for e in range(1, 41) if sum(returns[:e] <= 0.5) / e < 0.8), None)
        assert solve_episode(returns, 0.8) == expected
    assert solve_episode(np.full(10, -0.01), 0.8) is None and solve_episode(np.array([0.99]), 0.8) == 1


def test_random_policy_reach_chance_matches_enumeration() -> None:
    """p = fraction of all 2^N action sequences that earn the +1 (each equally likely under the uniform random
    policy), for several sizes and mappings; 2^-N in closed form; first_success finds the first rewarded episode."""
    for size, mapping in ((4, 0), (6, 5), (7, 2)):
        env, wins = DeepSea(size, mapping), 0
        for seq in itertools.product((0, 1), repeat=size):
            env.reset()
            wins += sum(env.step(a)[1] for a in seq) > 0.5
        assert random_success_probability(size) == pytest.approx(wins / 2**size, abs=1e-15) == 2.0**-size
    assert first_success(np.array([10, 20, 30]), np.array([-0.01, 0.99, 0.98])) == 20
    assert first_success(np.array([10, 20]), np.array([0.0, -0.01])) is None


P = ClaimParams(confidence=0.95, par_margin=0.1, gain_margin=0.05, gain_margins_shown=[0.025, 0.05, 0.1],
                learned_min=0.5, match_fraction=0.5)
DEEPSEA = AGENTS["deepsea"]


def _plan(n: int, basis: str = "budget") -> SamplePlan:
    sequential = basis == "sequential"
    return SamplePlan(unit="seed", n=n, basis=basis, effect=None, power=None, pilot_n=0, pilot_sd=None,
                      looks=2 if sequential else 1, spending="pocock" if sequential else "none",
                      why="the test's seeds, fixed by the test")


PLANS = Plans(seeds=_plan(4), nig_competence=_plan(4, "sequential"))
NOISE = np.array([0.0, 0.01, -0.01, 0.02])
RUNGS = {"deepsea_small": {"uniform random policy": -0.05 + NOISE, "random-search controller": 0.1 + NOISE},
         "cartpole": {"uniform random policy": -0.02 + NOISE, "random-search controller": 0.2 + NOISE}}


def _reach(solved: bool, n: int) -> dict:
    return reach_summary([100 if solved else None] * n, [10 if solved else None] * n, 10, 1124)


def _information(ratio: np.ndarray) -> dict:
    """The NIG variance ratios as evaluate passes them (the same per-seed ratio on both DeepSea sizes)."""
    row = {"variance_ratio": list(ratio), "variance_unvisited": list(ratio * 1e-3),
           "variance_visited": [1e-3] * len(ratio), "pairs_unvisited": [30] * len(ratio)}
    return {"grid": {"reg": 0.1, "seeds": [500, 501], "log_ratio": {"0.1": {"mean": 1.0, "ci": [0.5, 1.5]}}},
            "deepsea_small": row, "deepsea": row}


def _run(deepsea: dict, cartpole: dict, small_score: dict | None = None, rungs: dict | None = None,
         explore: dict | None = None, ratio: np.ndarray | None = None) -> dict:
    """Resolved claims from DeepSea AULCs per agent (``small_score``: greedy scores on the small size, default
    every agent solves it) and CartPole (AULC, greedy score) per agent; the NIG agent scores as DAIF unless given;
    the exploration ladder's explore-then-commit scores as QR-DQN unless given; the NIG critic's variance ratio is
    ~5x unless given."""
    deepsea, cartpole = {"daif_nig": deepsea["daif"]} | deepsea, {"daif_nig": cartpole["daif"]} | cartpole
    n = len(deepsea["daif"])
    small_score = small_score or {a: np.full(n, 0.99) for a in DEEPSEA}
    aulc = {"deepsea_small": {a: np.full(n, 0.5) for a in DEEPSEA}, "deepsea": deepsea,
            "cartpole": {a: v[0] for a, v in cartpole.items()}}
    learned = {"deepsea_small": small_score, "deepsea": {a: np.full(n, 0.5) for a in DEEPSEA},
               "cartpole": {a: v[1] for a, v in cartpole.items()}}
    reach = {t: {a: _reach(bool((aulc[t][a] > 0.2).all()), n) for a in DEEPSEA} for t in ("deepsea_small", "deepsea")}
    steps = {"deepsea_small": 6744, "deepsea": 11240, "cartpole": 6000}
    explore = explore or {"uniform random policy": -0.01 + NOISE / 10, "explore-then-commit": deepsea["qrdqn"]}
    information = _information(np.array([5.0, 6.0, 4.0, 5.5]) if ratio is None else ratio)
    return {c.id: c for c in resolve(claims(aulc, learned, reach, steps, rungs or RUNGS, explore, information, P, 2.0,
                                            PLANS))}


BASE = np.array([0.1, 0.15, 0.12, 0.11])
J = np.array([0.0, 0.01, -0.01, 0.005])  # QR-DQN's per-seed offset: paired differences with a spread
EVIDENCE = ("exploration_aulc_beats_explore_then_commit", "nig_exploration_aulc_beats_explore_then_commit",
            "exploration_aulc_beats_qrdqn", "exploration_aulc_beats_lambda0_dithering",
            "exploration_aulc_beats_lambda0_posterior_sampling", "dense_on_par_cartpole",
            "nig_exploration_aulc_beats_qrdqn", "nig_exploration_aulc_beats_lambda0_posterior_sampling",
            "nig_dense_on_par_cartpole")


def test_claims_fail_when_the_free_energy_agent_does_not_help() -> None:
    """Every agent competent, DAIF below QR-DQN and both ablations on DeepSea and far below QR-DQN on CartPole: every
    measured evidence claim fails (none is inconclusive: the regime is reached); the sensory-state claim stays
    inconclusive."""
    out = _run({"daif": BASE, "daif_lam0_eps": BASE + 0.1, "daif_lam0_ps": BASE + 0.2, "qrdqn": BASE + 0.05 + J},
               {"daif": (BASE - 0.5, BASE + 0.8), "qrdqn": (BASE + J, BASE + 0.8)})
    assert {k: out[k].verdict for k in EVIDENCE} == dict.fromkeys(EVIDENCE, "fails")
    assert out["organises_sensory_state"].verdict == "inconclusive"
    assert all(c.verdict == "holds" for c in out.values() if c.kind == "precondition")


def test_a_gain_inside_the_margin_fails_superiority() -> None:
    """DAIF ahead of the posterior-sampling ablation on every seed but by less than gain_margin: fails (an interval
    wholly below the smallest effect of interest), not holds."""
    out = _run({"daif": BASE + 0.02, "daif_lam0_eps": BASE, "daif_lam0_ps": BASE + np.array([0.0, 0.001, 0, 0.002]),
                "qrdqn": BASE + J}, {"daif": (BASE, BASE + 0.8), "qrdqn": (BASE + J, BASE + 0.8)})
    assert out["exploration_aulc_beats_lambda0_posterior_sampling"].verdict == "fails"


def test_evidence_is_inconclusive_when_an_ablation_cannot_learn() -> None:
    """The posterior-sampling ablation fails the small DeepSea on every seed: the claim against it is inconclusive,
    naming the failed precondition, although DAIF beats it by far; the other claims stay judged."""
    n = len(BASE)
    small = {a: np.full(n, 0.99) for a in DEEPSEA} | {"daif_lam0_ps": np.full(n, -0.001)}
    out = _run({"daif": BASE + 0.5, "daif_lam0_eps": BASE, "daif_lam0_ps": BASE * 0, "qrdqn": BASE + J},
               {"daif": (BASE + 0.3, BASE + 0.8), "qrdqn": (BASE + 0.31 + J, BASE + 0.8)}, small)
    assert out["competent_deepsea_small_daif_lam0_ps"].verdict == "fails"
    for prefix in ("", "nig_"):
        claim = out[f"{prefix}exploration_aulc_beats_lambda0_posterior_sampling"]
        assert claim.verdict == "inconclusive" and "competent_deepsea_small_daif_lam0_ps" in claim.reason
        assert "judged alone: holds" in claim.reason
    assert out["exploration_aulc_beats_qrdqn"].verdict == "holds" == out["dense_on_par_cartpole"].verdict


def test_nig_claims_wait_on_the_nig_agents_own_competence() -> None:
    """The NIG agent fails the small DeepSea on two seeds in four: its DeepSea claims are inconclusive, naming its
    precondition; the ensemble DAIF's claims and its CartPole claim stay judged."""
    n = len(BASE)
    small = {a: np.full(n, 0.99) for a in DEEPSEA} | {"daif_nig": np.array([0.99, 0.0, 0.99, 0.0])}
    out = _run({"daif": BASE + 0.5, "daif_lam0_eps": BASE, "daif_lam0_ps": BASE, "qrdqn": BASE + J, "daif_nig": BASE},
               {"daif": (BASE + 0.3, BASE + 0.8), "qrdqn": (BASE + 0.31 + J, BASE + 0.8)}, small)
    assert out["competent_deepsea_small_daif_nig"].verdict != "holds"
    for claim in ("nig_exploration_aulc_beats_qrdqn", "nig_exploration_aulc_beats_lambda0_posterior_sampling"):
        assert out[claim].verdict == "inconclusive" and "competent_deepsea_small_daif_nig" in out[claim].reason
    assert out["exploration_aulc_beats_qrdqn"].verdict == "holds" == out["nig_dense_on_par_cartpole"].verdict


def test_claims_hold_when_the_numbers_support_them() -> None:
    """DAIF ahead of QR-DQN and both ablations on every seed, level on the dense task, every agent competent; the
    DeepSea claims report bsuite's solved fraction with its Clopper-Pearson interval."""
    out = _run({"daif": BASE + 0.5, "daif_lam0_eps": BASE - J, "daif_lam0_ps": BASE + 0.1 + J / 2, "qrdqn": BASE + 0.01 + J},
               {"daif": (BASE + 0.3, BASE + 0.8), "qrdqn": (BASE + 0.31 + J, BASE + 0.8)})
    assert {k: out[k].verdict for k in EVIDENCE} == dict.fromkeys(EVIDENCE, "holds")
    solved = out["exploration_aulc_beats_qrdqn"].measured["daif"]["solved_fraction"]
    assert solved["mean"] == 1.0 and solved["ci"][0] == pytest.approx(stats.beta.ppf(0.025, 4, 1), abs=1e-4)


def test_competence_is_judged_against_the_strongest_rung() -> None:
    """The precondition names the strongest rung and records the next one; an agent that closes half the gap from the
    state-ignoring rung but not from a near-optimal controller fails; against a controller at the optimum on every
    seed (nothing can beat it) an agent must match it within 1 - learned_min on more than half the seeds
    (Clopper-Pearson): at the optimum on 4 of 4 seeds that is inconclusive ([0.40, 1]), on 12 of 12 it holds, at 0.3
    it fails."""
    n = len(BASE)
    close = {"deepsea_small": {"uniform random policy": -0.05 + NOISE, "random-search controller": 0.9 + NOISE / 10},
             "cartpole": RUNGS["cartpole"]}
    small = {a: np.full(n, 0.7) + NOISE for a in DEEPSEA}
    out = _run({"daif": BASE + 0.5, "daif_lam0_eps": BASE, "daif_lam0_ps": BASE, "qrdqn": BASE + J},
               {"daif": (BASE + 0.3, BASE + 0.8), "qrdqn": (BASE + 0.31 + J, BASE + 0.8)}, small, close)
    claim = out["competent_deepsea_small_daif"]
    assert claim.against == "random-search controller" and claim.verdict == "fails"
    assert [r.name for r in claim.ladder.rungs] == ["random-search controller", "uniform random policy"]
    assert out["exploration_aulc_beats_qrdqn"].verdict == "inconclusive"
    at_top = {"deepsea_small": {"uniform random policy": -0.05 + NOISE, "random-search controller": np.ones(n)},
              "cartpole": RUNGS["cartpole"]}
    scores = {a: np.ones(n) for a in DEEPSEA} | {"qrdqn": 0.3 + NOISE}
    out = _run({"daif": BASE, "daif_lam0_eps": BASE, "daif_lam0_ps": BASE, "qrdqn": BASE + J},
               {"daif": (BASE, BASE + 0.8), "qrdqn": (BASE + J, BASE + 0.8)}, scores, at_top)
    assert out["competent_deepsea_small_daif"].verdict == "inconclusive"
    assert out["competent_deepsea_small_daif"].measured["rung_at_optimum"] is True
    assert out["competent_deepsea_small_qrdqn"].measured["seeds_matching_rung"] == "0/4"
    many = {"uniform random policy": -0.05 + np.tile(NOISE, 3), "random-search controller": np.ones(3 * n)}
    claim = learns("deepsea_small", "daif", np.ones(3 * n), many, None, P, PLANS.seeds)
    assert claim.verdict == "holds" and claim.measured["seeds_matching_rung"] == "12/12"
    assert learns("deepsea_small", "qrdqn", np.full(3 * n, 0.3), many, None, P, PLANS.seeds).verdict == "fails"
    assert out["competent_cartpole_daif"].plan == PLANS.seeds
    assert out["competent_deepsea_small_daif_nig"].plan == PLANS.nig_competence


def test_nig_exploration_claims_wait_on_the_information_gain_precondition() -> None:
    """A NIG critic whose epistemic variance is no higher where it has no data (ratio ~1) fails the precondition, and
    both NIG exploration claims turn inconclusive naming it, while the ensemble DAIF's stay judged; at ~5x it holds,
    with the ratio's geometric mean and interval in its measurement."""
    deepsea = {"daif": BASE + 0.5, "daif_lam0_eps": BASE, "daif_lam0_ps": BASE, "qrdqn": BASE + J}
    cart = {"daif": (BASE + 0.3, BASE + 0.8), "qrdqn": (BASE + 0.31 + J, BASE + 0.8)}
    out = _run(deepsea, cart, ratio=np.array([1.0, 1.1, 0.9, 1.05]))
    assert out["nig_information_gain_informative"].verdict == "fails"
    for claim in ("nig_exploration_aulc_beats_explore_then_commit", "nig_exploration_aulc_beats_qrdqn",
                  "nig_exploration_aulc_beats_lambda0_posterior_sampling"):
        assert out[claim].verdict == "inconclusive" and "nig_information_gain_informative" in out[claim].reason
    assert out["exploration_aulc_beats_explore_then_commit"].verdict == "holds"
    good = _run(deepsea, cart)["nig_information_gain_informative"]
    assert good.verdict == "holds"
    ratio = good.measured["variance_ratio_geomean"]
    assert ratio["mean"] == pytest.approx(float(np.exp(np.log([5.0, 6.0, 4.0, 5.5]).mean())), abs=1e-4)
    assert ratio["ci"][0] > 2.0


def test_explore_then_commit_is_the_bar_with_the_margins_shown() -> None:
    """DAIF beats QR-DQN by far but explore-then-commit only by less than the margin: the judged claim against the
    strongest trivial rung fails while the QR-DQN claim holds; the ladder lists the rungs strongest first; each
    claim reports its verdict at 0.025 / 0.05 / 0.1 (a gain of ~0.075 holds at 0.025 and 0.05, fails at 0.1)."""
    deepsea = {"daif": BASE + 0.5, "daif_lam0_eps": BASE, "daif_lam0_ps": BASE, "qrdqn": BASE + J}
    cart = {"daif": (BASE + 0.3, BASE + 0.8), "qrdqn": (BASE + 0.31 + J, BASE + 0.8)}
    etc = BASE + 0.5 - 0.01 + J / 2
    out = _run(deepsea, cart, explore={"uniform random policy": -0.01 + NOISE / 10, "explore-then-commit": etc})
    claim = out["exploration_aulc_beats_explore_then_commit"]
    assert claim.verdict == "fails" and out["exploration_aulc_beats_qrdqn"].verdict == "holds"
    assert [r["baseline"] for r in claim.measured["ladder"]][:2] == ["explore-then-commit", "QR-DQN"]
    out = _run(deepsea, cart, explore={"uniform random policy": -0.01 + NOISE / 10,
                                       "explore-then-commit": BASE + 0.5 - 0.075 + J / 4})
    assert out["exploration_aulc_beats_explore_then_commit"].measured["verdict_at_margin"] == {
        "0.025": "holds", "0.05": "holds", "0.1": "fails"}


def test_visit_count_q_and_explore_then_commit() -> None:
    """Counting every (s, a) of DeepSea by enumeration, visit_count_q's greedy path is the optimum (0.99); with the
    counts of random episodes that never earned the +1 it commits to a path that pays nothing. Explore-then-commit's
    returns after E are 0.99 exactly when one of its E random episodes earned the +1, and over many instances the
    fraction that does matches 1 - (1 - 2^-N)^E (binomial 99.9% band)."""
    size, env = 6, DeepSea(6, 4)
    n = size * size
    counts, rsum, succ = np.zeros((n, 2)), np.zeros((n, 2)), np.full((n, 2), -1)
    for seq in itertools.product((0, 1), repeat=size):
        obs, _ = env.reset()
        for a in seq:
            nxt, r, done, _, _ = env.step(a)
            counts[obs, a], rsum[obs, a], succ[obs, a] = 1, r, -1 if done else nxt
            obs = nxt
    q = ladder.visit_count_q(counts, rsum, succ, size)
    obs, total, done = env.reset()[0], 0.0, False
    while not done:
        obs, r, done, _, _ = env.step(int(np.argmax(q[obs])))
        total += r
    assert total == pytest.approx(0.99) == pytest.approx(q[0].max())
    reached = 0
    for seed in range(400):
        returns = np.array(ladder.explore_then_commit(size, 30, 20, seed))
        hit = (returns[:20] > 0.5).any()
        reached += hit
        assert np.allclose(returns[20:], 0.99) if hit else (returns[20:] <= 0).all()
    p = random_reach_probability(size, 20)
    lo, hi = stats.binom.ppf([0.0005, 0.9995], 400, p)
    assert lo <= reached <= hi, (reached, 400 * p)


def test_commit_episodes_maximise_the_reach_formula() -> None:
    """E* is the argmax over every E of (1 - (1 - 2^-N)^E) (T - E) (a direct loop), for bsuite's hard DeepSea (N = 10,
    T = 1124: ~492) and other sizes."""
    for size, episodes in ((10, 1124), (6, 164), (8, 356)):
        p = 2.0**-size
        values = [(1 - (1 - p) ** e) * (episodes - e) for e in range(episodes + 1)]
        assert commit_episodes(size, episodes) == int(np.argmax(values))
    assert 450 < commit_episodes(10, 1124) < 550


def test_the_regulariser_pick_uses_the_variance_ratio_alone() -> None:
    """The grid's pick is the weight whose mean log ratio has the highest lower t bound (not the highest mean);
    ties go to the first weight of the grid."""
    best, rows = pick({0.01: [1.0, 1.1, 0.9], 0.1: [3.0, 3.2, 2.9], 1.0: [9.0, 1.0, 30.0]})
    assert best == 0.1 and rows[1.0]["mean"] > rows[0.1]["mean"]
    assert pick({0.01: [2.0, 3.0], 1.0: [2.0, 3.0]})[0] == 0.01


def test_lambda_per_return_scale_makes_the_decision_free_of_reward_units() -> None:
    """With the critic on rewards r c and the task's return scale R, G at the weights ``free_energy_weights`` gives
    (lambda R c, sigma_0^2 (R c)^2) is R c times G on returns in units of R at lambda and sigma_0^2 (ensemble and NIG
    critics): the same argmin whatever reward_scale or reward unit."""
    rng = np.random.default_rng(3)
    z = torch.as_tensor(rng.normal(size=(4, 6, 2, 8)))
    var = torch.as_tensor(rng.random((4, 2, 8)))
    for big_r, c in ((0.99, 1.0), (200.0, 0.01), (5.0, 0.3)):
        lam, floor = free_energy_weights(1.0, 0.01, big_r, c)
        u = big_r * c
        assert (lam, floor) == pytest.approx((u, 0.01 * u**2))
        assert torch.allclose(expected_free_energy(z * u, lam, floor), u * expected_free_energy(z, 1.0, 0.01))
        assert torch.allclose(nig_free_energy(z[:, 0] * u, var * u**2, lam, floor),
                              u * nig_free_energy(z[:, 0], var, 1.0, 0.01))


def test_open_loop_search_finds_the_enumerated_deepsea_optimum() -> None:
    """With budget enough to meet every sequence, the open-loop controller's greedy return is the best return over all
    2^N action sequences (brute force) and backward induction's optimum; a one-episode budget returns the first
    sequence's return."""
    for size, seed in ((4, 0), (5, 3), (6, 11)):
        env, best = DeepSea(size, seed), -np.inf
        for seq in itertools.product((0, 1), repeat=size):
            env.reset()
            best = max(best, sum(env.step(a)[1] for a in seq))
        got = ladder.tuned_controller("deepsea", size, size, size * 40 * 2**size, 3, seed)
        assert got == pytest.approx(best, abs=1e-12) == optimal_return(env, size)
    first = np.random.default_rng([7, 17]).integers(0, 2, size=6)
    env = DeepSea(6, 7)
    env.reset()
    assert ladder.tuned_controller("deepsea", 6, 6, 6, 2, 7) == pytest.approx(sum(env.step(a)[1] for a in first))


def test_linear_search_spends_exactly_its_budget_and_a_known_balancer_balances(monkeypatch) -> None:
    """The CartPole search takes exactly ``budget`` environment steps (its last candidate cut at the budget); the
    hand-set threshold controller a = 1[theta + theta_dot > 0] (w = (0, 0, 1, 1)) balances the pole for the whole
    episode on the agents' evaluation resets."""
    steps = []

    def counted(kind, size, max_steps, seed):
        env = make_env(kind, size, max_steps, seed)
        step = env.step

        def count(a):
            steps.append(1)
            return step(a)
        env.step = count
        return env

    monkeypatch.setattr(ladder, "make_env", counted)
    for budget in (1, 57, 450):
        steps.clear()
        ladder.linear_search(200, budget, 3)
        assert len(steps) == budget
    monkeypatch.undo()
    env, w = make_env("cartpole", 0, 200, 0), np.array([0.0, 0.0, 1.0, 1.0])
    for ep in range(3):
        ret, t = ladder._episode(env, lambda o, t: int(np.dot(w, o) > 0), ladder.EVAL_RESET + ep, 200)
        assert ret == t == 200


def test_competence_seeds_extend_the_shared_seeds() -> None:
    """The NIG competence stage's seeds are the shared ones first, then fresh ones of prepare's scheme 1000 * seed + i;
    fewer than the shared seeds, or shared seeds of another scheme, are refused."""
    shared = [3000, 3001, 3002]
    assert competence_seeds(shared, 3, 6) == [3000, 3001, 3002, 3003, 3004, 3005]
    assert competence_seeds(shared, 3, 3) == shared
    for bad in ((shared, 3, 2), ([3000, 3002], 3, 5), (shared, 0, 5)):
        with pytest.raises(ValueError):
            competence_seeds(*bad)


def test_extra_seeds_never_reach_a_paired_task() -> None:
    """evaluate accepts extended seeds only off the paired tasks (the small DeepSea); on the hard DeepSea and CartPole
    a stage must carry exactly the shared seeds, and everywhere the shared seeds come first."""
    shared = [0, 1, 2]
    assert stage_seeds(shared, [0, 1, 2, 3, 4], "deepsea_small", "daif_nig") == [0, 1, 2, 3, 4]
    assert stage_seeds(shared, shared, "deepsea", "daif_nig") == shared
    for own, task in (([0, 1, 2, 3], "deepsea"), ([0, 1, 2, 3], "cartpole"), ([1, 0, 2, 3], "deepsea_small"),
                      ([0, 1], "deepsea_small")):
        with pytest.raises(ValueError):
            stage_seeds(shared, own, task, "daif_nig")


def _two_point_power(n: int, rate: float, solved: float, missed: float, bar: float, confidence: float) -> float:
    """Exact chance that the t interval's lower end of n two-point scores (k ~ Binomial(n, rate) at ``solved``, the
    rest at ``missed``) exceeds ``bar``."""
    k = np.arange(n + 1)
    mean = missed + (solved - missed) * k / n
    sd = (solved - missed) * np.sqrt(k * (n - k) / (n * (n - 1)))
    lo = mean - stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n)
    return float(stats.binom.pmf(k, n, rate)[lo > bar].sum())


def test_nig_competence_seeds_meet_the_power_argument() -> None:
    """params.yaml's power argument: with greedy scores ~1 (solved) or ~-0.11 (missed), a true solve rate of 0.7 passes
    the precondition's own rule (superiority of the mean_ci over learned_min) with power >= 0.8 at
    nig_competence_seeds and at every larger n up to 120 (exact binomial sum, checked against 4000 simulated runs of
    the rule itself), far more than at the paired design's seeds (30: 0.43); a mean at the bar passes with chance
    <= 0.05."""
    p = load_params(read_params_file(Path(__file__).parents[2] / "params.yaml"), SLUG, Params, "default",
                    Path("params.yaml"))
    n, bar, c = p.nig_competence_seeds, p.claims.learned_min, p.claims.confidence
    power = _two_point_power(n, 0.7, 1.0, -0.11, bar, c)
    assert power >= 0.8 and all(_two_point_power(m, 0.7, 1.0, -0.11, bar, c) >= 0.8 for m in range(n, 121))
    assert _two_point_power(p.seeds, 0.7, 1.0, -0.11, bar, c) < 0.5  # 0.43 at the 30 shared seeds
    assert _two_point_power(n, (bar + 0.11) / 1.11, 1.0, -0.11, bar, c) <= 0.05
    rng = np.random.default_rng(7)
    runs = [superiority(mean_ci(np.where(rng.random(n) < 0.7, 1.0, -0.11), c), margin=bar).verdict
            for _ in range(4000)]
    assert np.mean([v == "holds" for v in runs]) == pytest.approx(power, abs=0.025)


def test_smoke_pipeline_end_to_end(smoke_runs) -> None:
    """Every (agent, task) stage logged episodes for every seed and a finite greedy evaluation; the AULC table
    covers every task's agents and every seed."""
    runs = smoke_runs(SLUG)
    seeds = json.loads((runs["prepare"] / "tasks.json").read_text())["seeds"]
    competence = f"train_{NIG}_{COMPETENCE}"
    extended = competence_seeds(seeds, 1, 3)  # the smoke profile (root seed 1): 2 shared seeds, 3 for NIG competence
    for stage in (s for s in runs.outputs if s.startswith("train_")):
        own = extended if stage == competence else seeds
        episodes = read_table(runs[stage] / "episodes.parquet").to_pydict()
        evaluation = json.loads((runs[stage] / "evaluation.json").read_text())
        assert set(episodes["seed"]) == set(own) and evaluation["seeds"] == own, stage
        assert np.isfinite(evaluation["eval_return"]).all()
    aulc = read_table(runs["evaluate"] / "aulc.parquet").to_pydict()
    assert len(aulc["seed"]) == sum(map(len, AGENTS.values())) * len(seeds) + len(extended) - len(seeds)
    assert sorted(s for s, t, a in zip(aulc["seed"], aulc["task"], aulc["agent"], strict=True)
                  if (t, a) == (COMPETENCE, NIG)) == extended
    rungs = json.loads((runs["baselines"] / "baselines.json").read_text())
    assert rungs["deepsea_small"]["seeds"] == extended and rungs["cartpole"]["seeds"] == seeds
    assert all(np.isfinite(rungs[t][k]).all() for t in ("deepsea_small", "cartpole") for k in ("random", "controller"))
    assert rungs["exploration"]["seeds"] == seeds and len(rungs["exploration"]["explore_then_commit"]) == len(seeds)
    grid = json.loads((runs["nig_reg_grid"] / "grid.json").read_text())
    assert grid["reg"] in (0.01, 1.0) and not set(grid["seeds"]) & set(extended)
    small = json.loads((runs[competence] / "evaluation.json").read_text())
    assert len(small["variance_ratio"]) == len(extended) and np.all(np.asarray(small["variance_ratio"]) > 0)
    claims_out = {c["id"]: c for c in runs.metrics()["claims"]}
    assert len(claims_out[f"competent_{COMPETENCE}_{NIG}"]["ladder"]) == 2
    assert claims_out[f"competent_{COMPETENCE}_{NIG}"]["measured"]["seeds_earning_reward"].endswith(f"/{len(extended)}")
    assert {c["id"] for c in runs.metrics()["claims"]} >= {"exploration_aulc_beats_qrdqn", "organises_sensory_state",
                                                          "competent_deepsea_small_daif_lam0_ps",
                                                          "nig_exploration_aulc_beats_qrdqn",
                                                          "competent_cartpole_daif_nig",
                                                          "nig_information_gain_informative",
                                                          "exploration_aulc_beats_explore_then_commit"}


def test_information_moves_cartpoles_decision_only_per_return_scale() -> None:
    """The state a stuck CartPole seed measured (pilot seeds, critic units, reward_scale 0.01): the taken action's
    members agree (epistemic var ~3e-4) on a near-deterministic return (quantile var ~1e-4), the untaken one's
    disagree (~0.3, quantile var ~0.08) around a mean 0.13 lower. Per unscaled reward (lambda 0.01, sigma_0^2 1e-6)
    IG is ~1.1 nat on both and lambda IG cannot beat the 0.12 gap: the agent repeats the taken action for ever. Per
    return scale (R c = 2: lambda 2, sigma_0^2 0.04) the taken action's IG vanishes and the untaken one is tried."""
    rng = np.random.default_rng(0)
    member = np.array([-1, 1] * 4)[:, None]  # antithetic: the mean carries no member offset
    taken = 0.09 + 0.017 * member + 0.01 * rng.standard_normal((1, 8))
    untaken = -0.04 + 0.55 * member + 0.28 * rng.standard_normal((8, 8))
    z = torch.as_tensor(np.stack([taken, untaken], axis=1))  # [M, A, K]
    assert variance(z, -3).mean(-1)[0] < 1e-3 < 0.2 < variance(z, -3).mean(-1)[1]
    assert expected_free_energy(z, 0.01, 1e-6).argmin() == 0
    lam, floor = free_energy_weights(1.0, 0.01, 200.0, 0.01)
    assert expected_free_energy(z, lam, floor).argmin() == 1


def test_the_train_stages_pass_lambda_and_the_noise_floor_per_return_scale(monkeypatch, tmp_path) -> None:
    """The ensemble and NIG train stages hand the agents lambda R c and sigma_0^2 (R c)^2, R the task's optimal return
    and c its reward_scale (CartPole: R c = 200 x 0.01 = 2, lambda 2, sigma_0^2 0.04; the small DeepSea: R c = 0.99),
    and the NIG stages the grid's pick."""
    from types import SimpleNamespace

    from paperdag.papers.daif import train as train_stage
    from paperdag.papers.daif import train_nig as nig_stage

    p = load_params(read_params_file(Path(__file__).parents[2] / "params.yaml"), SLUG, Params, "default",
                    Path("params.yaml"))
    spec = {"kind": "cartpole", "size": 0, "obs_dim": 4, "n_actions": 2, "max_steps": 200, "optimal_return": 200.0,
            "steps": 10}
    sea = spec | {"kind": "deepsea", "size": 6, "obs_dim": 36, "max_steps": 6, "optimal_return": 0.99}
    (tmp_path / "tasks.json").write_text(json.dumps({"seeds": [0, 1], "tasks": {"cartpole": spec,
                                                                                "deepsea_small": sea}}))
    (tmp_path / "grid.json").write_text(json.dumps({"reg": 0.1}))
    ctx = SimpleNamespace(params=p, device="cpu", input=lambda stage, name: tmp_path / name,
                          report=lambda *a: None)
    seen = {}

    class Stop(Exception):
        pass

    def ensemble(task, agent, hyper, *args, **kwargs):
        seen["ensemble"] = (agent.lam, hyper.noise_floor)
        raise Stop

    def nig(task, hyper, atoms, lam, reg, *args, **kwargs):
        seen["nig"] = (lam, hyper.noise_floor, reg)
        raise Stop

    monkeypatch.setattr(train_stage, "train_agent", ensemble)
    monkeypatch.setattr(nig_stage, "train_nig_agent", nig)
    lam, floor = p.bayes.lam, p.bayes.noise_floor
    assert (lam, floor, p.tasks.cartpole.reward_scale, p.tasks.deepsea.reward_scale) == (1.0, 0.01, 0.01, 1.0)
    for task, unit in (("cartpole", 2.0), ("deepsea_small", 0.99)):
        with pytest.raises(Stop):
            train_stage.train(ctx, "daif", task)
        with pytest.raises(Stop):
            nig_stage.train(ctx, task)
        assert seen["ensemble"] == pytest.approx((lam * unit, floor * unit**2))
        assert seen["nig"] == pytest.approx((lam * unit, floor * unit**2, 0.1))


def test_a_trend_point_is_the_train_stage_on_the_trend_seeds(tmp_path) -> None:
    """trend.trend_run trains and evaluates as the CartPole train stage does: the stage run on the trend's seeds and
    budget (smoke sizes) writes the greedy returns whose normalised scores the trend point reports."""
    from dataclasses import asdict
    from types import SimpleNamespace

    from paperdag.papers.daif import train as train_stage
    from paperdag.papers.daif import trend as trend_module

    p = load_params(read_params_file(Path(__file__).parents[2] / "params.yaml"), SLUG, Params, "smoke",
                    Path("params.yaml"))
    p = p.model_copy(update={"trend": p.trend.model_copy(update={"seeds": 2})})
    point = trend_module.trend_run(p, "daif", 40)
    seeds = trend_module.trend_seeds(p)
    assert seeds == [7000, 7001] and point.steps == 40 and len(point.score) == 2
    spec = spec_of("cartpole", "cartpole", 0, p.tasks.cartpole.max_episode_steps)
    (tmp_path / "tasks.json").write_text(json.dumps({"seeds": seeds, "tasks": {"cartpole": asdict(spec) | {
        "steps": 40}}}))
    ctx = SimpleNamespace(params=p, device="cpu", input=lambda stage, name: tmp_path / name,
                          output=lambda name: tmp_path / name, report=lambda *a: None)
    train_stage.train(ctx, "daif", "cartpole")
    returns = json.loads((tmp_path / "evaluation.json").read_text())["eval_return"]
    trivial = trivial_return("cartpole", 0, spec.max_steps, p.evaluation.random_episodes, seeds)["best"]
    assert point.score == pytest.approx(list((np.asarray(returns) - trivial) / (spec.optimal_return - trivial)))
    assert point.over_bar == pytest.approx([s - (r + p.claims.learned_min * (1 - r))
                                            for s, r in zip(point.score, point.rung, strict=True)])


def test_the_trend_seeds_are_never_judged() -> None:
    """trend.root may be neither the judged root nor the pilot's 0."""
    data = read_params_file(Path(__file__).parents[2] / "params.yaml")
    for root in (0, data[SLUG]["seed"]):
        bad = copy.deepcopy(data)
        bad[SLUG]["trend"]["root"] = root
        with pytest.raises(Exception, match="trend.root"):
            load_params(bad, SLUG, Params, "default", Path("params.yaml"))
