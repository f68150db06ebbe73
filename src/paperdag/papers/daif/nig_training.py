"""Online training of the DAIF agent with the NIG quantile critic (nig.py), seeds in lockstep as in training.py:
the same environments, replay, update and target schedule, learning curve and greedy evaluation; only the critic
and its free-energy action differ."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .envs import EnvSpec, encode, make_env
from .nig import NIGLearner
from .training import Hyper, Outcome, Replay, evaluate_greedy, step_envs


def train_nig_agent(task: EnvSpec, h: Hyper, atoms: int, lam: float, reg: float, seeds: list[int], steps: int,
                    eval_episodes: int, device: str, reward_scale: float = 1.0,
                    report: Callable[[int, int], None] | None = None) -> Outcome:
    """Train NIG-DAIF on ``task`` for ``steps`` environment steps per seed acting by argmin_a G(s, a), learning from
    rewards r * reward_scale (returns recorded unscaled); then evaluate the greedy policy argmax_a mean_k gamma_k."""
    rng = np.random.default_rng([seeds[0], len(seeds), steps])
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    learner = NIGLearner(len(seeds), task.obs_dim, task.n_actions, atoms, h.hidden, h.lr, h.gamma, h.kappa, lam,
                         h.noise_floor, reg, gen, rng, device)
    replay = Replay(len(seeds), h.buffer, task.obs_dim, device)
    envs = [make_env(task.kind, task.size, task.max_steps, s) for s in seeds]
    obs = np.stack([encode(e, e.reset(seed=s)[0]) for e, s in zip(envs, seeds, strict=True)])
    running, count = np.zeros(len(seeds)), np.zeros(len(seeds), dtype=int)
    out = Outcome([], [], [], [], [], {})
    for t in range(steps):
        actions = learner.act(obs, device)
        nxt, rew, done, following, _ = step_envs(envs, seeds, obs, actions, t, running, count, out)
        replay.add(t, obs, actions, reward_scale * rew, nxt, done)
        obs = following
        if t >= h.learning_starts and t % h.train_every == 0:
            learner.update(replay.sample(rng, 1, h.batch))
        if t % h.target_every == 0:
            learner.sync_target()
        if report is not None:
            report(t + 1, steps)
    out.eval_return = evaluate_greedy(learner, task, seeds, eval_episodes, device)
    out.weights = {k: v.detach().cpu() for k, v in learner.online.state_dict().items()}
    return out
