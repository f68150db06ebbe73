"""Online training of the DAIF agent with the NIG quantile critic (nig.py), seeds in lockstep as in training.py:
the same environments, replay, update and target schedule, learning curve and greedy evaluation; only the critic
and its free-energy action differ. On a finite state space (DeepSea) it counts each seed's visits to every (s, a) and,
after training, measures where the information gain can act (``variance_ratio``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .envs import EnvSpec, encode, make_env
from .nig import NIGLearner, epistemic_variance
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
    visits = np.zeros((len(seeds), task.obs_dim, task.n_actions), dtype=np.int64) if task.one_hot else None
    out = Outcome([], [], [], [], [], {})
    rows = np.arange(len(seeds))
    for t in range(steps):
        actions = learner.act(obs, device)
        if visits is not None:
            visits[rows, obs.argmax(-1), actions] += 1
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
    if visits is not None:
        out.extra = variance_ratio(learner, visits, device)
    return out


def variance_ratio(learner: NIGLearner, visits: np.ndarray, device: str) -> dict[str, list]:
    """Per seed: the mean epistemic variance (1/K) sum_k beta_k / (nu_k (alpha_k - 1)) of the trained critic over the
    (s, a) it never took, over the mean over those it took (``visits`` [S, states, A]), and both means. A ratio well
    above 1 means the critic still knows where it has no data: the precondition for its information gain to act."""
    states = visits.shape[1]
    x = torch.eye(states, device=device).expand(visits.shape[0], -1, -1)
    with torch.no_grad():
        _, nu, alpha, beta = learner.online(x)
        v = epistemic_variance(nu, alpha, beta).mean(-1).double().cpu().numpy()  # [S, states, A]
    seen = visits > 0
    unseen_mean = np.array([v[i][~seen[i]].mean() for i in range(len(v))])
    seen_mean = np.array([v[i][seen[i]].mean() for i in range(len(v))])
    return {"variance_unvisited": unseen_mean.tolist(), "variance_visited": seen_mean.tolist(),
            "variance_ratio": (unseen_mean / seen_mean).tolist(), "pairs_unvisited": (~seen).sum((1, 2)).tolist()}
