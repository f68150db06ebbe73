"""Stage ``train_features``: one classifier per generator dataset whose penultimate layer is that dataset's metric
feature space (MNIST: the digit; photo crops: photograph x quadrant)."""

from __future__ import annotations

import torch

from paperdag.io import save_tensors
from paperdag.stage import StageContext

from .data import load_split, to_model_space
from .observation import chance
from .params import Params
from .prepare import DATA_FILE
from .training import accuracy, train_classifier

N_CLASSES = {"mnist": 10, "photos": 8}


def classifier_file(dataset: str) -> str:
    """The output file of ``dataset``'s feature classifier."""
    return f"classifier_{dataset}.safetensors"


def train_features(ctx: StageContext[Params], datasets: list[str]) -> dict[str, float]:
    """classifier_<dataset>.safetensors; returns each one's test accuracy beside chance (the sanity check of the
    metric space)."""
    p, out = ctx.params.features, {}
    for dataset in datasets:
        (X_tr, y_tr), (X_te, y_te) = (load_split(ctx.input("prepare", DATA_FILE), dataset, s)
                                      for s in ("train", "test"))
        X_tr, X_te = (torch.as_tensor(to_model_space(a), device=ctx.device) for a in (X_tr, X_te))
        y_tr_t, y_te_t = (torch.as_tensor(y, device=ctx.device) for y in (y_tr, y_te))
        gen = torch.Generator(ctx.device).manual_seed(ctx.params.seed)
        net = train_classifier(X_tr, y_tr_t, p.hidden, p.feat_dim, p.steps, p.batch, p.lr, gen, N_CLASSES[dataset])
        save_tensors(ctx.output(classifier_file(dataset)), net.state_dict())
        out |= {f"{dataset}_test_accuracy": accuracy(net, X_te, y_te_t), f"{dataset}_chance": chance(y_te)}
    return out
