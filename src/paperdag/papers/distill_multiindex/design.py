"""The experimental design: which (seed, d, r, L) cells each experiment uses, and the shared Config."""

from __future__ import annotations

from .cell import Config
from .distill import Schedule
from .params import ClaimParams, CompareParams, DataParams, DistillParams, GridParams, NetworkParams

CellKey = tuple[int, int, int, int]  # (seed, d, r, L)


def grid_cells(seed: int, grid: GridParams) -> list[CellKey]:
    """Every (d, r, L) of the scaling grid (the product d x r x widths with r <= d, and the L sweep's (d, r) cells at
    every sweep width), sorted without repeats, at seeds seed, ..., seed + grid.seeds - 1."""
    cells = {(d, r, L) for d in grid.d for r in grid.r for L in grid.widths if r <= d}
    cells |= {(d, r, L) for d, r in grid.sweep.cells for L in grid.sweep.widths}
    return [(seed + s, d, r, L) for d, r, L in sorted(cells) for s in range(grid.seeds)]


def compare_cells(seed: int, compare: CompareParams) -> list[CellKey]:
    """The comparison cell at seeds seed, seed + 1, ..., seed + seeds - 1."""
    return [(seed + s, compare.d, compare.r, compare.width) for s in range(compare.seeds)]


def all_cells(seed: int, grid: GridParams, compare: CompareParams) -> list[CellKey]:
    """The union of both experiments' cells, sorted, without repeats."""
    return sorted(set(grid_cells(seed, grid)) | set(compare_cells(seed, compare)))


def target_excess(claims: ClaimParams, e_ref: float) -> dict[str, float]:
    """The allowed excess over e_ref of each named target: loose ``tol``; near max(tol_near, near_factor x e_ref)."""
    return {"loose": claims.tol, "near": max(claims.tol_near, claims.near_factor * e_ref)}


def target_name(claims: ClaimParams, name: str) -> str:
    """A target's formula, for statements."""
    if name == "loose":
        return f"e_ref + {claims.tol:g}"
    return f"e_ref + max({claims.tol_near:g}, {claims.near_factor:g} e_ref)"


def config(data: DataParams, network: NetworkParams, distill: DistillParams | None = None) -> Config:
    """The Config of every cell (distillation settings zeroed where a stage does not distill)."""
    return Config(n_phase1=data.n_phase1, n_phase2=data.n_phase2, n_test=data.n_test, step=network.step,
                  bias_std=network.bias_std, ridge=network.ridge,
                  schedule=Schedule(distill.steps, distill.lr) if distill else Schedule(0, 0.0),
                  temperature=distill.temperature if distill else 1.0, batch=distill.batch if distill else 1)
