"""Online training of one agent on one task for several seeds at once, and the greedy evaluation afterwards.

Each seed has its own environment (seeded), replay buffer and critics; all seeds advance in lockstep, one
environment step each per iteration, so one batched network call serves them all. The returns of completed
training episodes are the learning curve (online performance: what sample efficiency is about).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np
import torch

from .agents import AgentSpec, Batch, Learner, greedy_actions, select_actions
from .envs import EnvSpec, encode, make_env
from .params import Params


@dataclass(frozen=True)
class Hyper:
    """Shared learning hyper-parameters (identical for every agent on a task)."""

    hidden: int
    lr: float
    gamma: float
    batch: int
    buffer: int
    learning_starts: int
    train_every: int
    target_every: int
    kappa: float
    eps_start: float
    eps_end: float
    eps_decay_frac: float
    noise_floor: float


@dataclass
class Outcome:
    """Training episodes (seed, episode, end step, return), greedy evaluation return per seed, final weights."""

    seed: list[int]
    episode: list[int]
    end_step: list[int]
    ret: list[float]
    eval_return: list[float]
    weights: dict[str, torch.Tensor]
    extra: dict = field(default_factory=dict)  # stage-specific measurements written to evaluation.json


def free_energy_weights(lam: float, noise_floor: float, return_scale: float,
                        reward_scale: float) -> tuple[float, float]:
    """(lambda, sigma_0^2) in the critic's units. Both are declared on returns measured in units of the task's return
    scale R (its optimal return): lambda in R per nat, sigma_0^2 in R^2. The critic learns rewards r c, so it carries
    lambda R c and sigma_0^2 (R c)^2, and then G_critic = R c G(Z / R): argmin_a G is the decision on returns in units
    of R, the same trade of information against return on every task, whatever its reward unit or ``reward_scale``."""
    unit = return_scale * reward_scale
    return lam * unit, noise_floor * unit**2


def critic_settings(p: Params, kind: str, return_scale: float) -> tuple[Hyper, float, float]:
    """(the shared learning hyper-parameters with sigma_0^2, lambda, reward_scale) for a task of ``kind`` ("deepsea" or
    "cartpole") whose return scale is ``return_scale``: lambda and sigma_0^2 in the critic's units
    (``free_energy_weights``), as every agent of every stage and the trend train with them."""
    scale = (p.tasks.deepsea if kind == "deepsea" else p.tasks.cartpole).reward_scale
    lam, floor = free_energy_weights(p.bayes.lam, p.bayes.noise_floor, return_scale, scale)
    return Hyper(**p.learning.model_dump(), noise_floor=floor), lam, scale


class Replay:
    """One ring buffer per seed, written in lockstep; the critics (members) of one seed share a minibatch. With
    ``one_hot`` observations it keeps the state s of each e_s (what a ``one_hot`` critic takes)."""

    def __init__(self, seeds: int, capacity: int, obs_dim: int, device: str, one_hot: bool = False) -> None:
        shape, kind = ((seeds, capacity), torch.long) if one_hot else ((seeds, capacity, obs_dim), torch.float32)
        self.obs = torch.zeros(shape, dtype=kind, device=device)
        self.next_obs = torch.zeros(shape, dtype=kind, device=device)
        self.one_hot = one_hot
        self.action = torch.zeros(seeds, capacity, dtype=torch.long, device=device)
        self.reward = torch.zeros(seeds, capacity, device=device)
        self.done = torch.zeros(seeds, capacity, device=device)
        self.capacity, self.size, self.device = capacity, 0, device

    def add(self, t: int, obs: np.ndarray, action: np.ndarray, reward: np.ndarray, next_obs: np.ndarray,
            done: np.ndarray) -> None:
        i = t % self.capacity
        if self.one_hot:
            obs, next_obs = obs.argmax(-1), next_obs.argmax(-1)
        for buf, value in ((self.obs, obs), (self.action, action), (self.reward, reward), (self.next_obs, next_obs),
                           (self.done, done)):
            buf[:, i] = torch.as_tensor(value, device=self.device, dtype=buf.dtype)
        self.size = min(self.size + 1, self.capacity)

    def sample(self, rng: np.random.Generator, members: int, n: int) -> Batch:
        """Uniform indices per seed, repeated for its members: tensors of shape [seeds * members, n, ...]."""
        seeds = self.obs.shape[0]
        idx = torch.as_tensor(rng.integers(0, self.size, size=(seeds, 1, n)),
                              device=self.device).expand(-1, members, -1)
        row = torch.arange(seeds, device=self.device)[:, None, None].expand_as(idx)

        def take(buf: torch.Tensor) -> torch.Tensor:
            return buf[row, idx].reshape(seeds * members, n, *buf.shape[2:])

        return Batch(take(self.obs), take(self.action), take(self.reward), take(self.next_obs), take(self.done))


def epsilon_at(t: int, steps: int, h: Hyper) -> float:
    """Linear decay eps_start -> eps_end over the first eps_decay_frac * steps, then constant."""
    frac = min(1.0, t / max(1.0, h.eps_decay_frac * steps))
    return h.eps_start + frac * (h.eps_end - h.eps_start)


def step_envs(envs: list[gym.Env], seeds: list[int], obs: np.ndarray, actions: np.ndarray, t: int,
              running: np.ndarray, count: np.ndarray, out: Outcome) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                             np.ndarray, list[int]]:
    """Step every seed's environment once at step ``t`` (0-based) with its action. An episode that ends is appended
    to ``out`` (seed, episode number ``count``, end step t + 1, undiscounted return ``running``) and its environment
    reset. Returns the encoded next observations, rewards and terminal flags (the transitions), the observations the
    seeds act on next (a reset's first one where an episode ended) and the indices of the seeds whose episode ended."""
    nxt, following = np.empty_like(obs), np.empty_like(obs)
    rew, done = np.zeros(len(seeds)), np.zeros(len(seeds))
    finished = []
    for i, env in enumerate(envs):
        o, r, terminated, truncated, _ = env.step(int(actions[i]))
        nxt[i], rew[i], done[i] = encode(env, o), r, float(terminated)
        running[i] += r
        if terminated or truncated:
            out.seed.append(seeds[i])
            out.episode.append(int(count[i]))
            out.end_step.append(t + 1)
            out.ret.append(float(running[i]))
            running[i], count[i] = 0.0, count[i] + 1
            finished.append(i)
            o = env.reset()[0]
        following[i] = encode(env, o)
    return nxt, rew, done, following, finished


def train_agent(task: EnvSpec, spec: AgentSpec, h: Hyper, seeds: list[int], steps: int, eval_episodes: int,
                device: str, reward_scale: float = 1.0, report: Callable[[int, int], None] | None = None) -> Outcome:
    """Train ``spec`` on ``task`` for ``steps`` environment steps per seed, learning from rewards r * reward_scale
    (the returns recorded are unscaled); then evaluate the greedy policy. A posterior-sampling agent draws each
    seed's acting member uniformly at the start of every episode."""
    rng = np.random.default_rng([seeds[0], len(seeds), steps])
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    learner = Learner(spec, len(seeds), task.obs_dim, task.n_actions, h.hidden, h.lr, h.gamma, h.kappa, h.noise_floor,
                      gen, device, one_hot=task.one_hot)
    replay = Replay(len(seeds), h.buffer, task.obs_dim, device, one_hot=task.one_hot)
    envs = [make_env(task.kind, task.size, task.max_steps, s) for s in seeds]
    obs = np.stack([encode(e, e.reset(seed=s)[0]) for e, s in zip(envs, seeds, strict=True)])
    member = rng.integers(0, spec.members, size=len(seeds))
    running, count = np.zeros(len(seeds)), np.zeros(len(seeds), dtype=int)
    out = Outcome([], [], [], [], [], {})
    for t in range(steps):
        with torch.no_grad():
            z = learner.values(torch.as_tensor(obs, device=device))
        actions = select_actions(spec, z, epsilon_at(t, steps, h), h.noise_floor, rng, member)
        nxt, rew, done, following, finished = step_envs(envs, seeds, obs, actions, t, running, count, out)
        for i in finished:
            member[i] = rng.integers(0, spec.members)
        replay.add(t, obs, actions, reward_scale * rew, nxt, done)
        obs = following
        if t >= h.learning_starts and t % h.train_every == 0:
            learner.update(replay.sample(rng, spec.members, h.batch))
        if t % h.target_every == 0:
            learner.sync_target()
        if report is not None:
            report(t + 1, steps)
    out.eval_return = evaluate_greedy(learner, task, seeds, eval_episodes, device)
    out.weights = {k: v.detach().cpu() for k, v in learner.online.state_dict().items()}
    return out


def evaluate_greedy(learner: Learner, task: EnvSpec, seeds: list[int], episodes: int, device: str) -> list[float]:
    """Mean undiscounted return per seed of argmax_a E_q[Z(s, a)] over ``episodes`` fresh episodes (the same task
    instance, e.g. the same DeepSea action mapping, from new reset seeds)."""
    envs = [make_env(task.kind, task.size, task.max_steps, s) for s in seeds]
    totals = np.zeros(len(seeds))
    for ep in range(episodes):
        obs = np.stack([encode(e, e.reset(seed=10_000 + 100 * s + ep)[0]) for e, s in zip(envs, seeds, strict=True)])
        alive = np.ones(len(seeds), dtype=bool)
        while alive.any():
            with torch.no_grad():
                actions = greedy_actions(learner.values(torch.as_tensor(obs, device=device)))
            for i in np.flatnonzero(alive):
                o, r, terminated, truncated, _ = envs[i].step(int(actions[i]))
                totals[i] += r
                obs[i] = encode(envs[i], o)
                alive[i] = not (terminated or truncated)
    return (totals / episodes).tolist()
