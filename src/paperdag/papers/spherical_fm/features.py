"""Stage ``train_features``: the MNIST digit classifier whose penultimate layer is the metric feature space."""

from __future__ import annotations

import torch

from paperdag.io import save_tensors
from paperdag.stage import StageContext

from .data import load_split, to_model_space
from .observation import chance
from .params import Params
from .prepare import DATA_FILE
from .training import accuracy, train_classifier

CLASSIFIER_FILE = "classifier.safetensors"


def train_features(ctx: StageContext[Params]) -> dict[str, float]:
    """classifier.safetensors; returns its test accuracy beside chance (the sanity check of the metric space)."""
    p = ctx.params.features
    (X_tr, y_tr), (X_te, y_te) = (load_split(ctx.input("prepare", DATA_FILE), "mnist", s) for s in ("train", "test"))
    X_tr, X_te = (torch.as_tensor(to_model_space(a), device=ctx.device) for a in (X_tr, X_te))
    y_tr_t, y_te_t = (torch.as_tensor(y, device=ctx.device) for y in (y_tr, y_te))
    gen = torch.Generator(ctx.device).manual_seed(ctx.params.seed)
    net = train_classifier(X_tr, y_tr_t, p.hidden, p.feat_dim, p.steps, p.batch, p.lr, gen)
    save_tensors(ctx.output(CLASSIFIER_FILE), net.state_dict())
    return {"test_accuracy": accuracy(net, X_te, y_te_t), "chance": chance(y_te)}
