"""Parameters of diffusearch (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

CGrid = Annotated[list[Annotated[float, Field(gt=0.0)]], Field(min_length=2)]
SimGrid = Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=2)]


class DataParams(ParamsModel):
    """The procedural straight-line programs (task.py)."""

    n_statements: int = Field(ge=2, le=8, description="statements K per program (K + 1 slots with the answer)")
    p_var: float = Field(ge=0.0, le=1.0, description="probability that a left operand is an earlier variable")
    shuffle_prob: float = Field(ge=0.0, le=1.0, description="probability that the listing is randomly permuted")
    n_train: int = Field(ge=10, le=1_000_000, description="training programs")
    n_test: int = Field(ge=4, le=100_000, description="held-out programs (distinct from every training program)")


class ModelParams(ParamsModel):
    """The shared transformer shape, identical for the MDM and the AR model."""

    n_layer: int = Field(ge=1, le=12, description="transformer blocks")
    n_head: int = Field(ge=1, le=16, description="attention heads")
    d_model: int = Field(ge=8, le=1024, description="residual width (a multiple of n_head)")


class TrainParams(ParamsModel):
    """The training budget, the same for both models and every seed."""

    seeds: int = Field(ge=1, le=10, description="independently trained (MDM, AR) pairs (seed, seed + 1, ...)")
    steps: int = Field(ge=1, description="AdamW steps")
    batch_size: int = Field(ge=1, description="programs per step")
    lr: float = Field(gt=0.0, le=0.1, description="peak learning rate")
    warmup: int = Field(ge=1, description="linear warm-up steps")
    log_every: int = Field(ge=1, description="training-loss logging interval (steps)")


class SearchParams(ParamsModel):
    """DiffuSearch (mcts.py): the main setting and the (c, n_sim) grid; batching of model calls."""

    c_puct: float = Field(gt=0.0, le=100.0, description="exploration constant of the main comparison")
    n_sim: int = Field(ge=1, le=1000, description="simulations per commit in the main comparison")
    c_grid: CGrid = Field(description="exploration constants of the grid (ascending)")
    sim_grid: SimGrid = Field(description="simulations per commit of the grid (ascending)")
    tie_break: Literal["prior", "index"] = Field(description="PUCT ties (every score ties at a fresh node, where "
                                                  "sqrt(N) = 0): to the larger prior, or to the leftmost slot")
    q_init: Literal["zero", "parent"] = Field(description="Q of an unvisited edge: 0, or the node's mean value "
                                              "(first-play urgency; rewards lie in (0, 1], so 0 is pessimistic)")
    reward_norm: Literal["none", "minmax"] = Field(description="Q as is, or min-max normalised by the rewards seen "
                                                   "in the task's tree (MuZero)")
    chunk: int = Field(ge=1, description="rows per batched forward pass")
    block: int = Field(ge=1, description="tasks decoded together")

    @model_validator(mode="after")
    def _grid(self) -> SearchParams:
        if sorted(self.c_grid) != self.c_grid or sorted(self.sim_grid) != self.sim_grid:
            raise ValueError("c_grid and sim_grid must be ascending")
        if self.c_puct not in self.c_grid or self.n_sim not in self.sim_grid:
            raise ValueError("the main (c_puct, n_sim) must be a grid point")
        return self


class StudyParams(ParamsModel):
    """The order study (study.py, stage ``orders``): its own held-out programs, drawn apart from training."""

    n_test: int = Field(ge=10, le=100_000, description="fresh held-out programs of the order study (every slot order, "
                        "forward one-hop and filled-minus-masked gain per program and seed)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    headroom: float = Field(ge=0.0, le=1.0, description="the oracle (dependency) order must beat the best fixed "
                            "slot order (the search ladder's strongest rung) by more than this accuracy for order "
                            "search to be judged: 0.10 (issue 45), above the paper's +8.0 pp average gain of search "
                            "over plan-and-infill")
    mechanism_gain: float = Field(ge=0.0, le=1.0, description="on out-of-order programs a value slot's accuracy "
                                  "with its operand slots filled (true values) must exceed its accuracy with them "
                                  "masked by more than this, for every seed, before order headroom or search is "
                                  "judged: below it the MDM does not read infilled values and no order can act")
    par_tol: float = Field(ge=0.0, le=1.0, description="'on par': MCTS accuracy may trail AR's by at most this")
    mostly: float = Field(ge=0.5, le=1.0, description="'mostly sequential': share of sequential commits at least")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run; every interval
    is taken at its plan's level."""

    seeds: SamplePlan = Field(description="intervals over training seeds (one trained (MDM, AR) pair each)")
    programs: SamplePlan = Field(description="per-seed intervals over the order study's held-out programs")
    out_of_order: SamplePlan = Field(description="per-seed intervals over the order study's out-of-order programs")


class Params(ParamsModel):
    """Seed, data, models, training, search, claim thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    data: DataParams
    model: ModelParams
    train: TrainParams
    search: SearchParams
    study: StudyParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.model.d_model % self.model.n_head:
            raise ValueError("model.d_model must be a multiple of model.n_head")
        if self.plans.programs.n != self.study.n_test:
            raise ValueError("plans.programs.n must be study.n_test (every study program is one unit)")
        if self.plans.seeds.n != self.train.seeds:
            raise ValueError("plans.seeds.n must be train.seeds (every trained pair is one unit of the plan)")
        return self
