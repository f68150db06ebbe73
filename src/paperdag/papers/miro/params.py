"""Parameters of miro (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

Reward = Literal["alignment", "composition", "sharpness", "aesthetic", "noise"]


class DataParams(ParamsModel):
    """The procedural captioned scenes and their imperfect pairs (scenes.py)."""

    n_train: int = Field(ge=64, le=200_000, description="captioned training images (with imperfect pairs)")
    n_clean: int = Field(ge=64, le=100_000, description="clean renders each detector (reward, evaluator) is trained on")
    n_clean_test: int = Field(ge=64, le=100_000, description="held-out clean renders: both detectors' accuracy "
                              "and the rewards' sanity (each corruption alone)")
    n_prompts: int = Field(ge=2, le=10_000, description="held-out evaluation captions")
    p_mismatch: float = Field(ge=0.0, le=0.9, description="probability that the caption names a wrong attribute")
    p_blur: float = Field(ge=0.0, le=0.9, description="probability of a Gaussian blur")
    p_noise: float = Field(ge=0.0, le=0.9, description="probability of additive Gaussian pixel noise")
    p_dull: float = Field(ge=0.0, le=0.9, description="probability of lowered contrast and saturation")
    blur_sigma: float = Field(gt=0.0, le=4.0, description="blur standard deviation in pixels")
    noise_std: float = Field(gt=0.0, le=1.0, description="pixel noise standard deviation (images in [0, 1])")
    contrast: float = Field(gt=0.0, le=1.0, description="contrast factor of a dulled image")
    desaturate: float = Field(ge=0.0, le=1.0, description="saturation factor of a dulled image")


class RewardParams(ParamsModel):
    """Reward models: detector training, the composition checker and the quantile bins."""

    n_bins: int = Field(ge=2, le=100, description="quantile bins K per reward")
    min_pixels: int = Field(ge=1, le=64, description="pixels of a colour for the checker to call it present")
    detector_steps: int = Field(ge=1, le=100_000, description="Adam steps of the detector")
    detector_batch: int = Field(ge=8, le=4096, description="detector minibatch size")
    detector_lr: float = Field(gt=0.0, le=0.1, description="detector learning rate")


class ModelParams(ParamsModel):
    """The velocity network shared by every method."""

    width: int = Field(ge=16, le=4096, description="hidden width of the MLP velocity field")
    depth: int = Field(ge=1, le=16, description="FiLM residual blocks")


class BudgetParams(ParamsModel):
    """The training budget shared by every method."""

    steps: int = Field(ge=2, le=1_000_000, description="Adam steps per model")
    batch: int = Field(ge=8, le=4096, description="minibatch size")
    lr: float = Field(gt=0.0, le=0.1, description="constant Adam learning rate")
    caption_dropout: float = Field(ge=0.0, le=0.9, description="probability of training on the empty caption")
    ema: float = Field(ge=0.0, lt=1.0, description="decay d of the weight moving average that is sampled")
    n_checkpoints: int = Field(ge=2, le=100, description="evenly spaced evaluations of the reward curves")


class MethodParams(ParamsModel):
    """The baselines' choices and the seeds every method is trained with."""

    seeds: list[int] = Field(min_length=2, max_length=20, description="training seeds, shared by every method")
    single_reward: Reward = Field(description="the reward the single-reward baseline is conditioned on")
    filter_reward: Reward = Field(description="the reward the filtering baseline ranks the data by")
    filter_fraction: float = Field(gt=0.0, lt=1.0, description="share of the data the filtering baseline keeps")


class SamplerParams(ParamsModel):
    """Sampling for evaluation (same for every method)."""

    guidance: float = Field(ge=0.0, le=20.0, description="guidance weight w (0 = the conditional model)")
    n_steps: int = Field(ge=1, le=1000, description="Euler steps from t = 0 to 1")
    per_prompt: int = Field(ge=2, le=64, description="samples per evaluation caption (diversity needs >= 2)")
    n_control: int = Field(ge=2, le=10_000, description="captions per target level in the controllability sweep")


