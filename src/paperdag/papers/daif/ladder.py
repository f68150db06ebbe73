"""The RL baseline ladder of the competence preconditions: the uniform random policy and a tuned simple controller,
scored per environment seed with the agents' own greedy-evaluation protocol (training.evaluate_greedy's reset seeds).

- uniform random policy: its mean undiscounted return over ``episodes`` episodes of the seed's task instance;
- tuned simple controller: random search (Mania, Guy & Recht 2018, "Simple random search of static linear policies
  is competitive for reinforcement learning") over a simple controller class within the agent's own interaction
  budget: each candidate plays one episode, the best return is kept (ties: the first), then the kept candidate is
  evaluated greedily like an agent.
  - CartPole: static linear threshold policies a = 1[w . s > 0], w ~ U[-1, 1]^4 (sign(w . s) is scale-free, so the
    cube loses nothing); the budget is the agents' environment steps (the last candidate is cut at the budget).
  - DeepSea (deterministic, one start state): open-loop action sequences a_1..a_N, uniform over {0, 1}^N; the budget
    is the agents' episodes. Replaying the kept sequence is deterministic, so its evaluation is its return.

The exploration ladder on the hard DeepSea (scored by the agents' own learning-curve AULC, evaluate.py): the uniform
random policy, then explore-then-commit (the strongest rung that costs only counting): the uniform random policy for
E episodes (E from the reach formula, reach.commit_episodes), then greedy on its visit-count Q, the tabular
action values of the counted transitions, Q(s, a) = rbar(s, a) + max_{a' seen at s'} Q(s', a') for every counted
(s, a) (DeepSea is deterministic: one count fixes s' and r), actions never tried not taken. It earns ~0.99 per
episode after E iff one random episode earned the +1 (else it commits to the cheapest counted path, return ~0).
"""

from __future__ import annotations

import numpy as np

from .envs import make_env, policy_return

EVAL_RESET = 10_000  # training.evaluate_greedy resets episode ep of seed s with seed EVAL_RESET + 100 s + ep


def random_policy(kind: str, size: int, max_steps: int, episodes: int, seed: int) -> float:
    """The uniform random policy's mean return on task instance ``seed`` over ``episodes`` episodes."""
    return policy_return(kind, size, max_steps, episodes, [seed], None)


def _episode(env, act, reset_seed: int, limit: int) -> tuple[float, int]:
    """(return, steps) of one episode of the policy ``act(obs, t)`` from ``env.reset(seed=reset_seed)``, cut after
    ``limit`` steps."""
    obs, total, t, done = env.reset(seed=reset_seed)[0], 0.0, 0, False
    while not done and t < limit:
        obs, r, terminated, truncated, _ = env.step(act(obs, t))
        total, t, done = total + r, t + 1, terminated or truncated
    return total, t


def linear_search(max_steps: int, budget: int, seed: int) -> np.ndarray:
    """CartPole: the best of random linear threshold policies w ~ U[-1, 1]^4, one episode each, within ``budget``
    environment steps (task instance ``seed``; candidates and their resets drawn from rng([seed, 17]))."""
    env, rng = make_env("cartpole", 0, max_steps, seed), np.random.default_rng([seed, 17])
    best, best_return, used = None, -np.inf, 0
    while used < budget:
        w = rng.uniform(-1.0, 1.0, size=4)
        ret, steps = _episode(env, lambda o, t, w=w: int(np.dot(w, o) > 0), int(rng.integers(2**31)), budget - used)
        used += steps
        if ret > best_return:
            best, best_return = w, ret
    return best


def open_loop_search(size: int, episodes: int, seed: int) -> np.ndarray:
    """DeepSea: the best of ``episodes`` uniform random action sequences of length N on task instance ``seed``
    (sequences drawn from rng([seed, 17]))."""
    env, rng = make_env("deepsea", size, size, seed), np.random.default_rng([seed, 17])
    best, best_return = None, -np.inf
    for _ in range(episodes):
        seq = rng.integers(0, 2, size=size)
        ret, _ = _episode(env, lambda o, t, seq=seq: int(seq[t]), 0, size)
        if ret > best_return:
            best, best_return = seq, ret
    return best


def tuned_controller(kind: str, size: int, max_steps: int, budget_steps: int, eval_episodes: int, seed: int) -> float:
    """The random-search controller's mean greedy return on task instance ``seed`` (module docstring), evaluated on
    the agents' evaluation resets."""
    env = make_env(kind, size, max_steps, seed)
    if kind == "deepsea":
        seq = open_loop_search(size, budget_steps // size, seed)
        act = lambda o, t: int(seq[t])  # noqa: E731
    else:
        w = linear_search(max_steps, budget_steps, seed)
        act = lambda o, t: int(np.dot(w, o) > 0)  # noqa: E731
    cap = size if kind == "deepsea" else max_steps
    returns = [_episode(env, act, EVAL_RESET + 100 * seed + ep, cap)[0] for ep in range(eval_episodes)]
    return float(np.mean(returns))


def visit_count_q(counts: np.ndarray, reward_sum: np.ndarray, successor: np.ndarray, size: int) -> np.ndarray:
    """Q[s, a] of the counted transitions of DeepSea (states r N + c; ``counts``, ``reward_sum`` [N^2, 2],
    ``successor`` [N^2, 2] the observed next state, -1 at the last row): rbar(s, a) + max over the counted actions
    at s' of Q(s', a'), by rows from the last; -inf where (s, a) was never counted."""
    q = np.full((size * size, 2), -np.inf)
    for row in range(size - 1, -1, -1):
        for s in range(row * size, (row + 1) * size):
            for a in (0, 1):
                if counts[s, a] == 0:
                    continue
                nxt = successor[s, a]
                future = float(q[nxt].max()) if nxt >= 0 and np.isfinite(q[nxt]).any() else 0.0
                q[s, a] = reward_sum[s, a] / counts[s, a] + future
    return q


def explore_then_commit(size: int, episodes: int, explore: int, seed: int) -> list[float]:
    """Returns of the ``episodes`` training episodes of explore-then-commit on DeepSea instance ``seed``: uniform
    random actions (rng([seed, 29])) for the first ``explore`` episodes, counted; then greedy on visit_count_q."""
    env, rng = make_env("deepsea", size, size, seed), np.random.default_rng([seed, 29])
    counts, reward_sum = np.zeros((size * size, 2)), np.zeros((size * size, 2))
    successor = np.full((size * size, 2), -1, dtype=int)
    out, q = [], None
    for ep in range(episodes):
        obs, total, done = env.reset(seed=ep)[0], 0.0, False
        if ep == explore:
            q = visit_count_q(counts, reward_sum, successor, size)
        while not done:
            a = int(rng.integers(2)) if q is None else int(np.argmax(q[obs]))
            nxt, r, done, _, _ = env.step(a)
            if q is None:
                counts[obs, a] += 1
                reward_sum[obs, a] += r
                successor[obs, a] = -1 if done else nxt
            obs, total = nxt, total + r
        out.append(total)
    return out
