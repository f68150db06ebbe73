"""Parameters of scp_delta (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from pydantic import Field, model_validator

from paperdag.params import ParamsModel


class CorpusParams(ParamsModel):
    """The public corpus that pretrains p0: CPython standard-library sources (paperdag.common.corpus)."""

    packages: list[str] = Field(min_length=1, description="stdlib packages (or modules) read in this order")
    max_bytes: int = Field(ge=10_000, le=20_000_000, description="cap on the corpus size in bytes")
    val_fraction: float = Field(gt=0.0, lt=0.5, description="fraction of files (by path hash) held out")


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


class CertifyParams(ParamsModel):
    """Which sequences the NAF certificates are computed on."""

    n_generic: int = Field(ge=1, le=128, description="generic prompts of each kind (stdlib text, held-out records)")
    generic_len: int = Field(ge=4, le=512, description="tokens per generic prompt")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    min_bound_ratio: float = Field(ge=1.0, description="median CP-Delta / median SCP-Delta_r bound must reach this")
    leak_fraction: float = Field(gt=0.0, le=1.0, description="q_full leaks: mean exposure >= this x log2 |space|")
    chance_bits: float = Field(gt=0.0, description="near chance: mean exposure of single-shard canaries <= this")
    max_ppl_gap: float = Field(ge=0.0, le=1.0, description="SCP-Delta_r held-out ppl <= (1 + this) x q_full's")
    max_sparse_fraction: float = Field(gt=0.0, le=1.0, description="median token fraction carrying the KL mass <=")


class Params(ParamsModel):
    """Seeds, data, models, training budgets, SCP-Delta_r's influential mass, certificates and claim thresholds."""

    seed: int = Field(ge=0, description="root of every random draw")
    n_seeds: int = Field(ge=1, le=20, description="independent draws of (records, canaries, shards, fine-tuning)")
    corpus: CorpusParams
    records: RecordParams
    model: ModelParams
    pretrain: TrainParams
    finetune: TrainParams
    keep_mass: float = Field(gt=0.0, le=1.0, description="SCP-Delta_r keeps the shift on the fewest tokens carrying "
                             "this fraction of the Jeffreys divergence J(qbar, p0) at each position")
    kl_mass: float = Field(gt=0.0, le=1.0, description="sparsity: fraction of KL(q_full || p0) to be carried")
    certify: CertifyParams
    claims: ClaimParams

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.model.d_model % self.model.n_head:
            raise ValueError("model.n_head must divide model.d_model")
        if self.certify.generic_len + 1 > self.model.context:
            raise ValueError("certify.generic_len + 1 must fit in model.context")
        if self.records.code_digits + 40 > self.model.context:
            raise ValueError("a canary line (prompt + code) must fit in model.context")
        return self
