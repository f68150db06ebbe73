"""Parameters of scp_delta (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel


class PublicParams(ParamsModel):
    """The public corpus that pretrains p0: records and canary-format lines of the private templates, with names
    and codes disjoint from every private one (records.draw_public_set)."""

    n_lines: int = Field(ge=100, le=1_000_000, description="public lines (records and canary-format lines)")
    code_fraction: float = Field(ge=0.0, le=1.0, description="fraction of public lines in the canary format "
                                 "(a public name and a fresh code): p0 learns the canary format with codes uniform")
    val_fraction: float = Field(gt=0.0, lt=0.5, description="fraction of public lines held out (p0's perplexity)")


class RecordParams(ParamsModel):
    """The private fine-tuning set: templated records plus secret canaries, split into two disjoint shards."""

    n_records: int = Field(ge=10, le=100_000, description="templated records per shard")
    n_canaries: int = Field(ge=1, le=1000, description="canaries that live in one shard only, per shard")
    n_duplicated: int = Field(ge=1, le=1000, description="canaries copied into both shards (the NAF failure mode)")
    canary_reps: int = Field(ge=1, le=100, description="copies of each canary line inside a shard")
    code_digits: int = Field(ge=2, le=6, description="digits of a secret code; the canary space has 10^digits codes")
    n_heldout: int = Field(ge=10, le=100_000, description="fresh held-out records (utility), none in any shard")


class ModelParams(ParamsModel):
    """The shared tiny transformer (paperdag.common.transformer), byte vocabulary of 256."""

    d_model: int = Field(ge=8, le=1024, description="width")
    n_layer: int = Field(ge=1, le=12, description="blocks")
    n_head: int = Field(ge=1, le=16, description="attention heads (divides d_model)")
    context: int = Field(ge=16, le=512, description="context length in bytes")


class TrainParams(ParamsModel):
    """One AdamW training run: linear decay of the learning rate from ``lr`` to 0.1 lr over ``steps``."""

    steps: int = Field(ge=1, le=100_000, description="optimizer steps")
    batch_size: int = Field(ge=1, le=1024, description="random windows per step")
    lr: float = Field(gt=0.0, le=0.1, description="peak AdamW learning rate")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    min_bound_ratio: float = Field(ge=1.0, description="'orders of magnitude' tighter: CP-Delta's certificate (or "
                                   "its excess over the minimax bound) over SCP-Delta_r's must reach this")
    leak_fraction: float = Field(gt=0.0, le=1.0, description="q_full leaks: mean exposure >= this x log2 |space|")
    chance_bits: float = Field(gt=0.0, description="near chance: mean exposure of single-shard canaries <= this")
    max_ppl_gap: float = Field(ge=0.0, le=1.0, description="competence: a fine-tuned model's held-out perplexity "
                               "<= (1 + this) x that of the strongest rung of the fine-tuning ladder")
    min_headroom: float = Field(gt=0.0, le=10.0, description="utility headroom: q_full's held-out perplexity is "
                                "below the strongest trivial rung's (p0, or a count model of q_full's bytes if "
                                "stronger) by more than this relative gap: ppl_rung / ppl_q_full - 1 > this (per seed)")
    min_recovered_share: float = Field(gt=0.0, le=1.0, description="utility close to q_full: SCP-Delta_r recovers "
                                       "at least this share of the NLL gap p0 - q_full (per seed, in nats)")
    min_effect_share: float = Field(gt=0.0, le=1.0, description="the smallest utility difference that counts, as a "
                                    "share of the NLL gap p0 - q_full: SCP-Delta_r beats CP-Delta by more, and a "
                                    "sparse shift preserves the full shift's utility while it loses less")
    max_sparse_fraction: float = Field(gt=0.0, le=1.0, description="'a small subset of tokens': the smallest kept "
                                       "fraction |S| / V whose perplexity is within the min_effect_share margin of "
                                       "the full shift's must be below this")
    base_ppl_factor: float = Field(ge=1.0, description="p0 in domain: its perplexity on held-out public records <= "
                                   "this x q_full's on held-out private records (one template distribution: both pay "
                                   "the same for fresh names, so an in-domain p0 differs by little)")
    cert_slack_nats: float = Field(gt=0.0, description="CP-Delta leaves headroom above the minimax bound when it "
                                   "exceeds it by more than this (nats; log 2: a factor 2 on a code's probability)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="every interval over seeds (one draw of records, canaries and shards and "
                              "one fine-tuning of q1, q2, q_full per seed)")


class Params(ParamsModel):
    """Seeds, data, models, training budgets, SCP-Delta_r's influential mass and its sweep, the trivial rungs, claim
    thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    n_seeds: int = Field(ge=1, le=20, description="independent draws of (records, canaries, shards, fine-tuning)")
    public: PublicParams
    records: RecordParams
    model: ModelParams
    pretrain: TrainParams
    finetune: TrainParams
    q_full_steps: int = Field(ge=1, le=100_000, description="q_full's fine-tuning steps (finetune's batch and lr): "
                              "its stream is both shards, so twice finetune.steps gives each canary line the passes "
                              "it gets in its shard model")
    keep_mass: float = Field(gt=0.0, le=1.0, description="SCP-Delta_r keeps the shift on the fewest tokens carrying "
                             "this fraction of the Jeffreys divergence J(qbar, p0) at each position")
    sparsity_grid: list[float] = Field(min_length=2, max_length=16, description="keep_mass values of the sparsity "
                                       "sweep, ascending, from 0 (no token kept: p0) to 1 (the full shift: CP-Delta)")
    ngram_orders: list[Annotated[int, Field(ge=1, le=8)]] = Field(
        min_length=2, max_length=7, description="orders of the Kneser-Ney n-gram rungs (ladder.py), ascending; the "
        "order is chosen on held-out public records")
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.model.d_model % self.model.n_head:
            raise ValueError("model.n_head must divide model.d_model")
        grid = self.sparsity_grid
        if grid != sorted(set(grid)) or grid[0] != 0.0 or grid[-1] != 1.0:
            raise ValueError("sparsity_grid must rise strictly from 0.0 (p0) to 1.0 (the full shift)")
        if self.records.code_digits + 40 > self.model.context:
            raise ValueError("a canary line (prompt + code) must fit in model.context")
        if self.ngram_orders != sorted(set(self.ngram_orders)) or 4 not in self.ngram_orders:
            raise ValueError("ngram_orders must rise strictly and hold 4 (utility_headroom's count 4-gram rung)")
        if self.plans.seeds.n != self.n_seeds:
            raise ValueError("plans.seeds.n must be n_seeds (every seed is one unit of every judged interval)")
        return self
