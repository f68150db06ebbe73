"""Parameters of powerflow (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Weight = Annotated[float, Field(gt=0.0, lt=1.0)]


class TaskParams(ParamsModel):
    """The enumerable task and the base model's pretraining distribution D (task.py)."""

    modulus: int = Field(ge=2, le=7, description="K: prompts (a, b) in Z_K^2, answer (a + b) mod K")
    max_len: int = Field(ge=3, le=5, description="L: most content tokens of a response (then EOS)")
    mix: list[Weight] = Field(min_length=3, max_length=3, description="mean mixture weights of D: (chain, guess, noise)")
    concentration: float = Field(gt=0.0, le=1000.0, description="Dirichlet concentration of the per-prompt weights")
    guess_bias: float = Field(ge=0.0, le=1.0, description="beta: P(a short guess is the off-by-one answer c + 1)")
    n_train: int = Field(ge=100, le=1_000_000, description="(q, y) pairs drawn from D to pretrain the base model")

    @model_validator(mode="after")
    def _mix(self) -> TaskParams:
        if abs(sum(self.mix) - 1.0) > 1e-9:
            raise ValueError("task.mix must sum to 1")
        return self


class ModelParams(ParamsModel):
    """The shared tiny GPT (paperdag.common.transformer) used as base model and policy."""

    d_model: int = Field(ge=8, le=512, description="width")
    n_layer: int = Field(ge=1, le=8, description="transformer blocks")
    n_head: int = Field(ge=1, le=16, description="attention heads (must divide d_model)")

    @model_validator(mode="after")
    def _heads(self) -> ModelParams:
        if self.d_model % self.n_head:
            raise ValueError("model.n_head must divide model.d_model")
        return self


class PretrainParams(ParamsModel):
    """Maximum-likelihood pretraining of the base model on D."""

    steps: int = Field(ge=1, le=100_000, description="Adam steps")
    batch: int = Field(ge=1, le=65_536, description="(q, y) pairs per step")
    lr: float = Field(gt=0.0, le=0.1, description="Adam learning rate")


class FinetuneParams(ParamsModel):
    """On-policy fine-tuning, identical for every method (loops.finetune)."""

    steps: int = Field(ge=1, le=100_000, description="updates per run")
    group: int = Field(ge=2, le=256, description="G: on-policy samples per prompt per update (all prompts each update)")
    lr: float = Field(gt=0.0, le=0.1, description="Adam learning rate of the policy (decayed linearly to 0)")
    lr_log_z: float = Field(gt=0.0, le=10.0, description="Adam learning rate of the learned log Z(q) (TB only; "
                            "decayed linearly to 0)")
    clip: float = Field(gt=0.0, le=1000.0, description="gradient-norm clip of the policy")
    seeds: int = Field(ge=2, le=20, description="independent runs (sampling seeds) per method")
    eval_every: int = Field(ge=1, le=100_000, description="updates between exact evaluations of the training curve")
    intuitor_kl: float = Field(ge=0.0, le=1.0, description="beta: Intuitor's KL penalty to the reference (base) "
                               "policy, the published recipe's value (self_certainty only; objectives.intuitor_loss)")


class PowerParams(ParamsModel):
    """Statistical power of the RLIF and GRPO comparisons: PowerFlow, each RLIF baseline and GRPO run on more seeds
    (stages ``replicate_<method>`` add the seeds finetune.seeds .. seeds - 1 to ``finetune_<method>``'s), and
    flatten_aligned flattens that many GRPO-aligned models."""

    seeds: int = Field(ge=3, le=50, description="paired seeds of PowerFlow (alpha > 1), each RLIF baseline and GRPO")


