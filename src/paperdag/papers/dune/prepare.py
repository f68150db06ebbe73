"""Stage ``prepare``: the coloured-digit train and test split (safetensors), with its provenance."""

from __future__ import annotations

import hashlib

import torch

from paperdag.io import save_tensors, write_json
from paperdag.stage import StageContext

from .data import colourise, load_mnist, split
from .params import Params

DATA_FILE = "data.safetensors"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """data.safetensors (x_train, y_train, x_test, y_test) and provenance.json (source, version, sha256)."""
    d = ctx.params.data
    digits, labels, info = load_mnist()
    x = colourise(digits, d.contrast, d.chroma, ctx.rng)
    train, test = split(len(x), d.n_train, d.n_test, ctx.rng)
    y = torch.as_tensor(labels)
    save_tensors(ctx.output(DATA_FILE), {"x_train": x[train], "y_train": y[train], "x_test": x[test],
                                         "y_test": y[test]})
    write_json(ctx.output("provenance.json"), info | {
        "transform": f"2x2 average pool to 14x14; x = clip((1 - d) bg + d fg), l ~ U[0.2, 0.8 - {d.contrast}], "
                     f"bg = l + U[-{d.chroma}, {d.chroma}]^3, fg = l + {d.contrast} + U[-{d.chroma}, {d.chroma}]^3",
        "seed": ctx.params.seed, "sha256": hashlib.sha256(ctx.output(DATA_FILE).read_bytes()).hexdigest()})
    return {"train": float(len(train)), "test": float(len(test))}
