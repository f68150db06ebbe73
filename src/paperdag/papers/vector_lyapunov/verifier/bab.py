"""Input-domain branch and bound: prove ``obj . out(z) <= threshold`` for all z in a box (optionally only where the
region conditions ``reg_j . out(z) >= value_j`` / ``<= value_j`` all hold, and with coupling constraints
``l <= z_a + z_b <= u``), or refute it with a concrete z.

Each cell: (1) tighten z_b from the coupling constraints, (2) CROWN upper bound of the objective (and bound of the
region expressions: cells where some condition provably fails are settled as ``outside``), (3) if the bound is
<= threshold the cell is ``proved``; else evaluate the exact network at the maximiser of the CROWN linear bound and
the cell centre: a feasible point above the threshold refutes (``refuted``, a counterexample); otherwise bisect the
input dimension chosen by strong branching (``choose_split``). Cells still open at ``max_depth`` or when the cell
budget is spent go to the exact MILP (``proved_milp`` / ``refuted`` / ``unknown``). Nothing is ever settled by sampling.

Every budget is a count (cells, MILPs, MILP nodes), never seconds: the verdict and the cell table are functions of
the property and the budget; a spent budget leaves cells ``unknown`` (or ``unexplored`` after enough
counterexamples), never a different answer. Seconds are measured and reported beside the work counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from .bounds import output_bounds
from .graph import MaskedNet
from .milp import MilpResult, solve_on_box


@dataclass(frozen=True)
class Property:
    """``objective . out <= threshold`` on ``[lo, hi]`` where every ``regions`` condition holds, with couplings
    ``(a, b, l, u): l <= z_a + z_b <= u``."""

    net: MaskedNet
    objective: np.ndarray
    threshold: float
    lo: np.ndarray
    hi: np.ndarray
    couplings: tuple[tuple[int, int, float, float], ...] = ()
    regions: tuple[tuple[np.ndarray, float, str], ...] = ()


@dataclass
class Result:
    """Per-cell table rows and counterexamples; ``verified`` iff every cell is proved, outside or empty. Work:
    ``cells`` bounded by CROWN, ``milps`` solved, their branch-and-bound ``milp_nodes`` and simplex ``lp_iterations``
    (deterministic); ``seconds`` (wall clock, reported only)."""

    rows: list[dict] = field(default_factory=list)
    counterexamples: list[np.ndarray] = field(default_factory=list)
    seconds: float = 0.0
    cells: int = 0
    milps: int = 0
    milp_nodes: int = 0
    lp_iterations: int = 0

    def add_milp(self, r: MilpResult) -> None:
        self.milps += 1
        self.milp_nodes += r.nodes
        self.lp_iterations += r.lp_iterations

    def work(self) -> dict[str, int]:
        """The deterministic work counts, and ``bounds`` = cells + MILP nodes (one CROWN bound per cell, one LP
        relaxation per MILP node): the unit in which verification costs are compared."""
        return {"cells": self.cells, "milps": self.milps, "milp_nodes": self.milp_nodes,
                "lp_iterations": self.lp_iterations, "bounds": self.cells + self.milp_nodes}

    @property
    def verified(self) -> bool:
        return all(r["status"] in ("proved", "proved_milp", "outside", "empty") for r in self.rows)

    def count(self, status: str) -> int:
        return sum(r["status"] == status for r in self.rows)


def tighten(prop: Property, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interval hull of z_b given z_a in the cell and l <= z_a + z_b <= u."""
    lo, hi = lo.copy(), hi.copy()
    for a, b, l, u in prop.couplings:
        lo[..., b] = np.maximum(lo[..., b], l - hi[..., a])
        hi[..., b] = np.minimum(hi[..., b], u - lo[..., a])
    return lo, hi


