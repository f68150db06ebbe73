"""Parameters of hamn (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Ints = list[Annotated[int, Field(ge=0, le=10_000)]]


class TreeParams(ParamsModel):
    """The synthetic hierarchies: every (branching, depth) pair is one balanced tree."""

    branchings: Annotated[list[Annotated[int, Field(ge=2, le=4)]], Field(min_length=1)] = Field(
        description="branching factors b of the balanced trees")
    depths: Annotated[list[Annotated[int, Field(ge=2, le=7)]], Field(min_length=2)] = Field(
        description="depths D of the balanced trees (must include 2, the calibration depth)")


class EmbeddingParams(ParamsModel):
    """Poincare vs Euclidean embeddings of each tree: one loss (Nickel & Kiela), one optimiser, one budget."""

    dim: int = Field(ge=2, le=64, description="embedding dimension, the same in both geometries")
    curvature: float = Field(gt=0.0, le=10.0, description="c of the Poincare ball (curvature -c), also HAMN's")
    epochs: int = Field(ge=1, le=20_000, description="full-batch Riemannian Adam steps (burn-in included)")
    burn_in: int = Field(ge=0, le=1000, description="first epochs at lr / 10 (Nickel & Kiela's burn-in)")
    lr: float = Field(gt=0.0, le=10.0, description="Riemannian Adam learning rate")
    negatives: int = Field(ge=1, le=1000, description="negatives per closure edge, redrawn each epoch")
    init: float = Field(gt=0.0, le=0.1, description="initial coordinates uniform in [-init, init]")


class RetrievalParams(ParamsModel):
    """Queries (noisy leaf points, noise.py), the finite-temperature beta rule and the depth-2 noise calibration."""

    queries_per_cell: int = Field(ge=10, le=1_000_000, description="noisy leaf queries per evaluation cell at the "
                                  "calibrated rho (at least one per leaf; leaves cycled so each is queried equally "
                                  "often)")
    tolerance_levels: Annotated[list[Annotated[float, Field(gt=0.0, le=100.0)]], Field(min_length=2)] = Field(
        description="rho multipliers (besides 1) of the extra queries whose psychometric curve gives each cell's "
                    "noise tolerance rho_50 (analysis.tolerance)")
    tolerance_queries: int = Field(ge=1, le=100_000, description="noisy leaf queries per cell at each tolerance level")
    calibration_queries: int = Field(ge=10, le=100_000, description="noisy leaf queries of each calibration tree")
    target_accuracy: float = Field(gt=0.0, lt=1.0, description="leaf accuracy every model is calibrated to at D=2")
    hamn_noise: Literal["tangent", "wrapped"] = Field(description=(
        "HAMN's query noise (noise.py): Gaussian in the space before its map exp_0 (tangent), or a wrapped normal "
        "at the stored point (wrapped)"))
    rho_max: float = Field(gt=0.0, le=100.0, description="upper end of the bisection on the noise ratio rho")
    bisections: int = Field(ge=1, le=40, description="bisection steps of the noise calibration")
    clean_target: float = Field(gt=0.5, le=1.0, description="noise-free accuracy the beta rule asks of the smallest "
                                "beta, pooled over the calibration seeds of each (b, D) (queries.calibrate_beta)")
    noisy_rel_gap: float = Field(gt=0.0, lt=1.0, description=(
        "the beta rule's competence on noisy queries, relative: the smallest beta (at or above the noise-free "
        "rule's) whose pooled accuracy above chance on noisy calibration queries at the calibrated rho keeps at least "
        "1 - noisy_rel_gap of its stronger decoder's accuracy above chance on the same queries "
        "(queries.calibrate_beta_noisy)"))
    noisy_confidence: float = Field(ge=0.5, lt=1.0, description=(
        "one-sided confidence of the noisy beta rule: a beta qualifies when the lower bound of the per-query "
        "differences at this level is >= 0 (0.5: the pooled point rule) (queries.calibrate_beta_noisy)"))
    noisy_bisections: int = Field(ge=1, le=40, description="bisection steps of the noisy beta rule on log beta")
    beta_min: float = Field(gt=0.0, le=1e3, description="lower end of the bisection on log beta")
    beta_max: float = Field(gt=0.0, le=1e12, description="upper end of the bisection on log beta")
    beta_bisections: int = Field(ge=1, le=40, description="bisection steps of the beta rule")
    beta_queries: int = Field(ge=4, le=100_000, description="most stored leaves the noise-free beta rule queries "
                              "per calibration cell (evenly spaced; all of them in smaller trees), and the noisy "
                              "queries per calibration cell of the noisy rule")
    chunk: int = Field(ge=16, le=1_000_000, description="queries retrieved per batch (memory bound only)")


class MHNParams(ParamsModel):
    """The Euclidean memories (modern_hopfield.py: Ramsauer's MHN on the embedding scaled to unit RMS norm, on
    L2-normalised patterns, and the distance softmax): one step count for all three (beta: the rule)."""

    steps: int = Field(ge=1, le=100, description="CCCP updates xi <- M^T softmax(beta M xi)")


class HAMNParams(ParamsModel):
    """HAMN on the Poincare ball (hyperbolic_memory.py); beta: the rule (queries.calibrate_beta)."""

    reg: float = Field(ge=0.0, le=1.0, description="lam, weight of the regulariser cosh(sqrt c d(0, xi)) - 1")
    steps: int = Field(ge=1, le=500, description="most Riemannian gradient steps (fewer once every state is still)")
    step_size: float = Field(gt=0.0, le=10.0, description="initial step in units of 1 / local curvature")
    armijo: float = Field(gt=0.0, lt=1.0, description="sufficient-decrease constant of the backtracking")
    backtracks: int = Field(ge=1, le=60, description="halvings tried before a query stays put for a step")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    shallow_tol: float = Field(ge=0.0, le=1.0, description="|HAMN - MHN| leaf accuracy allowed at D=2 (shallow)")
    min_map_gain: float = Field(ge=0.0, le=1.0,
                                description="least (MAP - untrained MAP) / (tree-metric MAP - untrained MAP)")
    min_clean_accuracy: float = Field(gt=0.0, le=1.0, description=(
        "least noise-free retrieval accuracy (mean over evaluation seeds) of a memory's own stored leaves in every "
        "(b, D) a claim uses: a memory must return a stored pattern from the pattern itself before its noisy "
        "retrieval is compared"))
    min_dynamics_share: float = Field(ge=0.0, lt=1.0, description=(
        "least share of noisy queries (at the calibrated rho) a memory's dynamics must decode to another leaf than "
        "its nearest-neighbour decoder before a claim reads them as the memory's (95% CI over cells above it)"))


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="per-(b, D) intervals over evaluation seeds (slopes, advantages, MAP gaps, "
                              "embedding gains)")
    cells: SamplePlan = Field(description="intervals over every evaluation cell (b, D, seed): each memory against its "
                              "nearest-neighbour decoder")
    error_cells: SamplePlan = Field(description="intervals over the evaluation cells with D >= 3 (error distances; "
                                    "a cell where a memory made no error drops out)")
    slopes: SamplePlan = Field(description="the tolerance-slope claims over evaluation seeds (per b and baseline), "
                               "sized from the pilot's spread of one seed's slope (pilot.py)")
    deepest: SamplePlan = Field(description="the deepest-depth advantage claims over evaluation seeds (per b and "
                                "baseline), sized from the pilot's spread of one seed's advantage")
    transfer: SamplePlan = Field(description="the calibration-transfer checks over evaluation seeds (per b and "
                                 "memory), sized from the pilot's spread of one seed's D = 2 accuracy")
    pilot_seeds: Annotated[Ints, Field(min_length=1)] = Field(
        description="the calibration seeds the plans' pilot spreads (pilot_sd) were measured on: a run on other "
        "calibration seeds (a replicate) checks instead that each power plan is large enough for its own pilot")


class Params(ParamsModel):
    """Seeds, trees, embeddings, queries, the two memories, the claim thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw (SeedSequence([seed, b, D, embedding seed]))")
    seeds: Annotated[Ints, Field(min_length=1)] = Field(description="embedding/noise seeds of the evaluation")
    calibration_seeds: Annotated[Ints, Field(min_length=1)] = Field(
        description="embedding/noise seeds of the depth-2 calibration (held out; accuracy pooled over them)")
    trees: TreeParams
    embedding: EmbeddingParams
    retrieval: RetrievalParams
    mhn: MHNParams
    hamn: HAMNParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if 2 not in self.trees.depths:
            raise ValueError("trees.depths must include 2: the noise is calibrated at depth 2")
        if self.retrieval.beta_min >= self.retrieval.beta_max:
            raise ValueError("retrieval.beta_min must lie below retrieval.beta_max")
        if set(self.calibration_seeds) & set(self.seeds):
            raise ValueError("calibration_seeds must differ from the evaluation seeds (held out)")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError("seeds must be distinct")
        grid = len(self.trees.branchings) * len(self.seeds)
        sizes = {"seeds": len(self.seeds), "slopes": len(self.seeds), "deepest": len(self.seeds),
                 "transfer": len(self.seeds), "cells": grid * len(self.trees.depths),
                 "error_cells": grid * sum(d > 2 for d in self.trees.depths)}
        for name, n in sizes.items():
            if getattr(self.plans, name).n != n:
                raise ValueError(f"plans.{name}.n must be {n}, the design's {name.replace('_', ' ')} (one unit each)")
        return self
