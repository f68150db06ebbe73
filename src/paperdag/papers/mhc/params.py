"""Parameters of the mHC reproduction (params.yaml's ``mhc:`` block). No defaults: params.yaml is the one source of
values."""

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
    narrow_d_model: int = Field(ge=8, le=1024, description="the second, narrower stream width of the scale cell "
                                "(residual and mHC trained again at the base lr and budget)")


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


STRESS_CELLS = 2  # stress learning rates of the sweep (the fan-out is declared: len(sweep.lr_factors))


class SweepParams(ParamsModel):
    """The learning-rate stress sweep (stability.py): every connection trained again at higher peak learning rates,
    and what counts as an unstable run (every statistic read after the warm-up window)."""

    lr_factors: tuple[float, ...] = Field(description="stress peak lrs as multiples of train.lr (one cell each)")
    steps: int = Field(ge=10, le=100_000, description="optimizer steps per stress run (same warm-up and schedule "
                       "shape as the base runs)")
    smooth: int = Field(ge=1, le=1000, description="steps of the moving average of the training loss that the surge "
                        "is read from")
    surge_nats: float = Field(gt=0.0, le=10.0, description="loss surge: the moving-average training loss rises this "
                              "far (nats/byte) above its best value so far after the warm-up; 0.1, five times the "
                              "~0.02 noise of a 20-step average of 1024-byte batches")
    grad_factor: float = Field(gt=1.0, le=1e6, description="gradient surge: the pre-clip gradient norm exceeds this "
                               "multiple of its post-warm-up median (10: an order of magnitude)")


class SeedParams(ParamsModel):
    """The training seeds of the judged cells (run k of every connection in a cell uses seed ``first_seed + k``: the same
    weights' seeds and batch order for every connection, so differences pair by seed) and the pilot's seeds, which
    the judged cells never reuse (the plans' spreads come from the pilot)."""

    first_seed: int = Field(ge=0, description="first training seed of the judged cells")
    runs: int = Field(ge=2, le=1000, description="seeds per base and narrow cell (plans.seeds.n)")
    stress_runs: int = Field(ge=2, le=1000, description="seeds per stress cell (plans.stress_seeds.n)")
    pilot: tuple[int, int] = Field(description="first and last training seed of the pilot runs whose spread the "
                                   "plans' pilot_sd came from: never judged (the judged seeds must miss them)")


DEPTH_FACTORS = (2, 4)  # HC's depth trend: model.n_layer times these (2, 4, 8 blocks at the default's 2)


class DepthParams(ParamsModel):
    """HC's depth trend (depth.py): HC trained again at DEPTH_FACTORS times the model's blocks, in one sweep cell's
    setting, for the first ``runs`` judged seeds; with that cell's own runs of those seeds, its per-seed peak
    composite gain over depth is the mechanism precondition of the instability claims."""

    cell: str = Field(pattern=r"^stress\d+$", description="the sweep cell whose peak lr and steps the deeper HC runs "
                      "use (its own HC runs give the trend's first depth)")
    runs: int = Field(ge=2, le=1000, description="seeds per depth (the first judged seeds; plans.depth_seeds.n)")


class ClaimParams(ParamsModel):
    """Margins of the claims (claims.py): described, set in params.yaml before the run, never tuned to make a claim
    pass."""

    hc_gain_min: float = Field(gt=1.0, description="HC's peak composite gain 'explodes' when the 95% CI of its "
                               "per-seed log10 lies above log10 of this (an order of magnitude above the identity's 1)")
    mhc_gain_max: float = Field(gt=1.0, description="check: mHC's peak composite gain stays at most this in every "
                                "seed (the paper reports about 1.6 at 27B)")
    competence_margin: float = Field(ge=0.0, le=1.0, description="superiority margin (nats/byte): the CI over "
                                     "seeds of a model's final val loss (a stress run's: where its stability measures "
                                     "start counting, the first evaluation at or after the warm-up) lies this far "
                                     "below the strongest rung of the count-model ladder (Kneser-Ney orders 2-5, Witten-Bell bigram) on the same "
                                     "windows: 0.05, so a model has learned more than the count statistics")
    loss_match_tol: float = Field(gt=0.0, le=1.0, description="equivalence margin (nats/byte): mHC's final val loss "
                                  "is on par with another connection's when the 95% CI of the paired per-seed "
                                  "difference lies inside +- this; half the paper's 27B gain over the baseline "
                                  "(0.021), so a match excludes an effect of the paper's size")
    loss_rise_margin: float = Field(gt=0.0, le=10.0, description="non-inferiority margin (nats/byte) of mHC's "
                                    "per-seed worst post-warm-up loss rise over the stress cells against the "
                                    "residual's (paired by seed): 0.02, the ~0.02 noise of the 20-step moving average "
                                    "the rise is read from (sweep.surge_nats's argument), so 'as stable as' excludes "
                                    "an excess rise beyond the smoothed loss's own noise; set before any run judged "
                                    "it")
    grad_ratio_margin_log10: float = Field(gt=0.0, le=10.0, description="non-inferiority margin (decades) of mHC's "
                                           "per-seed worst log10 peak-to-median pre-clip gradient norm over the stress "
                                           "cells against the residual's (paired by seed): log10 2 = 0.301, mHC's "
                                           "worst spike at most twice the residual's relative to its own median (the "
                                           "old flag, sweep.grad_factor, needed a whole decade); set before any run "
                                           "judged it")
    max_overhead_pct: float = Field(gt=0.0, le=1000.0, description="mHC's training-step matmul FLOPs over the "
                                    "residual's, at most (%), at the ladder widths where its connection costs at most "
                                    "this share of a sub-layer; the paper reports +6.7% step time at n = 4 with fused "
                                    "kernels")
    manifold_tol: float = Field(gt=0.0, le=1.0, description="check mhc_on_manifold: Sinkhorn-Knopp on every trained "
                                "mHC H_res logit (each sub-layer, validation token and base seed), iterated in "
                                "float64, stops once max |row sum - 1| and |col sum - 1| are <= this, and the result "
                                "is checked exactly at this tolerance; 1e-9, the issue's, about 10^7 float64 ulps of "
                                "a row sum of 4, far below the 1e-2 scale of the t = 20 deviations")
    sinkhorn_cap: int = Field(ge=1, le=1_000_000, description="check mhc_on_manifold: the most Sinkhorn-Knopp steps "
                              "(row and column) any matrix gets before it is checked; a budget, not a setting of the "
                              "claim (a matrix not within manifold_tol by then fails, with its deviation); 10000, "
                              "five times the 2000 steps at which the review's matrices reached 8e-12")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="intervals over the base and narrow cells' seeds (seeds.runs): "
                              "competence, loss equivalence and the width trend")
    stress_seeds: SamplePlan = Field(description="intervals over the stress cells' seeds (seeds.stress_runs): "
                                     "stress competence, HC's instability and gain, and the stability comparisons")
    depth_seeds: SamplePlan = Field(description="the interval over seeds of HC's per-seed depth slope (depth.runs)")