def feasible(prop: Property, z: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Which points satisfy the box, the couplings and the region condition (exact evaluation)."""
    ok = np.all((z >= prop.lo - tol) & (z <= prop.hi + tol), axis=-1)
    for a, b, l, u in prop.couplings:
        s = z[..., a] + z[..., b]
        ok &= (s >= l - tol) & (s <= u + tol)
    if prop.regions:
        out = prop.net(z)
        for coef, value, sense in prop.regions:
            r = out @ coef
            ok &= r >= value if sense == ">=" else r <= value
    return ok


def violating_point(prop: Property, z: np.ndarray) -> np.ndarray | None:
    """z, or z shrunk towards the origin by a relative 1e-9 .. 1e-3, whichever first is exactly feasible and violates
    the property (a MILP optimum sits on constraint boundaries up to the solver's tolerance; for the homogeneous
    queries of this paper shrinking restores feasibility and keeps a strict violation)."""
    for s in (0.0, 1e-9, 1e-7, 1e-5, 1e-3):
        c = z * (1.0 - s)
        if (prop.net(c[None]) @ prop.objective)[0] > prop.threshold and feasible(prop, c[None])[0]:
            return c
    return None


def _project(prop: Property, z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    z = np.clip(z, lo, hi)
    for a, b, l, u in prop.couplings:
        z[..., b] = np.clip(z[..., b], l - z[..., a], u - z[..., a])
    return z


def milp_cell(prop: Property, lo: np.ndarray, hi: np.ndarray, node_limit: int, decide: bool = False) -> MilpResult:
    """Exact MILP of max objective . out over one cell (couplings and region conditions as linear rows; big-M
    constants from the cell's CROWN layer bounds); ``decide``: only decide max <= threshold (``milp.maximize``'s
    target: the search is restricted to violations and stops at the first one)."""
    rows = []
    for a, b, l, u in prop.couplings:
        coef = np.zeros(len(lo))
        coef[a] = coef[b] = 1.0
        rows.append((coef, l, u))
    out_rows = [(coef, value, np.inf) if sense == ">=" else (coef, -np.inf, value)
                for coef, value, sense in prop.regions]
    return solve_on_box(prop.net, lo, hi, prop.objective, rows, out_rows, node_limit,
                        target=prop.threshold if decide else None)


def worst_case(prop: Property, node_limit: int) -> MilpResult:
    """MILP over the whole domain: proven upper bound of the objective and the best point found (CEGIS oracle)."""
    lo, hi = tighten(prop, prop.lo, prop.hi)
    return milp_cell(prop, lo, hi, node_limit)


def choose_split(prop: Property, lo: np.ndarray, hi: np.ndarray, device: str = "cpu") -> np.ndarray:
    """Strong branching: for every cell and input dimension bound both halves (CROWN on the objective with interval
    intermediate bounds) and pick the dimension whose worse half has the lowest bound (ties: widest relative)."""
    n, d = lo.shape
    mid = (lo + hi) / 2
    clo = np.repeat(lo[:, None, None], d, 1).repeat(2, 2)  # [n, d, 2, d]
    chi = np.repeat(hi[:, None, None], d, 1).repeat(2, 2)
    j = np.arange(d)
    chi[:, j, 0, j] = mid[:, j]
    clo[:, j, 1, j] = mid[:, j]
    C = torch.as_tensor(prop.objective[None], dtype=torch.float64, device=device)
    ub, _, _ = output_bounds(prop.net, torch.as_tensor(clo.reshape(-1, d), device=device),
                             torch.as_tensor(chi.reshape(-1, d), device=device), C, crown_layers=False)
    worst = ub[:, 0].cpu().numpy().reshape(n, d, 2).max(-1)
    rel = (hi - lo) / np.maximum(prop.hi - prop.lo, 1e-12)
    worst = np.where(rel > 0, worst - 1e-9 * rel, np.inf)
    return np.argmin(worst, axis=1)


def verify(prop: Property, max_cells: int = 20000, max_depth: int = 40, batch: int = 128, max_milp: int = 50,
           milp_nodes: int = 10_000, stop_after_cex: int = 0, stop_at_unknown: bool = False,
           device: str = "cpu") -> Result:
    """Branch and bound over the input box; returns the per-cell table (leaves of the search tree).

    Budget: ``max_cells`` cells bounded (in batches of ``batch``), ``max_milp`` MILPs of at most ``milp_nodes``
    nodes each. stop_after_cex > 0: stop once that many counterexamples are found (the property is refuted; open
    cells are recorded as ``unexplored``). stop_at_unknown: stop at the first cell the budget leaves ``unknown``
    (the property can no longer be proved under the budget; the cells after it are ``unexplored``, so the verdict
    proved / not proved is the full budget's, and a counterexample a later cell would have found is not searched)."""
    t0 = time.perf_counter()
    res = Result()
    C = [torch.as_tensor(prop.objective, dtype=torch.float64)]
    for coef, _, sense in prop.regions:
        C.append(torch.as_tensor(coef if sense == ">=" else -coef, dtype=torch.float64))  # ub of r, or -lb of r
    C = torch.stack(C)
    stack = [(prop.lo.copy(), prop.hi.copy(), 0)]
    to_milp: list[tuple[np.ndarray, np.ndarray, int]] = []
    visited = 0

    def record(lo, hi, depth, status, bound, nodes=0):
        res.rows.append({"lo": lo.tolist(), "hi": hi.tolist(), "depth": int(depth), "status": status,
                         "bound": float(bound), "nodes": int(nodes)})

    while stack:
        if stop_after_cex and len(res.counterexamples) >= stop_after_cex:
            for lo, hi, depth in stack:
                record(lo, hi, depth, "unexplored", np.inf)
            stack = []
            break
        if visited >= max_cells:
            to_milp.extend(stack)
            break
        cells = [stack.pop() for _ in range(min(batch, len(stack)))]
        visited += len(cells)
        res.cells = visited
        lo = np.stack([c[0] for c in cells])
        hi = np.stack([c[1] for c in cells])
        depth = np.array([c[2] for c in cells])
        lo, hi = tighten(prop, lo, hi)
        empty = np.any(lo > hi, axis=1)
        for k in np.nonzero(empty)[0]:
            record(lo[k], hi[k], depth[k], "empty", -np.inf)
        keep = ~empty
        lo, hi, depth = lo[keep], hi[keep], depth[keep]
        if len(lo) == 0:
            continue
        tlo, thi = torch.as_tensor(lo, device=device), torch.as_tensor(hi, device=device)
        ub, A, _ = output_bounds(prop.net, tlo, thi, C.to(device))
        ub, A = ub.cpu().numpy(), A[:, 0].cpu().numpy()
        outside = np.zeros(len(lo), bool)
        for j, (_, value, sense) in enumerate(prop.regions, 1):
            outside |= ub[:, j] < value if sense == ">=" else -ub[:, j] > value
        proved = ~outside & (ub[:, 0] <= prop.threshold)
        vertex = np.where(A > 0, hi, lo)
        cand = np.concatenate([_project(prop, vertex, lo, hi), _project(prop, (lo + hi) / 2, lo, hi)])
        n = len(lo)
        viol = ((prop.net(cand) @ prop.objective > prop.threshold) & feasible(prop, cand)).reshape(2, n)
        which = np.argmax(viol, axis=0)  # first violating candidate of each cell (vertex, then centre)
        need = ~outside & ~proved & ~viol.any(0) & (depth < max_depth)
        split = np.zeros(len(lo), int)
        if need.any():
            split[need] = choose_split(prop, lo[need], hi[need], device)
        for k in range(len(lo)):
            if outside[k]:
                record(lo[k], hi[k], depth[k], "outside", ub[k, 0])
            elif proved[k]:
                record(lo[k], hi[k], depth[k], "proved", ub[k, 0])
            elif viol[:, k].any():
                res.counterexamples.append(cand[which[k] * n + k])
                record(lo[k], hi[k], depth[k], "refuted", ub[k, 0])
            elif depth[k] >= max_depth:
                to_milp.append((lo[k], hi[k], depth[k]))
            else:
                d = int(split[k])
                mid = (lo[k, d] + hi[k, d]) / 2
                left_hi, right_lo = hi[k].copy(), lo[k].copy()
                left_hi[d], right_lo[d] = mid, mid
                stack += [(lo[k], left_hi, depth[k] + 1), (right_lo, hi[k], depth[k] + 1)]
    for lo, hi, depth in to_milp:
        if (stop_after_cex and len(res.counterexamples) >= stop_after_cex) or (stop_at_unknown
                                                                                and res.count("unknown")):
            record(lo, hi, depth, "unexplored", np.inf)
            continue
        lo, hi = tighten(prop, lo, hi)
        if np.any(lo > hi):
            record(lo, hi, depth, "empty", -np.inf)
            continue
        if res.milps >= max_milp:
            record(lo, hi, depth, "unknown", np.inf)
            continue
        r = milp_cell(prop, lo, hi, milp_nodes, decide=True)
        res.add_milp(r)
        z = violating_point(prop, r.z) if r.z is not None else None
        if r.bound <= prop.threshold:
            record(lo, hi, depth, "proved_milp", r.bound, r.nodes)
        elif z is not None:
            res.counterexamples.append(z)
            record(lo, hi, depth, "refuted", r.bound, r.nodes)
        else:
            record(lo, hi, depth, "unknown", r.bound, r.nodes)
    res.seconds = time.perf_counter() - t0
    return res
