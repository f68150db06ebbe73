"""Parameters of the influence-function vs Newton-step study (the ``influence_newton`` block of params.yaml).

No defaults: params.yaml is the one source of values.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Sizes = Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=2)]


class ClaimParams(ParamsModel):
    """Tolerances of the claims (claims.py): set in params.yaml, never tuned to make a claim pass."""

    slope_tol: float = Field(gt=0.0, le=1.0, description=(
        "trend tolerance: a fitted exponent's 95% CI must lie inside the paper's exponent +- slope_tol; the paper's "
        "rates hold up to polylog factors, whose local log-log slope is ~1/ln n = 0.11-0.14 at n = 1000-8000"))
    track_tol: float = Field(gt=0.0, le=1.0, description=(
        "trend tolerance of 'tracks the actual change': a predicted-on-actual slope's 95% CI must lie inside "
        "1 +- track_tol (a stated 10% relative bias)"))


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    subsets: SamplePlan = Field(description="per-cell comparisons paired over the cell's removal subsets")
    cells: SamplePlan = Field(description="scaling fits over the random cells of the (n, d, k) grid")
    groups: SamplePlan = Field(description="group-effect slopes over the removal groups of one kind at (group_n, "
                               "group_d)")


class Params(ParamsModel):
    """Grids, data model, solver tolerances, certificate thresholds, claim tolerances and sample-size plans."""

    seed: int = Field(ge=0, description="root of every SeedSequence used to draw data and subsets")
    n_grid: Sizes = Field(description="training set sizes n (nested prefixes of one draw per d)")
    d_grid: Sizes = Field(description="feature dimensions d")
    k_grid: Sizes = Field(description="numbers k of removed points")
    n_subsets: int = Field(ge=3, description="random subsets per (n, d, k) cell, and coherent groups per k")
    theta_norm: float = Field(ge=1.0, le=2.0, description="||theta*|| of the logistic model")
    n_test: int = Field(ge=10, description="test points per d, for the group-effect test loss")
    group_n: int = Field(ge=1, description="n of the group-effect experiment (one of n_grid)")
    group_d: int = Field(ge=1, description="d of the group-effect experiment (one of d_grid)")
    ridge: float = Field(ge=0.0, description="ridge added to the summed loss: L + ridge/2 ||theta||^2")
    newton_tol: float = Field(gt=0.0, description="gradient-norm target of every Newton solve (full and leave-T-out)")
    newton_max_iter: int = Field(ge=1, le=200, description="iteration cap of every damped Newton solve")
    cert_grad_tol: float = Field(gt=0.0, description="certificate: ||grad L(theta_hat)|| must not exceed this")
    cert_min_eig: float = Field(gt=0.0, description="certificate: lambda_min(H_-T) / (n - k) must exceed this")
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.group_n not in self.n_grid or self.group_d not in self.d_grid:
            raise ValueError(f"(group_n, group_d) = ({self.group_n}, {self.group_d}) must lie on the (n, d) grid")
        if 3 * max(self.k_grid) > min(self.n_grid):
            raise ValueError("largest k must be at most a third of the smallest n")
        if 10 * max(self.d_grid) > min(self.n_grid):
            raise ValueError("smallest n must be at least 10 x the largest d (so the logistic MLE exists)")
        if self.n_subsets > min(self.n_grid):
            raise ValueError("n_subsets must not exceed the smallest n (coherent groups use distinct anchors)")
        planned = {"subsets": self.n_subsets, "cells": len(self.n_grid) * len(self.d_grid) * len(self.k_grid),
                   "groups": len(self.k_grid) * self.n_subsets}
        drift = {name: (getattr(self.plans, name).n, n) for name, n in planned.items()
                 if getattr(self.plans, name).n != n}
        if drift:
            raise ValueError(f"plans.<name>.n must be the design's size (planned, design): {drift}")
        return self
