"""Parameters of the NorMuon reproduction (params.yaml's ``normuon:`` block). No defaults: params.yaml is the one
source of values."""

from __future__ import annotations

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel


class CorpusParams(ParamsModel):
    """The standard-library text corpus (``paperdag.common.corpus``)."""

    packages: tuple[str, ...] = Field(
        min_length=1, description="standard-library packages (or modules) whose source files form the corpus, in order"
    )
    max_bytes: int = Field(ge=10_000, le=50_000_000, description="corpus size cap in bytes (whole files, in order)")
    val_fraction: float = Field(gt=0.0, lt=0.5, description="fraction of files (by path hash) held out for validation")


class ModelParams(ParamsModel):
    """Shape of the tiny byte-level transformer shared by every optimizer."""

    d_model: int = Field(ge=8, le=1024, description="residual stream width")
    n_layer: int = Field(ge=1, le=24, description="transformer blocks")
    n_head: int = Field(ge=1, le=32, description="attention heads per block (must divide d_model)")
    context: int = Field(ge=8, le=1024, description="tokens (bytes) per training window")


class TrainParams(ParamsModel):
    """Budget and schedule, identical for every optimizer (same tokens: steps * batch_size * context)."""

    batch_size: int = Field(ge=1, le=1024, description="windows per training and validation batch")
    steps: int = Field(ge=10, le=100_000, description="optimizer steps per run")
    warmup_steps: int = Field(ge=1, description="linear lr warm-up steps (then linear decay to final_lr_frac)")
    final_lr_frac: float = Field(ge=0.0, le=1.0, description="lr at the last step as a fraction of the peak")
    eval_every: int = Field(ge=1, description="steps between validation-loss and update row-CV evaluations")
    eval_batches: int = Field(ge=1, le=256, description="fixed validation batches (drawn once with seed)")
    n_seeds: int = Field(ge=2, le=16, description="runs per optimizer; run k uses seed + k")


class AdamWParams(ParamsModel):
    """The AdamW baseline (all parameters; betas (0.9, 0.95) as nanoGPT's train.py)."""

    lr: float = Field(gt=0.0, le=1.0, description="published peak lr, the centre of AdamW's lr grid (tuning.lr_factors; "
                      "the pilot picks the rate the judged seeds run at)")
    weight_decay: float = Field(ge=0.0, le=1.0, description="decoupled weight decay of the hidden matrices")


class MuonParams(ParamsModel):
    """Muon and NorMuon on the hidden matrices, AdamW on embeddings, head and norms."""

    lr: float = Field(gt=0.0, le=1.0, description="published peak lr of Muon on the hidden matrices: the centre of "
                      "Muon's and of NorMuon's lr grids (tuning.lr_factors), each optimizer tuned on its own")
    aux_lr: float = Field(gt=0.0, le=1.0, description="peak lr of the AdamW on embeddings, head and norms (fixed, "
                          "not tuned: the same for Muon and NorMuon)")
    weight_decay: float = Field(ge=0.0, le=1.0, description="decoupled weight decay of the hidden matrices")
    normuon_beta2: float = Field(ge=0.0, lt=1.0, description="NorMuon's EMA rate of the per-row second moment")


class TuningParams(ParamsModel):
    """How every optimizer's peak lr is chosen before its judged seeds run (runs.py): the same grid shape around each
    optimizer's published lr, run on a pilot seed outside the judged ones, scored on a tuning slice of the training
    documents (never the validation windows that are judged). Rule: the grid point with the lowest final loss on the
    tuning windows (ties: the smaller lr; a diverged run counts as +inf); when it is an end of the grid, the grid
    grows by one more step (the ratio of its two outermost factors) on that side, at most ``max_extensions`` times."""

    pilot_seed: int = Field(ge=0, description="seed of every pilot run (initial weights and batch order); outside "
                            "seed..seed+n_seeds-1, the judged seeds")
    fraction: float = Field(gt=0.0, lt=0.5, description="share of the training documents (by a salted path hash) held "
                            "out of the pilot's training as its tuning slice; the judged runs train on every document")
    lr_factors: tuple[float, ...] = Field(min_length=2, description="the grid shape shared by every optimizer: its "
                                          "grid is its published lr times each factor")
    max_extensions: int = Field(ge=0, le=4, description="grid steps added, one at a time, while the best lr is an end "
                                "of the grid")


