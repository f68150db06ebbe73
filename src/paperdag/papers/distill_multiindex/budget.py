"""The distilled set at a memory budget, and the smallest memory reaching the full-data network's error.

Memory of a set of M points in R^d with labels: M (d + 1) numbers. The target is an excess relative test error:
    e(method) <= e(reference) + tol     (errors relative to Var y, so tol is a fraction of the label variance).
Search (memory_to_target), both grids ascending:
    M1* = min {M1 : e(W_1 of the distilled phase-1 set, real phase 2) <= e_ref + tol / 2},
    M2* = min {M2 : e(distilled phase-1 set of M1*, distilled phase-2 set of M2) <= e_ref + tol},
    memory* = (M1* + M2*)(d + 1); None where a grid ends first (the cell is censored).
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


def memory_to_target(cell: Cell, cfg: Config, m1_grid: list[int], m2_grid: list[int], tol: float,
                     e_ref: float) -> Search:
    """The sequential search of the module docstring."""
    phase1_errors, total_errors, sets = {}, {}, {}
    m1 = m2 = None
    for m in m1_grid:
        X1, y1, _ = distill_phase1(cell, m, cfg)
        W1 = first_layer(cell, X1, y1, cfg)
        phase1_errors[m] = error(cell, with_real_phase2(cell, W1, cfg))
        if phase1_errors[m] <= e_ref + tol / 2:
            m1, sets = m, {"phase1_x": X1, "phase1_y": y1}
            break
    if m1 is None:
        return Search(None, None, phase1_errors, total_errors, {"phase1_x": X1, "phase1_y": y1})
    for m in m2_grid:
        X2, y2, _ = distill_phase2(cell, W1, m, cfg)
        total_errors[m] = error(cell, fit_second_layer(cell, W1, X2, y2, cfg))
        if total_errors[m] <= e_ref + tol:
            m2, sets = m, sets | {"phase2_x": X2, "phase2_y": y2}
            break
    return Search(m1, m2, phase1_errors, total_errors, sets)
