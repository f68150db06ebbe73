"""Baseline: one monolithic scalar Lyapunov-Razumikhin certificate over the whole platoon state X = (x_1..x_N).

Query Z = (X, Delta X, w) in R^{5N}, X^d = X + Delta X, same delay domain per follower as the vector certificate:
    G(Z) = V(X^+) - max(rho max(V(X), V(X^d)) + gamma sum_i |w_i|, rho c_0)   <= 0   where max(V(X), V(X^d)) <= c_0
with V(X) = ||W2 relu(W1 Y)||_1 + eps ||Y||_1 (Y = X / (S, E, S, E, ...)). Trained on samples of the same
domain (no CEGIS), verified by the same branch and bound + MILP, whose input dimension now grows as 5N, within a
wall-clock timeout per N.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from torch import nn

from ..lyapunov import Cert, level_constants
from ..params import BudgetParams, CertificateParams, LearnerParams, MonolithicParams
from ..runtime import Log
from ..verifier import bab
from ..verifier.graph import Builder, MaskedNet
from .certificate import Policy, compile_step
from .domain import query_box, reach_bounds
from .model import Platoon, step


class MonoCert(nn.Module):
    """Scalar certificate on R^{2N} with a learned ISS gain."""

    def __init__(self, pl: Platoon, mono: MonolithicParams, cert: CertificateParams):
        super().__init__()
        self.V = Cert(list(pl.box) * pl.n, mono.hidden, mono.feat, cert.eps)
        self.log_gamma = nn.Parameter(torch.zeros((), dtype=torch.float64))
        self.rho = cert.rho
        self.n = pl.n

    def gamma(self) -> torch.Tensor:
        return torch.exp(self.log_gamma)


def mono_box(pl: Platoon, delta: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(lo, hi, couplings) of Z = (X, Delta X, w): per follower the vector query's own-state part."""
    n = pl.n
    hi = np.zeros(5 * n)
    for i in range(n):
        h = query_box(pl, i, delta)[1]
        hi[2 * i:2 * i + 2], hi[2 * n + 2 * i:2 * n + 2 * i + 2], hi[4 * n + i] = h[0:2], h[2:4], h[8]
    couplings = tuple((a, 2 * n + a, -pl.box[a % 2], pl.box[a % 2]) for a in range(2 * n))
    return -hi, hi, couplings


def decrease_mono(mc: MonoCert, policy: Policy | None, pl: Platoon, Z: torch.Tensor, c_0: float):
    """(G(Z), level(Z)) for a batch Z [B, 5N]."""
    n = pl.n
    X = Z[:, :2 * n].reshape(-1, n, 2)
    Xd = X + Z[:, 2 * n:4 * n].reshape(-1, n, 2)
    w = Z[:, 4 * n:]
    zero = torch.zeros_like(X[:, :1])
    nxt = step(pl, np.arange(n), X, Xd, torch.cat([zero, X[:, :-1]], 1), torch.cat([zero, Xd[:, :-1]], 1), w, policy)
    level = torch.maximum(mc.V(X.flatten(1)), mc.V(Xd.flatten(1)))
    R = mc.rho * level + mc.gamma() * w.abs().sum(-1)
    return mc.V(nxt.flatten(1)) - torch.clamp(R, min=mc.rho * c_0), level


def compile_mono(mc: MonoCert, policy: Policy | None, pl: Platoon, c_0: float) -> MaskedNet:
    """Masked ReLU net Z [5N] -> (G, level)."""
    n = pl.n
    b = Builder(5 * n)
    pw = policy.weights() if policy is not None else None
    xs = [b.input([2 * i, 2 * i + 1]) for i in range(n)]
    xds = [b.add(xs[i], b.input([2 * n + 2 * i, 2 * n + 2 * i + 1])) for i in range(n)]
    ws = [b.input([4 * n + i]) for i in range(n)]
    zero = b.linear(xs[0], np.zeros((2, 2)))
    nxt = [compile_step(b, pl, i, xs[i], xds[i], xs[i - 1] if i else zero, xds[i - 1] if i else zero, ws[i], pw)
           for i in range(n)]
    level = b.max2(mc.V.compile(b, b.cat(*xs)), mc.V.compile(b, b.cat(*xds)))
    w_abs = b.linear(b.abs(b.cat(*ws)), np.ones((1, n)))
    R = b.add(level, w_abs, weights=(mc.rho, float(mc.gamma().detach())))
    G = b.add(mc.V.compile(b, b.cat(*nxt)), b.max2(R, b.linear(ws[0], [[0.0]], mc.rho * c_0)), weights=(1.0, -1.0))
    return b.build(b.cat(G, level))


