"""Stage ``prepare``: draw and split the MNIST and digits images and the photo crops, store them as Parquet, with
their provenance."""

from __future__ import annotations

import hashlib

import numpy as np

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .data import DATASETS, load_photos, load_raw, photo_crops, pool, subsample_split
from .params import Params

DATA_FILE = "data.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """data.parquet (dataset, split, label, pixels in [0, 1]) and provenance.json (package, version, sha256)."""
    d = ctx.params.data
    columns: dict[str, list] = {"dataset": [], "split": [], "label": [], "pixels": []}
    provenance = {}
    for name in DATASETS:
        if name == "photos":
            images, provenance[name] = load_photos()
            pixels, labels = photo_crops(images, d.photo_crops, d.crop_side, ctx.rng)
            provenance[name]["crops"] = f"{d.photo_crops} uniform {d.crop_side}x{d.crop_side} RGB crops"
        else:
            pixels, labels, provenance[name] = load_raw(name)
        if name == "mnist":
            pixels = pool(pixels, d.mnist_pool)
            provenance[name]["pooling"] = f"{d.mnist_pool}x{d.mnist_pool} average"
        idx, parts = subsample_split(len(labels), len(labels) if name == "photos" else d.max_rows, d.test_frac,
                                     ctx.rng)
        columns["dataset"] += [name] * len(idx)
        columns["split"] += parts.tolist()
        columns["label"] += labels[idx].tolist()
        columns["pixels"] += list(pixels[idx])
        provenance[name] |= {"rows_used": len(idx), "test_rows": int((parts == "test").sum())}
    columns["label"] = np.array(columns["label"], dtype=np.int64)
    write_table(ctx.output(DATA_FILE), columns)
    write_json(ctx.output("provenance.json"), provenance | {
        "seed": ctx.params.seed, "table_sha256": hashlib.sha256(ctx.output(DATA_FILE).read_bytes()).hexdigest()})
    return {"rows": float(len(columns["label"]))}
