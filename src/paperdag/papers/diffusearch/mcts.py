"""DiffuSearch: Monte Carlo Tree Search over the order in which plan-and-infill slots are filled.

A state is the partially filled answer; an action a picks the next unfilled slot, which is then filled with the
MDM's argmax there (so transitions are deterministic). At a node with model scores p:

    prior      P(a) = c_a / sum_b c_b,   c_a = max_w p(x_a = w | state)        (slot confidence)
    selection  a* = argmax_a  Q(s, a) + c_puct * P(a) * sqrt(N(s)) / (1 + n(s, a))   (PUCT)
    look-ahead from the first unexpanded state: fill the most confident slot greedily until none is left
    reward     R = exp( (1/S) sum_s log p(x_s | x_{-s}) )   (pseudo-likelihood of the completed answer: each slot
               re-scored with only itself masked; the model's own confidence, no external verifier)

Q(s, a) is the mean reward of the simulations through (s, a). After ``n_sim`` simulations from the root the most
visited action is committed (ties: larger prior), the child becomes the root (its statistics kept), repeat.

Three conventions the paper leaves unstated decide what the search does, so each is a parameter (``Conventions``):

    tie_break    "prior": ties of the PUCT score go to the larger prior; "index": to the leftmost slot. At a fresh
                 node N(s) = 0, so every exploration term is 0 and the choice is a tie: with "index" the first
                 descent from every new node is left-to-right.
    q_init       Q of an unvisited edge: "zero" (AlphaGo Zero's Q = 0, which is pessimistic when rewards lie in
                 (0, 1], so the first visited edge keeps being exploited; under "minmax" it is 0 on the normalised
                 scale, as in MuZero, not a raw 0 mapped to -R_min / (R_max - R_min)), or "parent" (first-play
                 urgency equal to the node's mean value sum_a W(s, a) / N(s), 0 before any visit).
    reward_norm  "none": Q as is; "minmax": Q mapped to [0, 1] by the smallest and largest reward seen in this
                 task's tree, (Q - R_min) / (R_max - R_min), as in MuZero (Schrittwieser et al. 2020), so that
                 c_puct weighs the prior against reward differences rather than against the rewards' level.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .decoding import (
    ALPHABET_INDEX,
    Decoded,
    Decoder,
    Oracle,
    masked_start,
    slot_choice,
)

State = tuple[int, ...]  # filled token per slot, -1 where unfilled


@dataclass(frozen=True)
class Conventions:
    """The search's unstated conventions (module docstring)."""

    tie_break: Literal["prior", "index"]
    q_init: Literal["zero", "parent"]
    reward_norm: Literal["none", "minmax"]


@dataclass
class Node:
    """Edge statistics of one expanded state, indexed by slot."""

    prior: np.ndarray
    tokens: np.ndarray  # the argmax token each action would fill in
    visits: np.ndarray = field(init=False)
    value_sum: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.visits = np.zeros(len(self.prior))
        self.value_sum = np.zeros(len(self.prior))

    def q(self, conv: Conventions, bounds: tuple[float, float]) -> np.ndarray:
        """Q per edge: W / n where visited, min-max normalised by ``bounds`` (the smallest and largest reward seen)
        when ``reward_norm`` is "minmax" and the bounds differ; an unvisited edge gets the ``q_init`` value on the
        same scale: "zero" is 0 on the scale Q is compared on (MuZero's pseudocode scores an unvisited child 0 after
        normalising only visited ones), "parent" is the node's mean reward, normalised like a visited Q."""
        n = self.visits.sum()
        lo, hi = bounds
        scale = (lambda v: (v - lo) / (hi - lo)) if conv.reward_norm == "minmax" and hi > lo else (lambda v: v)
        unvisited = scale(self.value_sum.sum() / n) if conv.q_init == "parent" and n > 0 else 0.0
        visited = self.visits > 0
        q = np.full_like(self.value_sum, unvisited)
        q[visited] = scale(self.value_sum[visited] / self.visits[visited])
        return q

    def puct(self, c: float, conv: Conventions, bounds: tuple[float, float]) -> np.ndarray:
        """Q + c P sqrt(N) / (1 + n); -inf for illegal actions (filled slots, prior 0)."""
        score = self.q(conv, bounds) + c * self.prior * np.sqrt(self.visits.sum()) / (1 + self.visits)
        return np.where(self.prior > 0, score, -np.inf)

    def select(self, c: float, conv: Conventions, bounds: tuple[float, float]) -> int:
        """argmax of the PUCT score, ties broken by ``tie_break`` (larger prior, or the leftmost slot)."""
        score = self.puct(c, conv, bounds)
        tied = np.flatnonzero(score == score.max())
        return int(tied[np.argmax(self.prior[tied])] if conv.tie_break == "prior" else tied[0])


