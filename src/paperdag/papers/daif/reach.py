"""Reaching DeepSea's reward: which training episodes earned the +1, each seed's first success, bsuite's "solved"
criterion, and the uniform random policy's exact chance of earning it (the trivial baseline an exploring agent has
to beat).

bsuite (deep_sea/analysis.py find_solution) calls a size solved at the first episode e at which the running fraction
of bad episodes, (bad episodes among 1..e) / e, drops below 0.8; an episode is bad here when it did not earn the +1
(bsuite marks an episode bad when it leaves the rewarded path, which on deterministic DeepSea is the same event).

An episode earned the +1 iff its return exceeds 1/2 (the +1 minus at most N moves at 0.01 / N; without it the
return is <= 0). bsuite pays the +1 only for "right" taken in column N - 1 (deep_sea.py ``_step``), and the column
rises by at most one per row from 0, so column N - 1 is reached only at row N - 1, after N - 1 rights: the +1 is
earned by the all-right episode alone. Under the uniform random policy each move goes right with probability 1/2
whatever the cell's action mapping, so the column is a random walk on {0, ..., N - 1} clamped at both ends, started at
0: P_{r+1}(c) = (P_r(c - 1) + P_r(c + 1)) / 2 with the clamped ends folded in, and p = P_{N-1}(N - 1) / 2 = 2^-N.
Over E episodes the random policy earns it at least once with probability 1 - (1 - p)^E.

Explore-then-commit (the trivial rung between random and the learners, ladder.py) explores uniformly for E episodes,
then commits to the greedy policy of its counts; it earns ~the optimum after E iff one of its E random episodes
earned the +1. Its expected normalised area under the learning curve over T episodes is then
    A(E) ~ (1 - (1 - p)^E) (T - E) / T,
and E is declared by this formula: E* = argmax_E A(E) (``commit_episodes``).
"""

from __future__ import annotations

import numpy as np

SUCCESS_RETURN = 0.5  # a return above this earned DeepSea's +1


def first_success(end_step: np.ndarray, returns: np.ndarray) -> int | None:
    """The environment step at which one seed's first rewarded episode ended (None if no episode earned the +1)."""
    hit = np.flatnonzero(np.asarray(returns) > SUCCESS_RETURN)
    return int(np.asarray(end_step)[hit[0]]) if hit.size else None


def random_success_probability(size: int) -> float:
    """p: the chance that one episode of the uniform random policy takes "right" in column N - 1 (the module's
    recursion over the N - 1 moves before the last row, then the last move right from column N - 1: 2^-N)."""
    p = np.zeros(size)
    p[0] = 1.0
    for _ in range(size - 1):
        nxt = np.zeros(size)
        np.add.at(nxt, np.minimum(np.arange(size) + 1, size - 1), p / 2)
        np.add.at(nxt, np.maximum(np.arange(size) - 1, 0), p / 2)
        p = nxt
    return float(p[-1] / 2)


def random_reach_probability(size: int, episodes: int) -> float:
    """1 - (1 - p)^E: the chance that the uniform random policy earns the +1 at least once in E episodes."""
    return 1.0 - (1.0 - random_success_probability(size)) ** episodes


def commit_episodes(size: int, episodes: int) -> int:
    """E* = argmax_E (1 - (1 - p)^E) (T - E): explore-then-commit's exploration length that maximises its expected
    area under the learning curve over T = ``episodes`` (module docstring; p = 2^-N)."""
    e = np.arange(episodes + 1)
    return int(np.argmax((1.0 - (1.0 - random_success_probability(size)) ** e) * (episodes - e)))


def solve_episode(returns: np.ndarray, bad_fraction: float) -> int | None:
    """bsuite's solve episode of one seed: the first e (1-based) with #{i <= e: return_i <= 1/2} / e < bad_fraction
    (None if the running bad fraction never drops below it)."""
    bad = np.asarray(returns) <= SUCCESS_RETURN
    running = np.cumsum(bad) / np.arange(1, bad.size + 1)
    below = np.flatnonzero(running < bad_fraction)
    return int(below[0]) + 1 if below.size else None


def reach_summary(first: list[int | None], solved_at: list[int | None], size: int, episodes: int) -> dict:
    """How an agent earned the reward over its seeds (``first``: each seed's first-success step; ``solved_at``: its
    bsuite solve episode), beside the uniform random policy's exact chance of earning it in the same ``episodes``."""
    return {"episodes": episodes, "seeds_reaching": sum(f is not None for f in first), "first_success_step": first,
            "seeds_solving": sum(e is not None for e in solved_at), "solve_episode": solved_at,
            "random_reach_chance": random_reach_probability(size, episodes)}
