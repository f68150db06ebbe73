"""Parameters of distill_multiindex (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

import math

from typing import Annotated, Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Sizes = Annotated[list[Annotated[int, Field(ge=1, le=100_000)]], Field(min_length=1)]


class DataParams(ParamsModel):
    """Real rows drawn per cell from the multi-index model (task.py)."""

    n_phase1: int = Field(ge=16, le=1_000_000, description="real rows for the phase-1 gradient step (and G_D)")
    n_phase2: int = Field(ge=16, le=1_000_000, description="real rows for the phase-2 ridge regression")
    n_test: int = Field(ge=16, le=1_000_000, description="fresh test rows of every cell")


class NetworkParams(ParamsModel):
    """The two-phase training algorithm (network.py)."""

    step: float = Field(gt=0.0, le=100.0, description="phase-1 step: eta = step * sqrt(pi d)")
    bias_std: float = Field(gt=0.0, le=10.0, description="std of the phase-2 biases b_j ~ N(0, bias_std^2)")
    ridge: float = Field(gt=0.0, le=10.0, description="ridge lam of phase 2: (1/m)||Phi a - y||^2 + lam ||a||^2")


class DistillParams(ParamsModel):
    """Adam on the distilled points (distill.py)."""

    steps: int = Field(ge=1, le=100_000, description="Adam steps per distilled set")
    lr: float = Field(gt=0.0, le=10.0, description="Adam learning rate on inputs and labels")
    temperature: float = Field(gt=0.0, le=10.0, description="surrogate sigmoid(u / T) for d1{u>0}/du in matching")
    batch: int = Field(ge=1, le=100_000, description="real rows per step of phase-2 performance matching")


class SweepParams(ParamsModel):
    """The L sweep: every width of ``widths`` at a few (d, r) cells, beside the (d x r x L) product grid (the L
    exponents need L over >= 1.2 decades; the whole product over such widths may not fit the budget)."""

    cells: list[tuple[Annotated[int, Field(ge=2, le=10_000)], Annotated[int, Field(ge=1, le=100)]]] = Field(
        description="(d, r) cells swept over every width of ``widths`` (empty: no sweep)")
    widths: Sizes = Field(description="network widths L of the sweep (even)")


class GridParams(ParamsModel):
    """The scaling grid: memory-to-target per (d, r, L) cell (budget.memory_to_target): the product d x r x widths
    and the L sweep, each cell at the same seeds."""

    seeds: int = Field(ge=1, le=100, description="independent seeds per (d, r, L) cell (each one a point of the fit)")
    d: Sizes = Field(description="input dimensions d")
    r: Sizes = Field(description="intrinsic dimensions r")
    widths: Sizes = Field(description="network widths L (even: symmetric initialisation)")
    sweep: SweepParams
    m1: Sizes = Field(description="ascending phase-1 set sizes searched (points)")
    m2: Sizes = Field(description="ascending phase-2 set sizes searched (points)")


class CompareParams(ParamsModel):
    """The comparison cell, over seeds: the distilled set at equal budgets and its memory-to-target against the
    real-data baselines' (budget.py, baselines.py)."""

    d: int = Field(ge=2, le=10_000, description="input dimension of the comparison cell")
    r: int = Field(ge=1, le=100, description="intrinsic dimension of the comparison cell")
    width: int = Field(ge=2, le=100_000, description="network width L of the comparison cell")
    seeds: int = Field(ge=3, le=100, description="independent seeds (task, data, initialisation)")
    budgets: Sizes = Field(description="total distilled points M = M1 + M2, split evenly between the phases")
    headline: int = Field(ge=2, le=100_000, description="the budget M at which the first claim is judged")
    sizes: Sizes = Field(description="ascending real-subset sizes searched by the baselines (points; nested prefixes "
                         "of one permutation of the phase-1 rows)")
    ridges: list[Annotated[float, Field(gt=0.0, le=1e6)]] = Field(
        min_length=1, description="ridge lam candidates of the random-subset baseline, chosen per size by the error on "
        "the real phase-2 rows (a validation split disjoint from the subset)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    tol: float = Field(gt=0.0, le=1.0, description="the loose target: allowed excess relative test error over the "
                       "full-data network (the comparison cell's claims; reported on the grid)")
    tol_near: float = Field(gt=0.0, le=1.0, description="the near target: a second, tighter allowed excess, "
                            "max(tol_near, near_factor x e_ref) per run (reported or judging the laws, per ``laws_at``)")
    near_factor: float = Field(ge=0.0, le=10.0, description="the near target's excess scales with the reference's "
                               "own error where that is larger: excess max(tol_near, near_factor x e_ref)")
    laws_at: Literal["loose", "near"] = Field(description="which target's memory-to-target judges the scaling laws "
                                              "and the grid's preconditions (declared before the run; the other is "
                                              "reported)")
    min_compression: float = Field(ge=1.0, description="a real-data baseline must need at least this factor more "
                                   "points (memory) than the distilled set to reach the same target error")
    energy_min: float = Field(gt=0.0, le=1.0, description="'most energy in span(U)': minimum energy fraction")
    slope_tol: float = Field(ge=0.0, le=1.0, description="allowance on a law's exponent (log factors): the fitted "
                             "exponent's CI must end below the law's exponent + slope_tol")
    min_decades_L: float = Field(ge=0.0, le=10.0, description="the least range of L (decades) an L exponent is fitted "
                                 "over (checked on the design)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    compare_seeds: SamplePlan = Field(description="intervals over the comparison cell's seeds")
    grid_seeds: SamplePlan = Field(description="intervals over one grid cell's seeds")
    grid_runs: SamplePlan = Field(description="memory fits over the grid's runs (a (d, r, L) cell at one seed)")


class Params(ParamsModel):
    """Seed, data, algorithm, distillation, the two experiments, the claim thresholds and the sample-size plans."""

    seed: int = Field(ge=0, description="root of every SeedSequence (task, data, initialisation, distillation)")
    data: DataParams
    network: NetworkParams
    distill: DistillParams
    grid: GridParams
    compare: CompareParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        sweep = self.grid.sweep
        if any(w % 2 for w in [*self.grid.widths, *sweep.widths, self.compare.width]):
            raise ValueError("widths must be even (symmetric initialisation pairs neurons)")
        if max(self.grid.r) > min(self.grid.d) or self.compare.r > self.compare.d or any(r > d for d, r in sweep.cells):
            raise ValueError("r must not exceed d")
        if any(b % 2 for b in self.compare.budgets) or self.compare.headline not in self.compare.budgets:
            raise ValueError("compare.budgets must be even and contain compare.headline")
        if any(s != sorted(s) for s in (self.grid.m1, self.grid.m2, self.compare.sizes)):
            raise ValueError("grid.m1, grid.m2 and compare.sizes must be ascending")
        if max([*self.grid.m1, *self.grid.m2, *self.compare.budgets]) > min(self.data.n_phase1, self.data.n_phase2):
            raise ValueError("distilled sets start from distinct real rows: sizes must not exceed n_phase1, n_phase2")
        if max(self.compare.sizes) > self.data.n_phase1:
            raise ValueError("compare.sizes are subsets of the phase-1 rows: they must not exceed n_phase1")
        if max(self.compare.sizes) < self.compare.headline:
            raise ValueError("compare.sizes must reach the headline budget (the ladder's rungs are read there)")
        if self.claims.tol_near >= self.claims.tol:
            raise ValueError("claims.tol_near must be tighter than claims.tol")
        cells = {(d, r, L) for d in self.grid.d for r in self.grid.r for L in self.grid.widths if r <= d}
        cells |= {(d, r, L) for d, r in sweep.cells for L in sweep.widths}
        widths = [L for _, _, L in cells]
        if math.log10(max(widths) / min(widths)) < self.claims.min_decades_L - 1e-9:
            raise ValueError(f"the grid's widths span {math.log10(max(widths) / min(widths)):.3g} decades of L, below "
                             f"claims.min_decades_L = {self.claims.min_decades_L:g}")
        runs = len(cells) * self.grid.seeds
        design = {"compare_seeds": self.compare.seeds, "grid_seeds": self.grid.seeds, "grid_runs": runs}
        drift = {k: (getattr(self.plans, k).n, n) for k, n in design.items() if getattr(self.plans, k).n != n}
        if drift:
            raise ValueError(f"plans.<name>.n must be the design's count (planned, design): {drift}")
        return self