class FinalParams(ParamsModel):
    """The final comparison (rescore.py): every generator scored again on fresh held-out captions."""

    n_prompts: int = Field(ge=2, le=100_000, description="held-out captions of the final scores (per_prompt samples "
                           "each; more than the checkpoints' so the per-seed finals carry less sampling noise)")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    diversity_tol: float = Field(ge=0.0, le=1.0, description="allowed relative loss of diversity vs a baseline")
    min_detector_acc: float = Field(ge=0.0, le=1.0, description="precondition: the detector's all-checks accuracy "
                                    "on held-out clean renders must be above this (exact binomial interval over the "
                                    "renders)")
    top_cell_min: float = Field(gt=0.0, le=1.0, description="precondition: share of the training data with every "
                                "reward in its top bin, the cell MIRO samples toward (0.02, issue 46)")
    control_floor: float = Field(gt=0.0, le=5.0, description="controllability: a reward's fitted rise from its "
                                 "lowest to its top target must exceed this many stds of that reward over the "
                                 "training data (0.25, issue 46: an effect-size floor, not just a positive slope)")
    replay_fraction: float = Field(gt=0.0, le=1.0, description="precondition: each generator's GenEval must exceed "
                                   "this fraction of its own replay's (training images of the prompt's layout "
                                   "nearest to its conditioning target; paired interval over seeds)")
    speedup_share: float = Field(gt=0.0, lt=1.0, description="speed-up: the share of seeds in which MIRO reaches a "
                                 "baseline's final value before the last step must exceed this (exact binomial "
                                 "interval over seeds)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="intervals over training seeds (every comparison of generators, the "
                              "trivial generators' draws paired with them)")
    renders: SamplePlan = Field(description="intervals over held-out clean renders (the detectors' accuracy, the "
                                "rewards' clean-minus-corrupted gaps)")


PILOT_SEEDS = range(7)  # the pilot's training seeds (0-6, the 7-seed default before fresh seeds were judged)


class TrendParams(ParamsModel):
    """The CPU competence trend (trend.py, a diagnostic no stage reads): one run per method, scored at each budget."""

    seed: int = Field(ge=0, description="training seed of every trend run: neither a judged seed (methods.seeds) "
                      "nor a pilot seed (0-6)")
    steps: tuple[int, ...] = Field(min_length=1, description="budgets (Adam steps), ascending: checkpoints of one run "
                                   "of the largest (two or more give the trend's bound)")


class Params(ParamsModel):
    """Seed, data, reward models, network, budget, methods, sampler, final comparison, claim thresholds,
    sample-size plans and the CPU trend's sizes."""

    seed: int = Field(ge=0, description="root of the data draws and of the evaluation noise")
    data: DataParams
    rewards: RewardParams
    model: ModelParams
    budget: BudgetParams
    methods: MethodParams
    sampler: SamplerParams
    final: FinalParams
    claims: ClaimParams
    plans: Plans
    trend: TrendParams

    @model_validator(mode="after")
    def _design(self) -> Params:
        if self.budget.n_checkpoints > self.budget.steps:
            raise ValueError("budget.n_checkpoints must not exceed budget.steps")
        if self.plans.seeds.n != len(self.methods.seeds):
            raise ValueError("plans.seeds.n must be the number of methods.seeds (every training seed is a unit)")
        if self.plans.renders.n != self.data.n_clean_test:
            raise ValueError("plans.renders.n must be data.n_clean_test (every held-out clean render is a unit)")
        if self.trend.seed in self.methods.seeds or self.trend.seed in PILOT_SEEDS:
            raise ValueError("trend.seed must be neither a judged nor a pilot training seed")
        if list(self.trend.steps) != sorted(set(self.trend.steps)):
            raise ValueError("trend.steps must be distinct and ascending")
        return self
