"""Parameters of dune (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel


class DataParams(ParamsModel):
    """The coloured-digit split (data.py)."""

    n_train: int = Field(ge=100, le=4500, description="training images (perturbed by every scheme)")
    n_test: int = Field(ge=100, le=2000, description="clean test images")
    contrast: float = Field(gt=0.0, le=0.6, description="stroke minus background grey level c (data.py): low "
                            "enough that an L_inf-bounded shortcut is easier than the digit")
    chroma: float = Field(ge=0.0, le=0.2, description="half-width of the per-image colour jitter of background and "
                          "stroke (data.py): small, so colour is a cue the networks are not invariant to")


class NetParams(ParamsModel):
    """The ConvNet and its training budget, the same for surrogates, the EM generator and every victim."""

    width: int = Field(ge=2, le=128, description="channels of the first conv layer (the second has 2x)")
    epochs: int = Field(ge=1, le=100, description="victim training epochs")
    batch: int = Field(ge=8, le=1024, description="mini-batch size")
    lr: float = Field(gt=0.0, le=0.1, description="Adam learning rate")


class SurrogateParams(ParamsModel):
    """The surrogate ensemble: checkpoints of one clean training run."""

    epochs: int = Field(ge=1, le=100, description="epochs of the surrogate run")
    checkpoints: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1)] = Field(
        description="epochs whose weights form the ensemble (M = len)")


class BudgetParams(ParamsModel):
    """The perturbation budget, the same for every scheme."""

    eps: float = Field(gt=0.0, le=0.25, description="L_inf budget of every additive scheme (8/255 in the paper; "
                       "params.yaml states the value used here and why)")
    psnr_min: float = Field(ge=10.0, le=60.0, description="colour branch: PSNR floor (dB) on every image")
    ssim_min: float = Field(ge=0.0, le=1.0, description="colour branch: SSIM floor on every image")


class DuneParams(ParamsModel):
    """DUNE's two branches (the spatial branch's PGD settings also serve the adversarial-poisoning baseline)."""

    shift: int = Field(ge=1, le=9, description="label shift s: y' = (y + s) mod K")
    pgd_steps: int = Field(ge=1, le=200, description="spatial branch PGD steps (step 2.5 eps / steps)")
    colour_bound: float = Field(gt=0.0, le=0.5, description="colour offset box [-a, a]^3 searched by DE")
    popsize: int = Field(ge=2, le=50, description="DE population multiplier (population = 3 popsize)")
    generations: int = Field(ge=1, le=200, description="DE generations per class")
    sample: int = Field(ge=4, le=500, description="images per class in the DE objective")


class BaselineParams(ParamsModel):
    """Settings of the baselines (baselines.py)."""

    synthetic_patch: int = Field(ge=1, le=14, description="patch size p of the synthetic noise")
    synthetic_spread: float = Field(ge=0.0, le=10.0, description="within-class std of the synthetic noise relative "
                                    "to its +-1 class means (Yu et al.'s class_sep = 10: 0.1)")
    em_rounds: int = Field(ge=1, le=100, description="max min-min rounds of EM")
    em_train_steps: int = Field(ge=1, le=1000, description="model mini-batches per EM round")
    em_pgd_steps: int = Field(ge=1, le=100, description="noise PGD steps per EM round (step eps / 5)")
    em_stop_acc: float = Field(gt=0.0, le=1.0, description="EM stops once the model fits x + delta to this accuracy")


class DefenseParams(ParamsModel):
    """The defenses' settings (defenses.py)."""

    jpeg_quality: int = Field(ge=1, le=100, description="JPEG quality of the jpeg and iss defenses")
    noise_std: float = Field(ge=0.0, le=1.0, description="std of the Gaussian noise of noise_blur")
    blur_sigma: float = Field(gt=0.0, le=5.0, description="Gaussian blur width (pixels) of noise_blur")
    at_eps: float = Field(gt=0.0, le=0.25, description="adversarial training L_inf radius")
    at_steps: int = Field(ge=1, le=20, description="adversarial training PGD steps")
    at_warmup: int = Field(ge=0, le=20, description="clean epochs before adversarial training starts (from a random "
                           "initialisation it collapses to a constant prediction on these digits: 0.087 accuracy)")


