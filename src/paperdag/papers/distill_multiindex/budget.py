"""The distilled set at a memory budget, and the smallest memory reaching the full-data network's error.

Memory of a set of M points in R^d with labels: M (d + 1) numbers. A target is an excess relative test error:
    e(method) <= e(reference) + tol     (errors relative to Var y, so tol is a fraction of the label variance).
Search (memory_to_target), both grids ascending, for each target tol (several at once share the phase-1 search):
    M1* = min {M1 : e(W_1 of the distilled phase-1 set, real phase 2) <= e_ref + tol / 2},
    M2* = min {M2 : e(distilled phase-1 set of M1*, distilled phase-2 set of M2) <= e_ref + tol},
    memory* = (M1* + M2*)(d + 1); None where a grid ends first (the cell is censored).
Every distilled set is a deterministic function of (cell, size) (its own streams), so a target's result does not
depend on which other targets are searched with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .cell import Cell, Config, distill_phase1, distill_phase2, error, first_layer, fit_second_layer, with_real_phase2


def distilled_error(cell: Cell, m1: int, m2: int, cfg: Config) -> float:
    """Relative test error of the network trained on a distilled set of m1 phase-1 and m2 phase-2 points."""
    X1, y1, _ = distill_phase1(cell, m1, cfg)
    W1 = first_layer(cell, X1, y1, cfg)
    X2, y2, _ = distill_phase2(cell, W1, m2, cfg)
    return error(cell, fit_second_layer(cell, W1, X2, y2, cfg))


@dataclass(frozen=True)
class Search:
    """Result of memory_to_target: the reached sizes (None if censored), the errors met on the way, the sets."""

    m1: int | None
    m2: int | None
    phase1_errors: dict[int, float]
    total_errors: dict[int, float]
    sets: dict[str, torch.Tensor]

    def memory(self, d: int) -> int | None:
        return None if self.m1 is None or self.m2 is None else (self.m1 + self.m2) * (d + 1)


def memory_to_target(cell: Cell, cfg: Config, m1_grid: list[int], m2_grid: list[int], tols: dict[str, float],
                     e_ref: float) -> dict[str, Search]:
    """The sequential search of the module docstring for every named target of ``tols`` (loosest first)."""
    order = sorted(tols, key=lambda k: -tols[k])
    pending, first, phase1_errors = list(order), {}, {}
    for m in m1_grid:
        X1, y1, _ = distill_phase1(cell, m, cfg)
        W1 = first_layer(cell, X1, y1, cfg)
        phase1_errors[m] = error(cell, with_real_phase2(cell, W1, cfg))
        while pending and phase1_errors[m] <= e_ref + tols[pending[0]] / 2:
            first[pending.pop(0)] = (m, X1, y1, W1)
        if not pending:
            break
    out = {}
    for name in order:
        if name not in first:
            out[name] = Search(None, None, phase1_errors, {}, {"phase1_x": X1, "phase1_y": y1})
            continue
        m1, X1, y1, W1 = first[name]
        m2, total_errors, sets = None, {}, {"phase1_x": X1, "phase1_y": y1}
        for m in m2_grid:
            X2, y2, _ = distill_phase2(cell, W1, m, cfg)
            total_errors[m] = error(cell, fit_second_layer(cell, W1, X2, y2, cfg))
            if total_errors[m] <= e_ref + tols[name]:
                m2, sets = m, sets | {"phase2_x": X2, "phase2_y": y2}
                break
        out[name] = Search(m1, m2, phase1_errors, total_errors, sets)
    return out
