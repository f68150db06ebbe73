"""The spherical_fm DAG: prepare -> {train_probes (also after prepare_labels), train_features, train_autoencoder,
train_<generator>_photos x 4, train_<generator>_latent x 4 (after train_autoencoder)} -> evaluate.
Imported only by the registry."""

from paperdag.dag import Pipeline, Resources, Stage

from .params import Params

METHODS = ("icfm", "otcfm", "sotcfm", "sfm")  # the baselines, then the paper's two methods (flows.SPECS)
DATASETS = ("photos", "latent")  # the generators' data: the photo crops in pixel space and in the autoencoder's latent
# space (both judged; MNIST's generators were dropped: params.yaml flow.budgets says why)
GEN_OUT = ("weights.safetensors", "samples.safetensors")
PLOTS = ("samples.png", "metric_vs_steps.png", "budget_sweep.png", "observation.png", "labels.png")

PIPELINE = Pipeline(
    slug="spherical_fm",
    title="Spherical flow matching: SOT-CFM and SFM vs Euclidean flow matching on real images",
    headline=("fd_photos_sfm_5", "fd_photos_otcfm_5", "fd_photos_sfm_20", "fd_photos_otcfm_20"),
    params_model=Params,
    stages=(
        Stage("prepare", "prepare", "prepare:prepare", params=("data",), outputs=("data.parquet", "provenance.json")),
        Stage("prepare_labels", "prepare", "labelled:prepare_labels", params=("data", "labels"),
              outputs=("labels.parquet", "labels_provenance.json")),
        Stage("train_probes", "train", "probes:train_probes", upstream=("prepare", "prepare_labels"),
              params=("probe", "labels"), outputs=("observation.json", "labelled_observation.json",
                                                   "probe_correct.safetensors")),
        Stage("train_features", "train", "features:train_features", upstream=("prepare",), params=("features",),
              outputs=("classifier_photos.safetensors", "classifier_photos_scale_blind.safetensors"),
              args={"datasets": ["photos"]}, resources=Resources(cpus=1, gpus=0.5)),
        Stage("train_autoencoder", "train", "autoencoder:train_autoencoder", upstream=("prepare",),
              params=("data", "autoencoder"), outputs=("autoencoder.safetensors", "codes.safetensors"),
              resources=Resources(cpus=1, gpus=0.5)),
        *(Stage(f"train_{m}_{d}", "train", "train:train",
                upstream=("prepare", "train_autoencoder") if d == "latent" else ("prepare",),
                params=("flow", "data", "autoencoder") if d == "latent" else ("flow",), outputs=GEN_OUT,
                args={"method": m, "dataset": d}, resources=Resources(cpus=1, gpus=0.5))
          for d in DATASETS for m in METHODS),
        Stage("evaluate", "evaluate", "evaluate:evaluate",
              upstream=("prepare", "prepare_labels", "train_probes", "train_features", "train_autoencoder",
                        *(f"train_{m}_{d}" for d in DATASETS for m in METHODS)),
              params=("data", "autoencoder", "features", "flow", "metrics", "claims", "plans"),
              outputs=("scores.parquet", "metrics.json", *PLOTS),
              plots=PLOTS, args={"methods": list(METHODS), "datasets": list(DATASETS)}),
    ),
)
