"""Parameters of the mHC reproduction (params.yaml's ``mhc:`` block). No defaults: params.yaml is the one source of
values."""

from __future__ import annotations

from pydantic import Field, model_validator

from paperdag.params import ParamsModel


class CorpusParams(ParamsModel):
    """The standard-library text corpus (``paperdag.common.corpus``)."""

    packages: tuple[str, ...] = Field(
        min_length=1, description="standard-library packages (or modules) whose source files form the corpus, in order"
    )
    max_bytes: int = Field(ge=10_000, le=50_000_000, description="corpus size cap in bytes (whole files, in order)")
    val_fraction: float = Field(gt=0.0, lt=0.5, description="fraction of files (by path hash) held out for validation")


class ModelParams(ParamsModel):
    """The tiny byte-level transformer shared by all three connections, and the hyper-connection settings."""

    d_model: int = Field(ge=8, le=1024, description="width C of one residual stream")
    n_layer: int = Field(ge=1, le=64, description="transformer blocks (each has two sub-layers, attention and MLP)")
    n_head: int = Field(ge=1, le=32, description="attention heads per block (must divide d_model)")
    context: int = Field(ge=8, le=1024, description="tokens (bytes) per training window")
    n_streams: int = Field(ge=2, le=16, description="expansion rate n of HC and mHC (streams of width C)")
    init_mix: float = Field(ge=0.0, lt=1.0, description="s of the shared initial maps: H_res = (1-s) I + s J/n, "
                            "H_pre = (1-s) e_k + s/n (s > 0 keeps mHC's logits finite)")
    gate_init: float = Field(ge=0.0, le=1.0, description="initial gating factors a_pre, a_post, a_res of HC and mHC")
    sinkhorn_iters: int = Field(ge=1, le=100, description="Sinkhorn-Knopp iterations t_max of mHC")


class TrainParams(ParamsModel):
    """Budget and schedule, identical for every connection (same tokens: steps * batch_size * context)."""

    batch_size: int = Field(ge=1, le=1024, description="windows per training and validation batch")
    steps: int = Field(ge=10, le=100_000, description="optimizer steps per run")
    lr: float = Field(gt=0.0, le=1.0, description="peak AdamW learning rate, every parameter")
    warmup_steps: int = Field(ge=1, description="linear lr warm-up steps (then linear decay to final_lr_frac)")
    final_lr_frac: float = Field(ge=0.0, le=1.0, description="lr at the last step as a fraction of the peak")
    weight_decay: float = Field(ge=0.0, le=1.0, description="decoupled weight decay of the >= 2-D weights")
    grad_clip: float = Field(gt=0.0, le=1000.0, description="global gradient-norm clip (the norm is logged before it)")
    eval_every: int = Field(ge=1, description="steps between validation loss and mixing-gain measurements")
    eval_batches: int = Field(ge=1, le=256, description="fixed validation batches (drawn once with seed)")


class SpikeParams(ParamsModel):
    """What counts as a spike (stability.py): a step far above the trailing median of its own curve."""

    window: int = Field(ge=3, le=1000, description="trailing steps whose median is the reference")
    grad_factor: float = Field(gt=1.0, le=100.0, description="gradient-norm spike: g_t > grad_factor * median")
    loss_factor: float = Field(gt=1.0, le=10.0, description="loss spike: loss_t > loss_factor * median")


class ClaimParams(ParamsModel):
    """Margins of the claims (claims.py): described, set in params.yaml before the run, never tuned to make a claim
    pass."""

    hc_gain_min: float = Field(gt=1.0, description="HC's peak composite gain 'explodes' when the 95% CI of its "
                               "per-seed log10 lies above log10 of this (an order of magnitude above the identity's 1)")
    mhc_gain_max: float = Field(gt=1.0, description="check: mHC's peak composite gain stays at most this in every "
                                "seed (the paper reports about 1.6 at 27B)")
    loss_match_tol: float = Field(gt=0.0, le=1.0, description="equivalence margin (nats/byte): mHC's final val loss "
                                  "is on par with another connection's when the 95% CI of the paired per-seed "
                                  "difference lies inside +- this; half the paper's 27B gain over the baseline "
                                  "(0.021), so a match excludes an effect of the paper's size")
    spike_margin: float = Field(ge=0.0, le=100.0, description="non-inferiority margin (spikes per run): mHC is 'as "
                                "stable as' the residual when the 95% CI of its paired excess of spikes lies below "
                                "this; one spike, the smallest difference a count resolves")
    max_overhead_pct: float = Field(gt=0.0, le=1000.0, description="mHC's forward matmul FLOPs over the residual's, "
                                    "at most (%); the paper reports +6.7% step time at n = 4 with fused kernels")
    manifold_tol: float = Field(gt=0.0, le=1.0, description="verify: |row sum - 1| and |col sum - 1| of every H_res")


class Params(ParamsModel):
    """Seed, corpus, model, budget, spike definition, timing and claim thresholds."""

    seed: int = Field(ge=0, description="base seed: run k of every connection uses seed + k; also the val batches")
    corpus: CorpusParams
    model: ModelParams
    train: TrainParams
    spikes: SpikeParams
    bench_steps: int = Field(ge=2, le=1000, description="timed training steps per connection in evaluate")
    claims: ClaimParams

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.model.d_model % self.model.n_head:
            raise ValueError("model.n_head must divide model.d_model")
        if self.train.warmup_steps >= self.train.steps:
            raise ValueError("train.warmup_steps must be fewer than train.steps")
        if self.spikes.window >= self.train.steps:
            raise ValueError("spikes.window must be fewer than train.steps")
        return self