class TrendParams(ParamsModel):
    """The CPU competence trend (trend.py, a diagnostic no stage reads): one base-cell run per connection and budget."""

    seed: int = Field(ge=0, description="seed of every trend run and of its ladder's held-out windows: none of the "
                      "judged, replicate or pilot training seeds")
    steps: tuple[int, ...] = Field(min_length=2, description="budgets (optimizer steps), ascending; the largest must "
                                   "stay under one epoch of the gpu profile's training bytes")


class Params(ParamsModel):
    """Seeds, corpus, model, budget, stress sweep, timing, FLOP ladder, claim thresholds, sample-size plans and the CPU
    trend's sizes."""

    seed: int = Field(ge=0, description="seed of the fixed validation batches (every cell's) and of evaluate's "
                      "held-out ladder windows; the training runs' seeds are ``seeds``")
    seeds: SeedParams
    depth: DepthParams
    corpus: CorpusParams
    model: ModelParams
    train: TrainParams
    sweep: SweepParams
    bench_steps: int = Field(ge=2, le=1000, description="timed training steps per connection in evaluate")
    flop_widths: tuple[int, ...] = Field(min_length=2, description="the width ladder (increasing) on which evaluate "
                                         "counts a training step's matmul FLOPs of untrained residual, HC and mHC "
                                         "models (benchmark.flop_ladder): the two trained widths, and wider ones up to "
                                         "where mHC's connection share of a sub-layer (20 / C at n = 4, r = 4) falls "
                                         "within claims.max_overhead_pct, as at the paper's widths")
    claims: ClaimParams
    plans: Plans
    trend: TrendParams

    @model_validator(mode="after")
    def _design(self) -> Params:
        lo, hi = self.seeds.pilot
        judged = range(self.seeds.first_seed, self.seeds.first_seed + max(self.seeds.runs, self.seeds.stress_runs))
        if self.trend.seed in judged or lo <= self.trend.seed <= hi:
            raise ValueError("trend.seed must be neither a judged nor a pilot training seed")
        if list(self.trend.steps) != sorted(set(self.trend.steps)):
            raise ValueError("trend.steps must be distinct and ascending")
        if self.model.d_model % self.model.n_head:
            raise ValueError("model.n_head must divide model.d_model")
        if self.train.warmup_steps >= self.train.steps:
            raise ValueError("train.warmup_steps must be fewer than train.steps")
        if len(self.sweep.lr_factors) != STRESS_CELLS:
            raise ValueError(f"sweep.lr_factors needs {STRESS_CELLS} factors (the pipeline's stress cells)")
        if self.train.warmup_steps + self.sweep.smooth >= self.sweep.steps:
            raise ValueError("sweep.steps must exceed train.warmup_steps + sweep.smooth")
        if self.model.narrow_d_model % self.model.n_head or self.model.narrow_d_model >= self.model.d_model:
            raise ValueError("model.narrow_d_model must be below model.d_model and divisible by model.n_head")
        w = self.flop_widths
        if list(w) != sorted(set(w)) or any(c % self.model.n_head for c in w):
            raise ValueError("flop_widths must increase and be divisible by model.n_head")
        if not {self.model.d_model, self.model.narrow_d_model} <= set(w):
            raise ValueError("flop_widths must contain model.d_model and model.narrow_d_model")
        s = self.seeds
        if (self.plans.seeds.n, self.plans.stress_seeds.n) != (s.runs, s.stress_runs):
            raise ValueError(f"plans.seeds.n and plans.stress_seeds.n must be the seeds the cells run ({s.runs} and "
                             f"{s.stress_runs}: every seed is a unit of the judged intervals)")
        if self.plans.depth_seeds.n != self.depth.runs or self.depth.runs > s.stress_runs:
            raise ValueError("plans.depth_seeds.n must be depth.runs, at most seeds.stress_runs (the depth trend "
                             "pairs with the stress cell's runs of the same seeds)")
        if int(self.depth.cell[6:]) >= STRESS_CELLS:
            raise ValueError(f"depth.cell must be one of the {STRESS_CELLS} stress cells")
        last = s.first_seed + max(s.runs, s.stress_runs) - 1
        if s.pilot[0] > s.pilot[1] or not (last < s.pilot[0] or s.first_seed > s.pilot[1]):
            raise ValueError(f"the judged seeds {s.first_seed}..{last} reuse pilot seeds {s.pilot[0]}..{s.pilot[1]}: a "
                             "pilot's seeds are never judged")
        return self
