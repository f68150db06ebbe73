"""Compile piecewise-linear computations into one *masked ReLU network* that the verifier understands.

A masked ReLU network is a sequence of layers ``h_l = act_l(W_l h_{l-1} + b_l)`` where ``act_l`` applies ReLU on the
units whose mask is True and the identity on the others; the last layer has no ReLU. Controller, dynamics,
certificate, ``|w| = relu(w) + relu(-w)`` and ``max(a, b) = b + relu(a - b)`` all compile into this one form, so
interval bounds, CROWN and the MILP need to handle a single kind of object.

``Builder`` traces such a computation: a ``Sym`` is a vector of affine expressions over the units of one level;
``relu`` opens units one level up; combining values of different levels carries the lower one up with identity
units (exact, no relaxation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MaskedNet:
    """Layers (W_l [n_l, n_{l-1}], b_l [n_l], relu_l bool [n_l]); the output is the last layer's units."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    relu: tuple[np.ndarray, ...]

    @property
    def n_out(self) -> int:
        return self.weights[-1].shape[0]

    def __call__(self, z: np.ndarray) -> np.ndarray:
        """Exact forward pass on a batch ``z [B, n_in]`` (float64)."""
        h = np.asarray(z, dtype=np.float64)
        for w, b, m in zip(self.weights, self.biases, self.relu):
            h = h @ w.T + b
            h = np.where(m, np.maximum(h, 0.0), h)
        return h


@dataclass(frozen=True)
class Sym:
    """``M @ h_level + c``: a vector of k affine expressions over the units of ``level`` (level 0 = inputs)."""

    level: int
    M: np.ndarray
    c: np.ndarray

    def __len__(self) -> int:
        return self.M.shape[0]


class Builder:
    """Trace a piecewise-linear function of ``n_in`` inputs into a ``MaskedNet``."""

    def __init__(self, n_in: int):
        self.width = [n_in]
        self.rows: list[list[tuple[np.ndarray, float, bool]]] = [[]]

    def input(self, idx: list[int] | np.ndarray) -> Sym:
        """The inputs ``z[idx]`` as a symbolic vector."""
        idx = np.asarray(idx, dtype=int)
        M = np.zeros((len(idx), self.width[0]))
        M[np.arange(len(idx)), idx] = 1.0
        return Sym(0, M, np.zeros(len(idx)))

    def _open(self, s: Sym, relu: bool) -> Sym:
        """New units at ``s.level + 1`` computing ``act(s)``; returns them as a Sym."""
        lvl = s.level + 1
        if lvl == len(self.width):
            self.width.append(0)
            self.rows.append([])
        start = self.width[lvl]
        for r, c in zip(s.M, s.c):
            self.rows[lvl].append((r.copy(), float(c), relu))
        self.width[lvl] += len(s)
        M = np.zeros((len(s), self.width[lvl]))
        M[np.arange(len(s)), start + np.arange(len(s))] = 1.0
        return Sym(lvl, M, np.zeros(len(s)))

    def _pad(self, s: Sym) -> Sym:
        width = self.width[s.level]
        return Sym(s.level, np.pad(s.M, ((0, 0), (0, width - s.M.shape[1]))), s.c)

    def lift(self, s: Sym, level: int) -> Sym:
        """Carry ``s`` up to ``level`` through identity units (exact)."""
        while s.level < level:
            s = self._open(s, relu=False)
        return s

    def relu(self, s: Sym) -> Sym:
        return self._open(s, relu=True)

    def linear(self, s: Sym, A: np.ndarray, b: np.ndarray | float = 0.0) -> Sym:
        """``A s + b``."""
        A = np.atleast_2d(np.asarray(A, dtype=np.float64))
        return Sym(s.level, A @ s.M, A @ s.c + b)

    def cat(self, *parts: Sym) -> Sym:
        level = max(p.level for p in parts)
        parts = tuple(self.lift(p, level) for p in parts)
        parts = tuple(self._pad(p) for p in parts)
        return Sym(level, np.concatenate([p.M for p in parts]), np.concatenate([p.c for p in parts]))

    def add(self, *parts: Sym, weights: tuple[float, ...] | None = None) -> Sym:
        """Weighted sum of equal-length vectors."""
        weights = weights or (1.0,) * len(parts)
        level = max(p.level for p in parts)
        parts = tuple(self.lift(p, level) for p in parts)
        parts = tuple(self._pad(p) for p in parts)
        M = sum(w * p.M for w, p in zip(weights, parts))
        c = sum(w * p.c for w, p in zip(weights, parts))
        return Sym(level, M, c)

    def abs(self, s: Sym) -> Sym:
        """``|s| = relu(s) + relu(-s)`` elementwise."""
        both = self.relu(self.cat(s, self.linear(s, -np.eye(len(s)))))
        k = len(s)
        return self.linear(both, np.hstack([np.eye(k), np.eye(k)]))

    def max2(self, a: Sym, b: Sym) -> Sym:
        """``max(a, b) = b + relu(a - b)`` elementwise."""
        return self.add(b, self.relu(self.add(a, b, weights=(1.0, -1.0))))

    def mlp(self, s: Sym, weights: list[np.ndarray]) -> Sym:
        """Bias-free ReLU MLP: ReLU after every matrix but the last."""
        for i, w in enumerate(weights):
            s = self.linear(s, w)
            if i < len(weights) - 1:
                s = self.relu(s)
        return s

    def build(self, out: Sym) -> MaskedNet:
        """Finish with a ReLU-free output layer computing ``out``."""
        out = self._open(self.lift(out, len(self.width) - 1), relu=False)  # a fresh top level: outputs only
        Ws, bs, ms = [], [], []
        for lvl in range(1, len(self.width)):
            rows = self.rows[lvl]
            W = np.zeros((len(rows), self.width[lvl - 1]))
            for i, (r, _, _) in enumerate(rows):
                W[i, : len(r)] = r
            Ws.append(W)
            bs.append(np.array([c for _, c, _ in rows]))
            ms.append(np.array([m for _, _, m in rows], dtype=bool))
        return MaskedNet(tuple(Ws), tuple(bs), tuple(ms))