def mono_property(mc: MonoCert, policy: Policy | None, pl: Platoon, delta, c_0: float) -> bab.Property:
    """G <= 0 on the delay domain where level <= c_0."""
    lo, hi, couplings = mono_box(pl, delta)
    return bab.Property(compile_mono(mc, policy, pl, c_0), np.array([1.0, 0.0]), 0.0, lo, hi, couplings,
                        ((np.array([0.0, 1.0]), c_0, "<="),))


def sample_mono(pl: Platoon, delta, n: int, gen: torch.Generator) -> torch.Tensor:
    """n queries Z uniform on the box, with Delta X moved so that X + Delta X stays in the state box."""
    lo, hi, _ = mono_box(pl, delta)
    hi = torch.as_tensor(hi)
    Z = (2 * torch.rand(n, len(hi), generator=gen, dtype=torch.float64) - 1) * hi
    m = 2 * pl.n
    b = torch.tensor(pl.box * pl.n, dtype=torch.float64)
    Z[:, m:2 * m] = torch.clamp(Z[:, :m] + Z[:, m:2 * m], -b, b) - Z[:, :m]
    return Z


def train_mono(pl: Platoon, policy: Policy, delta, mono: MonolithicParams, cert: CertificateParams,
               learner: LearnerParams, gen: torch.Generator, log: Log) -> tuple[MonoCert, float]:
    """Sampled-loss training: mean relu(G + m c_0) on the level set, plus lambda_gamma gamma, with c_0 the minimum
    of V on boundary samples; returns the certificate and the last c_0 estimate."""
    mc = MonoCert(pl, mono, cert)
    opt = torch.optim.Adam(mc.parameters(), lr=learner.lr)
    b = torch.tensor(pl.box * pl.n, dtype=torch.float64)
    c_0 = 1.0
    for it in range(mono.steps):
        with torch.no_grad():
            x = (2 * torch.rand(512, 2 * pl.n, generator=gen, dtype=torch.float64) - 1) * b
            face = torch.randint(2 * pl.n, (512,), generator=gen)
            x[torch.arange(512), face] = b[face] * torch.sign(torch.randn(512, generator=gen, dtype=torch.float64))
            c_0 = float(mc.V(x).min())
        Z = sample_mono(pl, delta, learner.batch, gen)
        G, level = decrease_mono(mc, policy, pl, Z, c_0)
        inside = level.detach() <= c_0
        loss = (torch.relu(G + learner.margin * c_0) * inside).sum() / inside.sum().clamp(min=1) \
            + learner.lambda_gamma * mc.gamma()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log(f"mono{pl.n}_loss", float(loss.detach()), it)
    return mc, c_0


def mono_tensors(certs: list[MonoCert]) -> dict[str, torch.Tensor]:
    """The state dicts of certificates for different N as one flat tensor dict (``n<N>.<name>``)."""
    return {f"n{mc.n}.{k}": v for mc in certs for k, v in mc.state_dict().items()}


def load_mono(tensors: dict[str, torch.Tensor], pl: Platoon, mono: MonolithicParams,
              cert: CertificateParams) -> MonoCert:
    """The certificate of platoon ``pl`` from ``mono_tensors``."""
    mc = MonoCert(pl, mono, cert)
    prefix = f"n{pl.n}."
    mc.load_state_dict({k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)})
    return mc


def verify_mono(mc: MonoCert, policy: Policy, pl: Platoon, budget: BudgetParams, timeout: float) -> dict:
    """Verify the monolithic certificate within ``timeout`` seconds (c_0 by one CROWN pass, then branch and bound with
    100x the per-follower cell budget); returns the verdict, time, cells and up to 20 counterexamples."""
    t0 = time.perf_counter()
    c_0, _ = level_constants(mc.V, np.array(pl.box * pl.n), exact=False)
    left = timeout - (time.perf_counter() - t0)
    res = bab.verify(mono_property(mc, policy, pl, reach_bounds(policy, pl), c_0), budget.max_cells * 100,
                     budget.max_depth, max_milp=budget.max_milp, milp_time=min(budget.milp_time, max(left, 0.1)),
                     time_budget=left, stop_after_cex=budget.stop_after_cex)
    seconds = time.perf_counter() - t0
    return {"n": pl.n, "verified": res.verified, "seconds": seconds, "cells": len(res.rows),
            "refuted_cells": res.count("refuted"), "unknown_cells": res.count("unknown"),
            "timed_out": seconds >= timeout, "c_0": c_0,
            "counterexamples": [z.tolist() for z in res.counterexamples[:20]]}