class TrivialParams(ParamsModel):
    """The trivial classifiers of the baseline ladder (trivial.py), hyper-parameters chosen on validation images."""

    ks: Annotated[list[Annotated[int, Field(ge=1, le=100)]], Field(min_length=1, max_length=10)] = Field(
        description="k of the k-NN rungs, chosen on validation accuracy")
    cs: Annotated[list[Annotated[float, Field(gt=0.0, le=1e4)]], Field(min_length=1, max_length=10)] = Field(
        description="inverse L2 strength C of the logistic-regression rungs, chosen on validation accuracy")
    valid_frac: float = Field(gt=0.0, lt=1.0, description="share of the training images held out to choose k and C "
                              "(the last ones; the rungs are fitted on the rest)")


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="victim seeds per (scheme, defense): every comparison of victims")
    draws: SamplePlan = Field(description="replicates of the standard-schemes precondition (draws.py)")
    test_images: SamplePlan = Field(description="clean test images: the surrogate paired with the trivial ladder")
    train_images: SamplePlan = Field(description="training images: the spatial branch's hit rate on the surrogates")


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    unlearn_frac: float = Field(gt=0.0, le=1.0, description="unlearnable: the undefended victim's accuracy stays "
                                "below this fraction of the clean victim's (paired CI); the same bar for DUNE and "
                                "for the standard schemes' precondition (0.5, issue 43)")
    recover_frac: float = Field(gt=0.0, le=1.0, description="a defense 'recovers' a scheme b when it closes at "
                                "least this share of b's gap: (acc[b, d] - acc[b, none]) / (acc[clean, d] - "
                                "acc[b, none]) (paired bootstrap over seeds); the same bar for DUNE's branches and for "
                                "the defenses_can_act precondition on a standard scheme")
    headroom_min: float = Field(ge=0.0, le=1.0, description="headroom: a branch must take at least this much "
                                "accuracy off the clean victim (no defense) before its recovery is judged")
    act_scheme: Literal["em", "synthetic"] = Field(description="the standard scheme on which JPEG and adversarial "
                                                   "training must show they can act (defenses_can_act)")
    floor: float = Field(ge=0.0, le=1.0, description="the floor of victim accuracy: chance 1/K; a scheme whose "
                         "defense-averaged victim is not above it cannot be out-ranked (lowest_average_under_defenses "
                         "needs every rival above it)")
    cover_tol: float = Field(ge=0.0, le=1.0, description="DUNE covers a defense when its accuracy is at most the "
                             "better branch's plus this")
    fit_min: float = Field(gt=0.0, le=1.0, description="precondition: every victim fits its own (defended) "
                           "training set to at least this accuracy; a network stuck on one class fits ~0.11")
    hit_min: float = Field(gt=0.0, le=1.0, description="precondition: the spatial branch's targeted attack must "
                           "make the surrogates predict the shifted label on at least this share of the training "
                           "images (0.9, issue 43: an attack that misses its target more often does not implement "
                           "the paper's error-minimising-toward-y' mechanism)")


class Params(ParamsModel):
    """Seed, data, network, surrogate ensemble, budget, schemes, defenses, victims, the trivial ladder, claim
    thresholds and sample-size plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    data: DataParams
    net: NetParams
    surrogate: SurrogateParams
    budget: BudgetParams
    dune: DuneParams
    baselines: BaselineParams
    defenses: DefenseParams
    seeds: int = Field(ge=1, le=20, description="victims per (scheme, defense), seeded 0..seeds-1")
    draws: int = Field(ge=2, le=60, description="replicates of the standard-schemes precondition (draws.py), each "
                       "a fresh EM and synthetic noise draw with its own victim seed; params.yaml gives the power "
                       "argument for the number")
    trivial: TrivialParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        sizes = {"seeds": self.seeds, "draws": self.draws, "test_images": self.data.n_test,
                 "train_images": self.data.n_train}
        drift = [f"plans.{k}.n = {getattr(self.plans, k).n} != {v}" for k, v in sizes.items()
                 if getattr(self.plans, k).n != v]
        if drift:
            raise ValueError(f"every plan's n is the design's count of its units: {'; '.join(drift)}")
        if max(self.surrogate.checkpoints) > self.surrogate.epochs:
            raise ValueError("surrogate.checkpoints must not exceed surrogate.epochs")
        if sorted(set(self.surrogate.checkpoints)) != self.surrogate.checkpoints:
            raise ValueError("surrogate.checkpoints must be distinct and increasing (the last is the most trained)")
        return self
