"""Parameters of sketchrefine (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Prob = Annotated[float, Field(ge=0.0, le=1.0)]


class TheoremParams(ParamsModel):
    """The procedural benchmark (theorems.py)."""

    lemma_counts: list[Annotated[int, Field(ge=1, le=12)]] = Field(
        min_length=1, description="difficulty levels: numbers of hidden intermediate lemmas")
    per_level: int = Field(ge=1, le=200, description="theorems per difficulty level")
    n_inputs: int = Field(ge=1, le=5, description="input variables x_j per theorem")
    input_bound: int = Field(ge=1, le=10, description="every input lies in [-input_bound, input_bound]")
    const_bound: int = Field(ge=0, le=100, description="constants c_i are drawn from [-const_bound, const_bound]")
    p_operand_input: Prob = Field(description="probability that a definition's second operand is an input")
    max_draws: int = Field(ge=1, description="cap on draws per level when rejecting theorems")


class RateParams(ParamsModel):
    """The proposer's error model (proposer.py)."""

    p_wrong: Prob = Field(description="probability that an emitted lemma has a wrong (tightened) constant")
    p_skip: Prob = Field(description="probability that a lemma is skipped (too-coarse steps)")
    p_spurious: Prob = Field(description="probability that a sketch carries one unused, tightened lemma")
    p_skip_after_coarse: Prob = Field(description="skip probability below a step the checker flagged too coarse "
                                                  "(<= p_skip: feedback never makes a skip more likely)")
    tighten: list[Annotated[float, Field(gt=0.0, le=1.0)]] = Field(
        min_length=1, description="fractions of a box's width by which a wrong constant tightens one side")

    @model_validator(mode="after")
    def _feedback_helps(self) -> RateParams:
        if self.p_skip_after_coarse > self.p_skip:
            raise ValueError("p_skip_after_coarse must not exceed p_skip (repair no worse than a fresh draw)")
        return self


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    budget: int = Field(ge=1, description="B: the equal budget per theorem in total tokens (emitted + read) at which "
                                          "saturation and competence are checked and up to which the total-token "
                                          "area under pass-vs-budget is taken (<= max_budget, so every run solved "
                                          "within B is seen)")
    emitted_budget: int = Field(ge=1, description="E: the same in emitted tokens (the paper's unit): pass rates, "
                                                  "saturation and competence at E, the emitted-token area up to E "
                                                  "(<= max_budget: a run at E is the prefix of the run at the cap)")
    pass_tol: float = Field(ge=0.0, le=1.0, description="'comparable' pass rate: the 95% CI of the difference "
                                                        "stays above -pass_tol")
    min_reuse: Prob = Field(description="share of proved subgoals SketchRefine must keep across edits")


class GridParams(ParamsModel):
    """The error-rate grid (one rate at a time): each of p_wrong, p_skip, p_spurious scaled by ``low`` and by ``high``
    with the others at their default; every claim is re-judged at each point (grid.py, evaluate.py)."""

    low: float = Field(gt=0.0, lt=1.0, description="the lower factor of a rate (x low)")
    high: float = Field(gt=1.0, le=4.0, description="the higher factor of a rate (x high; a rate is capped at 1)")
    per_level: int = Field(ge=1, le=200, description="theorems per level at a grid point: the first per_level of "
                                                     "each level of the benchmark")
    seeds: int = Field(ge=2, le=50, description="proposer seeds per theorem at a grid point (0 .. seeds - 1: the "
                                                "default's streams, so the x1 point is the default's subset)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="every interval over proposer seeds (pass rates, areas, tokens, reuse)")
    runs: SamplePlan = Field(description="the share of runs (theorem x proposer seed) whose first sketch fails")
    grid: SamplePlan = Field(description="every interval over proposer seeds at an error-rate grid point")


class Params(ParamsModel):
    """Seed, benchmark, checker budget, proposer, search budget, claim thresholds, error grid and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    theorems: TheoremParams
    rlimit: int = Field(ge=100, le=10_000_000, description="z3 resource limit per proof step (deterministic)")
    rates: RateParams
    seeds: int = Field(ge=1, le=50, description="proposer seeds per theorem and method")
    max_budget: int = Field(ge=1, description="the searches' cap: emitted tokens per theorem of every search run")
    claims: ClaimParams
    grid: GridParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.claims.budget > self.max_budget:
            raise ValueError("claims.budget must not exceed max_budget (total >= emitted tokens: runs solved within "
                             "a total budget <= the emitted cap are all seen)")
        if self.claims.emitted_budget > self.max_budget:
            raise ValueError("claims.emitted_budget must not exceed max_budget (the searches' cap)")
        if self.grid.per_level > self.theorems.per_level or self.grid.seeds > self.seeds:
            raise ValueError("the grid uses a subset of the benchmark and of the proposer seeds")
        if self.plans.grid.n != self.grid.seeds:
            raise ValueError("plans.grid.n must be grid.seeds (every proposer seed is one unit)")
        if self.plans.seeds.n != self.seeds:
            raise ValueError("plans.seeds.n must be seeds (every proposer seed is one unit)")
        if self.plans.runs.n != len(self.theorems.lemma_counts) * self.theorems.per_level * self.seeds:
            raise ValueError("plans.runs.n must be the runs: len(lemma_counts) x per_level theorems x seeds")
        return self