class ClaimParams(ParamsModel):
    """Margins of the claims (claims.py), each applied to a 95% interval over seeds by a shared rule
    (paperdag.common.verdicts): described, set in params.yaml before the run, never tuned to make a claim pass."""

    min_step_reduction_pct: float = Field(
        ge=0.0, le=100.0, description="superiority margin: NorMuon's step reduction to AdamW's final loss must lie "
        "above this % (0: any saving, the paper's claim is the sign at 21.74%)"
    )
    min_gain_over_muon_pp: float = Field(
        ge=0.0, le=100.0, description="superiority margin: NorMuon's step reduction minus Muon's (paired by seed) must "
        "lie above this many percentage points (0: any gain)"
    )
    max_row_cv_ratio: float = Field(
        gt=0.0, le=1.0, description="NorMuon's mean update row-norm CV minus this fraction of Muon's (paired by seed) "
        "must lie below 0 (1: simply more uniform than Muon)"
    )
    min_final_loss_margin: float = Field(
        ge=0.0, le=1.0, description="superiority margin (nats/byte): NorMuon's final val loss minus AdamW's and minus "
        "Muon's (paired by seed) must lie below -this (0: any improvement)"
    )
    paper_step_reduction_pct: float = Field(
        ge=0.0, le=100.0, description="the paper's step reduction of NorMuon against AdamW (% at 1.1B): each "
        "interval is also placed against it ('at our scale', reported in the metrics and reasons), never a margin"
    )
    paper_gain_over_muon_pp: float = Field(
        ge=0.0, le=100.0, description="the paper's gain of NorMuon's step reduction over Muon's (pp at 1.1B): reported "
        "against the interval like paper_step_reduction_pct, never a margin"
    )
    reference_draws: int = Field(
        ge=2, le=10_000, description="seeded draws of each structureless reference (random semi-orthogonal, NS5 of a "
        "Gaussian) whose row-norm CV Muon's is judged against (reference.py): the reference's own interval is over them"
    )


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="intervals over training seeds (run k of every optimizer uses seed + k): "
                              "every competence precondition and evidence claim")


class TrendParams(ParamsModel):
    """The CPU competence trend (trend.py, a diagnostic no stage reads): one run per optimizer and budget."""

    seed: int = Field(ge=0, description="seed of every trend run and of its ladder's held-out windows: outside the "
                      "judged seeds and not the pilot seed")
    steps: tuple[int, ...] = Field(min_length=1, description="budgets (optimizer steps), ascending (two or more give "
                                   "the trend's bound); the largest must stay under one epoch of the gpu profile's "
                                   "training bytes")


class Params(ParamsModel):
    """Seed, corpus, model, training budget, the optimizers' rates and their tuning, timing, claim thresholds and
    sample-size plans."""

    seed: int = Field(ge=0, description="base seed: run k of every optimizer uses seed + k; also the val batches")
    corpus: CorpusParams
    model: ModelParams
    train: TrainParams
    adamw: AdamWParams
    muon: MuonParams
    tuning: TuningParams
    bench_steps: int = Field(ge=2, le=1000, description="timed optimizer steps per optimizer in evaluate")
    claims: ClaimParams
    plans: Plans
    trend: TrendParams

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.model.d_model % self.model.n_head:
            raise ValueError("model.n_head must divide model.d_model")
        if self.train.warmup_steps >= self.train.steps:
            raise ValueError("train.warmup_steps must be fewer than train.steps")
        if self.seed <= self.tuning.pilot_seed < self.seed + self.train.n_seeds:
            raise ValueError("tuning.pilot_seed must lie outside the judged seeds seed..seed+n_seeds-1")
        if len(set(self.tuning.lr_factors)) != len(self.tuning.lr_factors) or min(self.tuning.lr_factors) <= 0:
            raise ValueError("tuning.lr_factors must be distinct and positive")
        if self.seed <= self.trend.seed < self.seed + self.train.n_seeds or self.trend.seed == self.tuning.pilot_seed:
            raise ValueError("trend.seed must be neither a judged seed nor the pilot seed")
        if list(self.trend.steps) != sorted(set(self.trend.steps)):
            raise ValueError("trend.steps must be distinct and ascending")
        if self.plans.seeds.n != self.train.n_seeds:
            raise ValueError("plans.seeds.n must be train.n_seeds (every seed is a unit of the judged intervals)")
        return self