def child(state: State, slot: int, token: int) -> State:
    """The state with ``slot`` filled by ``token``."""
    return state[:slot] + (token,) + state[slot + 1:]


class Search:
    """One task's search tree (a transposition table keyed by state) and its memoised model access."""

    def __init__(self, x: np.ndarray, answer_start: int, slots: np.ndarray, conv: Conventions):
        self.base, self.start, self.slots, self.conv = masked_start(x, answer_start, slots), answer_start, slots, conv
        self.oracle, self.tree = Oracle(), {}
        self.choices: dict[State, tuple[np.ndarray, np.ndarray]] = {}
        self.rewards: dict[State, float] = {}

    def row(self, state: State) -> np.ndarray:
        """The token row of ``state`` (unfilled slots masked)."""
        y = self.base.copy()
        for s, tok in enumerate(state):
            if tok >= 0:
                y[self.start + self.slots[s]] = tok
        return y

    def choice(self, state: State) -> Decoder:
        """(confidence, argmax token) of every slot at ``state``, confidence 0 on filled slots."""
        if state not in self.choices:
            scores = (yield from self.oracle.score(self.row(state)[None]))[0]
            conf, tok = slot_choice(scores, self.slots)
            self.choices[state] = (np.where(np.array(state) < 0, conf, 0.0), tok)
        return self.choices[state]

    def expand(self, state: State) -> Decoder:
        """The state's tree node (prior = normalised slot confidence), created if new."""
        if state not in self.tree:
            conf, tok = yield from self.choice(state)
            self.tree[state] = Node(conf / conf.sum(), tok)
        return self.tree[state]

    def reward(self, state: State) -> Decoder:
        """R of a complete state: pseudo-likelihood of each slot with only that slot masked (one row per slot)."""
        if state not in self.rewards:
            full = self.row(state)
            rows = np.stack([masked_start(full, self.start, self.slots[s:s + 1]) for s in range(len(state))])
            scores = yield from self.oracle.score(rows)
            idx = ALPHABET_INDEX[np.array(state)]
            logp = scores[np.arange(len(state)), self.slots, idx]
            self.rewards[state] = float(np.exp(logp.mean()))
        return self.rewards[state]

    def bounds(self) -> tuple[float, float]:
        """(smallest, largest) reward seen so far in this task's tree ((0, 0) before any)."""
        seen = self.rewards.values()
        return (min(seen), max(seen)) if seen else (0.0, 0.0)

    def simulate(self, root: State, c: float) -> Decoder:
        """One PUCT descent to an unexpanded state, a greedy look-ahead to a complete answer, and the backup."""
        path, state = [], root
        while -1 in state and state in self.tree:
            node = self.tree[state]
            a = node.select(c, self.conv, self.bounds())
            path.append((node, a))
            state = child(state, a, int(node.tokens[a]))
        if -1 in state:
            yield from self.expand(state)
        while -1 in state:
            conf, tok = yield from self.choice(state)
            a = int(np.argmax(conf))
            state = child(state, a, int(tok[a]))
        r = yield from self.reward(state)
        for node, a in path:
            node.visits[a] += 1
            node.value_sum[a] += r
        return None


def diffusearch(x: np.ndarray, answer_start: int, slots: np.ndarray, c: float, n_sim: int,
                conv: Conventions) -> Decoder:
    """MCTS over infilling orders (module docstring); returns the committed answer and order."""
    search = Search(x, answer_start, slots, conv)
    state: State = (-1,) * len(slots)
    order = []
    while -1 in state:
        node = yield from search.expand(state)
        if (np.array(state) < 0).sum() > 1:
            for _ in range(n_sim):
                yield from search.simulate(state, c)
        a = int(np.lexsort((node.prior, node.visits))[-1])
        order.append(a)
        state = child(state, a, int(node.tokens[a]))
    return Decoded(search.row(state), order, search.oracle.forwards)
