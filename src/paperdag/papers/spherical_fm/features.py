"""Stage ``train_features``: the classifier of the photo crops (photograph x quadrant) whose penultimate layer is the
metric feature space of every generator (the pixel-space and the latent flows both generate photo crops), and a
second, scale-blind one: the same recipe and labels on per-crop standardised crops
s(x) = (x - mean(x)) / sqrt(var(x) + STD_EPS) (mean and variance over the crop's 3 c^2 values). s(c x) = s(x) for every c > 0 up to STD_EPS, so a crop and its projection to
the sphere S_R (x -> R x / ||x||) share one point of that space: the norm a generator on S_R discards by construction
is invisible there (claims.sphere_can_act_scale_blind)."""

from __future__ import annotations

import torch

from paperdag.io import save_tensors
from paperdag.stage import StageContext

from .data import load_split, to_model_space
from .observation import chance
from .params import Params
from .prepare import DATA_FILE
from .training import accuracy, train_classifier

N_CLASSES = {"photos": 8}
SCALE_BLIND = "photos"  # the dataset with a scale-blind feature space (the judged one)
STD_EPS = 1e-4  # variance floor in model units (x in [-1, 1]): a crop of one flat colour (std 0) maps to ~0, not
# to amplified 8-bit rounding; it is 1/100 of the variance of a crop whose values spread by 0.1 (~13 grey levels)


def standardise(X: torch.Tensor) -> torch.Tensor:
    """Per-row standardisation (x - mean(x)) / sqrt(var(x) + STD_EPS) over the row's values (population variance)."""
    centred = X - X.mean(dim=1, keepdim=True)
    return centred / (centred.pow(2).mean(dim=1, keepdim=True) + STD_EPS).sqrt()


def classifier_file(dataset: str) -> str:
    """The output file of ``dataset``'s feature classifier."""
    return f"classifier_{dataset}.safetensors"


def blind_file(dataset: str) -> str:
    """The output file of ``dataset``'s scale-blind feature classifier (trained on standardised crops)."""
    return f"classifier_{dataset}_scale_blind.safetensors"


def train_features(ctx: StageContext[Params], datasets: list[str]) -> dict[str, float]:
    """classifier_<dataset>.safetensors (and classifier_photos_scale_blind.safetensors); returns each one's test
    accuracy beside chance (the sanity check of the metric space)."""
    p, out = ctx.params.features, {}
    for dataset in datasets:
        (X_tr, y_tr), (X_te, y_te) = (load_split(ctx.input("prepare", DATA_FILE), dataset, s)
                                      for s in ("train", "test"))
        X_tr, X_te = (torch.as_tensor(to_model_space(a), device=ctx.device) for a in (X_tr, X_te))
        y_tr_t, y_te_t = (torch.as_tensor(y, device=ctx.device) for y in (y_tr, y_te))
        spaces = {classifier_file(dataset): (dataset, lambda X: X)}
        if dataset == SCALE_BLIND:
            spaces[blind_file(dataset)] = (f"{dataset}_scale_blind", standardise)
        for file, (name, f) in spaces.items():
            gen = torch.Generator(ctx.device).manual_seed(ctx.params.seed)
            net = train_classifier(f(X_tr), y_tr_t, p.hidden, p.feat_dim, p.steps, p.batch, p.lr, gen,
                                   N_CLASSES[dataset])
            save_tensors(ctx.output(file), net.state_dict())
            out |= {f"{name}_test_accuracy": accuracy(net, f(X_te), y_te_t), f"{name}_chance": chance(y_te)}
    return out
