"""The environments: DeepSea (procedural hard exploration, Osband et al. 2020, bsuite) and the dense-reward
CartPole that ships with gymnasium; nothing is downloaded.

DeepSea of size N, deterministic, as bsuite's ``bsuite/environments/deep_sea.py`` (github.com/google-deepmind/bsuite,
class DeepSea, deterministic=True, unscaled_move_cost=0.01, randomize_actions=True): state (row r, column c), start
(0, 0); each step the agent moves one column left or right (clipped to 0..N-1) and one row down, so an episode lasts
exactly N steps. Which of the two actions means "right" is drawn once per cell as bsuite draws it
(``np.random.RandomState(mapping_seed).binomial(1, 0.5, [N, N])``; right iff action == mapping[r, c]). Moving right
costs 0.01 / N; "right" taken in column N - 1 pays +1 (bsuite's ``_step``: column N - 1 is reachable only at row
N - 1, so only "right" at (N - 1, N - 1) pays, i.e. only the episode that moves right N times). The optimal return is
1 - 0.01 = 0.99; a uniformly random policy earns the +1 with probability 2^-N (reach.py), and every myopic learner
is pushed left by the cost: the hard exploration case of the paper.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import TimeLimit

TASKS = {"deepsea_small": "deepsea", "deepsea": "deepsea", "cartpole": "cartpole"}  # task -> environment kind


class DeepSea(gym.Env):
    """DeepSea of size N with observation r N + c (Discrete(N^2)) and actions {0, 1}."""

    def __init__(self, size: int, mapping_seed: int) -> None:
        self.size = size
        self.right_action = np.random.RandomState(mapping_seed).binomial(1, 0.5, [size, size])  # bsuite's draw
        self.observation_space = gym.spaces.Discrete(size * size)
        self.action_space = gym.spaces.Discrete(2)
        self._row, self._col = 0, 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[int, dict]:
        super().reset(seed=seed)
        self._row, self._col = 0, 0
        return 0, {}

    def step(self, action: int) -> tuple[int, float, bool, bool, dict]:
        """bsuite's deterministic ``_step``: +1 if c = N - 1 and ``action`` is this cell's right action; then
        c <- min(c + 1, N - 1) at cost 0.01 / N if it is, else max(c - 1, 0); r <- r + 1; the episode ends at r = N
        (the observation after the last step is a placeholder: bsuite's is the all-zero grid)."""
        right = int(action) == self.right_action[self._row, self._col]
        reward = 1.0 if right and self._col == self.size - 1 else 0.0
        if right:
            self._col = min(self._col + 1, self.size - 1)
            reward -= 0.01 / self.size
        else:
            self._col = max(self._col - 1, 0)
        self._row += 1
        done = self._row == self.size
        obs = min(self._row, self.size - 1) * self.size + self._col
        return obs, reward, done, False, {}


@dataclass(frozen=True)
class EnvSpec:
    """What the agents need to know of a task: its environment kind and size (DeepSea's N; 0 otherwise),
    observation width, actions, episode cap, and optimal return."""

    name: str
    kind: str
    size: int
    obs_dim: int
    n_actions: int
    max_steps: int
    optimal_return: float

    @property
    def one_hot(self) -> bool:
        """Whether observations are one-hot vectors of a finite state space (``encode`` of a Discrete space)."""
        return self.kind == "deepsea"


def make_env(kind: str, size: int, max_steps: int, seed: int) -> gym.Env:
    """One environment instance of ``kind``: DeepSea of ``size`` with its action mapping drawn from ``seed``, or
    gymnasium's CartPole-v1 capped at ``max_steps``."""
    if kind == "deepsea":
        return DeepSea(size, seed)
    return TimeLimit(gym.make({"cartpole": "CartPole-v1"}[kind]).unwrapped, max_episode_steps=max_steps)


def encode(env: gym.Env, obs: np.ndarray | int) -> np.ndarray:
    """The network input: a one-hot vector for a Discrete observation, the float vector itself for a Box."""
    space = env.observation_space
    if isinstance(space, gym.spaces.Discrete):
        x = np.zeros(space.n, dtype=np.float32)
        x[int(obs)] = 1.0
        return x
    return np.asarray(obs, dtype=np.float32)


def optimal_return(env: gym.Env, max_steps: int) -> float:
    """The best achievable undiscounted return within ``max_steps`` from the start state, by backward induction
    V_r(c) = max(1[c = N - 1] - 0.01 / N + V_{r+1}(min(c + 1, N - 1)), V_{r+1}(max(c - 1, 0))), V_N = 0, over
    DeepSea's exact model (1 - 0.01 = 0.99, bsuite's ``_optimal_return``); for CartPole (balanced indefinitely by a
    known controller) it is the episode cap."""
    base = env.unwrapped
    if isinstance(base, DeepSea):
        n, cols = base.size, np.arange(base.size)
        value = np.zeros(n)  # V_N: after the last row
        for _ in range(n):
            value = np.maximum(np.where(cols == n - 1, 1.0, 0.0) - 0.01 / n + value[np.minimum(cols + 1, n - 1)],
                               value[np.maximum(cols - 1, 0)])
        return float(value[0])
    return float(max_steps)


def spec_of(name: str, kind: str, size: int, max_steps: int) -> EnvSpec:
    """The EnvSpec of task ``name`` on environment ``kind`` (episode cap: N for DeepSea, ``max_steps`` otherwise)."""
    env = make_env(kind, size, max_steps, 0)
    probe = encode(env, env.reset(seed=0)[0])
    cap = size if kind == "deepsea" else max_steps
    return EnvSpec(name, kind, size if kind == "deepsea" else 0, probe.size, int(env.action_space.n), cap,
                   optimal_return(env, cap))


def policy_return(kind: str, size: int, max_steps: int, episodes: int, seeds: list[int],
                  action: int | None) -> float:
    """Mean undiscounted return over ``episodes`` episodes per task instance (``seeds``) of the uniform random policy
    (``action`` None) or of the constant policy that always plays ``action``."""
    total = 0.0
    for s in seeds:
        env, rng = make_env(kind, size, max_steps, s), np.random.default_rng(s)
        for ep in range(episodes):
            env.reset(seed=20_000 + 100 * s + ep)
            done = False
            while not done:
                a = int(rng.integers(env.action_space.n)) if action is None else action
                _, r, terminated, truncated, _ = env.step(a)
                total += r
                done = terminated or truncated
    return total / (episodes * len(seeds))


def trivial_return(kind: str, size: int, max_steps: int, episodes: int, seeds: list[int]) -> dict[str, float]:
    """Returns of the trivial policies: uniform random and each constant action; ``best`` is their maximum, the 0
    of the normalised score (a trained agent must beat every policy that ignores the state)."""
    env = make_env(kind, size, max_steps, seeds[0])
    out = {"random": policy_return(kind, size, max_steps, episodes, seeds, None)}
    out |= {f"constant_{a}": policy_return(kind, size, max_steps, max(1, episodes // 10), seeds, a)
            for a in range(int(env.action_space.n))}
    return out | {"best": max(out.values())}


def deepsea_digest(size: int, seeds: list[int]) -> str:
    """sha256 of the DeepSea action mappings of ``seeds`` (the procedural task instances)."""
    digest = hashlib.sha256()
    for s in seeds:
        digest.update(DeepSea(size, s).right_action.astype(np.int8).tobytes())
    return digest.hexdigest()
