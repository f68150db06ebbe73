"""Parameters of the NorMuon reproduction (validated from params.yaml's ``normuon:`` block)."""

from __future__ import annotations

from pydantic import Field

from paperdag.params import ParamsModel


class Params(ParamsModel):
    seed: int = Field(0, ge=0, description="base seed; run k of every optimizer uses seed + k")
    # corpus
    corpus_packages: tuple[str, ...] = Field(
        ("email", "json", "http", "logging", "urllib", "asyncio", "xml", "importlib"),
        min_length=1,
        description="standard-library packages (or modules) whose source files form the corpus, in this order",
    )
    corpus_max_bytes: int = Field(1_500_000, ge=10_000, le=50_000_000)
    val_fraction: float = Field(0.1, gt=0.0, lt=0.5, description="fraction of files (by path hash) held out")
    # model
    d_model: int = Field(128, ge=8, le=1024)
    n_layer: int = Field(2, ge=1, le=24)
    n_head: int = Field(4, ge=1, le=32)
    context: int = Field(64, ge=8, le=1024)
    # training (identical for every optimizer: same token budget steps * batch_size * context)
    batch_size: int = Field(16, ge=1, le=1024)
    steps: int = Field(400, ge=10, le=100_000)
    warmup_steps: int = Field(20, ge=1)
    final_lr_frac: float = Field(0.1, ge=0.0, le=1.0)
    eval_every: int = Field(20, ge=1)
    eval_batches: int = Field(4, ge=1, le=256)
    n_seeds: int = Field(3, ge=2, le=16)
    # optimizers
    adamw_lrs: tuple[float, ...] = Field((3e-4, 1e-3, 3e-3, 1e-2), min_length=1, description="AdamW peak-lr sweep")
    adamw_weight_decay: float = Field(0.1, ge=0.0, le=1.0)
    muon_lr: float = Field(0.02, gt=0.0, le=1.0, description="peak lr of Muon and NorMuon (hidden matrices)")
    muon_aux_lr: float = Field(3e-3, gt=0.0, le=1.0, description="AdamW lr for embeddings/head/norms in Muon runs")
    muon_weight_decay: float = Field(0.0, ge=0.0, le=1.0)
    normuon_beta2: float = Field(0.95, ge=0.0, lt=1.0)
    # evaluation
    bench_steps: int = Field(20, ge=2, le=1000, description="timed optimizer steps per optimizer in evaluate")
