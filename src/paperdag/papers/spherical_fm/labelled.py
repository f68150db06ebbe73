"""Stage ``prepare_labels``: labels that are not brightness, for the observation's claim that the semantics live in
the direction x / ||x||.

The photo crops' labels (photograph x quadrant of the crop's centre, data.py) encode brightness: sky, roof, petals
and leaves differ in mean level, so the crops' class mean norms differ (7.3-11.9 in the model scale) and a norm-only
probe reads them. Here each label is one photograph of scikit-image's bundled RGB photographs (``skimage.data``, no
download), and each photograph is first normalised to one mean brightness and one contrast over all its pixels and
channels, q = clip(mean + contrast (p - mean(p)) / sd(p), 0, 1): no label is a brightness or contrast level of its
image. Crops are drawn as the photo crops (data.photo_crops: uniform positions, split evenly over the images), labelled
by image. Whether a crop's norm still names its image (through texture) is measured, not assumed: the norm-only probe
near chance is a precondition of the claim (claims.py). The generators never see these crops; the norm CV of the
observation stays on the raw photo crops.
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version

import numpy as np

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .data import photo_crops, subsample_split
from .observation import LABELLED  # the dataset name of these crops in labels.parquet (load_split)
from .params import Params
LABELS_FILE = "labels.parquet"


def load_scene(name: str) -> np.ndarray:
    """One of scikit-image's bundled RGB photographs as uint8 [H, W, 3] (``skimage.data``; the motorcycle is the left
    image of its stereo pair)."""
    from skimage import data

    if name == "motorcycle":
        return data.stereo_motorcycle()[0]
    return getattr(data, name)()


def normalise(image: np.ndarray, mean: float, contrast: float) -> np.ndarray:
    """clip(mean + contrast (p - mean(p)) / sd(p), 0, 1) with p = image / 255, the mean and sd over every pixel and
    channel (float64 [H, W, 3])."""
    p = image.astype(np.float64) / 255.0
    return np.clip(mean + contrast * (p - p.mean()) / p.std(), 0.0, 1.0)


def scene_crops(images: list[np.ndarray], n: int, side: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(pixels in [0, 1] float32 [n, side*side*3], label = image index [n]) of n crops of the normalised images
    (values in [0, 1]), drawn as data.photo_crops draws them (its label // 4 is the image)."""
    pixels, labels = photo_crops([255.0 * im for im in images], n, side, rng)
    return pixels, labels // 4


def prepare_labels(ctx: StageContext[Params]) -> dict[str, float]:
    """labels.parquet (dataset, split, label, pixels in [0, 1]: the normalised scikit-image crops, as many and split as
    the photo crops) and labels_provenance.json (package, version, sha256 of each raw image, achieved mean / sd)."""
    d, p = ctx.params.data, ctx.params.labels
    raw = [load_scene(name) for name in p.images]
    images = [normalise(im, p.mean, p.contrast) for im in raw]
    pixels, labels = scene_crops(images, d.photo_crops, d.crop_side, ctx.rng)
    idx, parts = subsample_split(len(labels), len(labels), d.test_frac, ctx.rng)
    write_table(ctx.output(LABELS_FILE), {"dataset": [LABELLED] * len(idx), "split": parts.tolist(),
                                         "label": labels[idx].astype(np.int64), "pixels": list(pixels[idx])})
    write_json(ctx.output("labels_provenance.json"), {
        "source": "skimage.data (bundled RGB photographs)", "package": "scikit-image", "version": version("scikit-image"),
        "images": {name: {"shape": list(im.shape), "sha256": hashlib.sha256(np.ascontiguousarray(im).tobytes()).hexdigest(),
                          "normalised_mean": round(float(q.mean()), 4), "normalised_sd": round(float(q.std()), 4),
                          "clipped_fraction": round(float(((q == 0) | (q == 1)).mean()), 4)}
                   for name, im, q in zip(p.images, raw, images, strict=True)},
        "crops": f"{d.photo_crops} uniform {d.crop_side}x{d.crop_side} RGB crops, label = image",
        "seed": ctx.params.seed})
    return {"rows": float(len(idx)), "classes": float(len(p.images))}