class AlphaParams(ParamsModel):
    """Powers of the targets p_base^alpha."""

    sharpen: float = Field(gt=1.0, le=20.0, description="alpha > 1 (sharpening, reasoning)")
    flatten: float = Field(gt=0.0, lt=1.0, description="alpha < 1 (flattening, diversity)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    kl_tol: float = Field(gt=0.0, le=1.0, description="a TB run matches its target when its exact KL(pi||target) "
                          "lies below this (interval over seeds of the worst variant); the base must be farther")
    grpo_gap: float = Field(ge=0.0, le=1.0, description="'approaching GRPO': accuracy at most this far below GRPO's "
                            "(non-inferiority margin of the paired difference)")
    flat_acc_tol: float = Field(gt=0.0, le=1.0, description="'flattening keeps quality': non-inferiority margin of "
                                "the flattened aligned model's accuracy against the aligned model's (paired by seed)")
    length_tol: float = Field(gt=0.0, le=1.0, description="'length near the base model': equivalence margin of the "
                              "relative length change")
    confidence: float = Field(gt=0.5, lt=1.0, description="level of the Student-t intervals of the methods table "
                              "(methods.parquet); the claims are judged at their plan's level")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="intervals over the finetune.seeds seeds of a method without replicate "
                              "seeds (the TB variants but PowerFlow at alpha > 1, the lengths variant)")
    paired: SamplePlan = Field(description="intervals over the power.seeds paired seeds (PowerFlow at alpha > 1, the "
                               "RLIF baselines, GRPO and the flattened aligned models)")


class DiverseParams(ParamsModel):
    """The ``diverse`` task variant (diverse.py): several correct responses per prompt, most wrong mass on one
    confident guess; its own prepare / base model / fine-tuning stages (model, pretrain, finetune and alpha.flatten
    shared with the chain runs)."""

    seed: int = Field(ge=0, description="root of the variant's random draws (its prompts' weights and pretraining "
                      "pairs, its base model's initialisation and batch order, its runs' sampling), in place of seed")
    modulus: int = Field(ge=2, le=5, description="K of the variant (prompts (a, b) in Z_K^2)")
    max_len: int = Field(ge=3, le=4, description="L of the variant (the longest correct trace has 3 tokens)")
    mix: list[Weight] = Field(min_length=3, max_length=3, description="mean mixture weights of D_div: (chain over "
                              "the correct traces, guess, noise)")
    concentration: float = Field(gt=0.0, le=1000.0, description="Dirichlet concentration of the per-prompt weights")
    guess_bias: float = Field(ge=0.0, le=1.0, description="beta: P(a short guess is the off-by-one answer c + 1)")
    n_train: int = Field(ge=100, le=1_000_000, description="(q, y) pairs drawn from D_div to pretrain its base")
    collapse_frac: float = Field(gt=0.0, lt=1.0, description="'GRPO collapses': its diversity among correct "
                                 "responses (t interval over seeds) lies below this fraction of the base model's")

    @model_validator(mode="after")
    def _mix(self) -> DiverseParams:
        if abs(sum(self.mix) - 1.0) > 1e-9:
            raise ValueError("diverse.mix must sum to 1")
        return self


class Params(ParamsModel):
    """Seed, task, model, pretraining, fine-tuning, the RLIF comparison's seeds, powers, claim thresholds,
    sample-size plans and the diverse variant."""

    seed: int = Field(ge=0, description="root of every random draw")
    task: TaskParams
    model: ModelParams
    pretrain: PretrainParams
    finetune: FinetuneParams
    power: PowerParams
    alpha: AlphaParams
    claims: ClaimParams
    plans: Plans
    diverse: DiverseParams

    @model_validator(mode="after")
    def _power(self) -> Params:
        if self.plans.seeds.n != self.finetune.seeds or self.plans.paired.n != self.power.seeds:
            raise ValueError("plans.seeds.n must be finetune.seeds and plans.paired.n power.seeds (each judged "
                             "interval has the units its plan declares)")
        if self.power.seeds <= self.finetune.seeds:
            raise ValueError("power.seeds must exceed finetune.seeds (replicate_<method> adds the seeds in between)")
        return self
