"""Procedural captioned scenes: "a <colour> <shape> <relation> a <colour> <shape>" on a 16 x 16 RGB canvas.

A caption is five tokens (c_A, s_A, rel, c_B, s_B) with c_A != c_B and rel in {left of, right of, above, below}.
The renderer places the first object of the canonical order (left for horizontal relations, top for vertical ones)
in one half of the canvas and the other in the opposite half, each with a random offset along the free axis.
Web-like imperfect pairs (``corrupt``), each applied independently with its own probability:
  mismatch: the caption names a wrong colour, shape or relation (the image is unchanged);
  blur:     x <- G_sigma * x (separable Gaussian, sigma = ``blur_sigma``);
  noise:    x <- clip(x + N(0, noise_std^2), 0, 1);
  dull:     x <- 0.5 + contrast (g + (x - g) * desaturate - 0.5), g the grey level (lower contrast and saturation).
Token 0 of every slot is the empty caption (condition dropout).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

SIZE = 16
COLOURS = {"red": (0.9, 0.1, 0.1), "green": (0.1, 0.8, 0.2), "blue": (0.15, 0.25, 0.95), "yellow": (0.95, 0.85, 0.1)}
SHAPES = ("circle", "square", "triangle")
RELATIONS = ("left of", "right of", "above", "below")
BACKGROUND = 0.08
VOCAB = (len(COLOURS), len(SHAPES), len(RELATIONS), len(COLOURS), len(SHAPES))  # tokens per slot, 0 excluded
CORRUPTIONS = ("mismatch", "blur", "noise", "dull")


@dataclass(frozen=True)
class Corruption:
    """Probabilities and strengths of the imperfect pairs."""

    p: dict[str, float]
    blur_sigma: float
    noise_std: float
    contrast: float
    desaturate: float


def sample_captions(rng: np.random.Generator, n: int) -> np.ndarray:
    """n captions as tokens (n x 5), each slot 1-based: colours distinct, shapes and relation uniform."""
    c_a = rng.integers(0, len(COLOURS), n)
    c_b = (c_a + rng.integers(1, len(COLOURS), n)) % len(COLOURS)
    cols = [c_a, rng.integers(0, len(SHAPES), n), rng.integers(0, len(RELATIONS), n), c_b,
            rng.integers(0, len(SHAPES), n)]
    return np.stack(cols, 1) + 1


def caption_text(tokens: np.ndarray) -> str:
    """The caption string of one token row."""
    names = list(COLOURS)
    c_a, s_a, rel, c_b, s_b = (int(t) - 1 for t in tokens)
    return f"a {names[c_a]} {SHAPES[s_a]} {RELATIONS[rel]} a {names[c_b]} {SHAPES[s_b]}"


def canonical(tokens: np.ndarray) -> np.ndarray:
    """(vertical, c_first, s_first, c_second, s_second), 0-based: the layout as read left-to-right / top-to-bottom."""
    t = np.asarray(tokens).reshape(-1, 5) - 1
    swap = (t[:, 2] == 1) | (t[:, 2] == 3)  # "right of" and "below" put object B first
    first = np.where(swap[:, None], t[:, [3, 4]], t[:, [0, 1]])
    second = np.where(swap[:, None], t[:, [0, 1]], t[:, [3, 4]])
    return np.stack([(t[:, 2] >= 2).astype(int), first[:, 0], first[:, 1], second[:, 0], second[:, 1]], 1)


def shape_mask(shape: int, row: int, col: int) -> np.ndarray:
    """Boolean SIZE x SIZE mask of a shape of extent 6 centred at (row + 0.5, col + 0.5)."""
    y, x = np.mgrid[0:SIZE, 0:SIZE] - np.array([row, col])[:, None, None] + 0.0
    if SHAPES[shape] == "circle":
        return (y - 0.5) ** 2 + (x - 0.5) ** 2 <= 3.2**2
    if SHAPES[shape] == "square":
        return (np.abs(y - 0.5) <= 2.6) & (np.abs(x - 0.5) <= 2.6)
    return (y >= -2.5) & (y <= 3.5) & (np.abs(x - 0.5) <= (y + 2.5) / 2 + 0.1)  # apex up


def render(tokens: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Clean images (n x 3 x SIZE x SIZE, in [0, 1]) of caption tokens, with random offsets on the free axis."""
    layout = canonical(tokens)
    palette = np.array(list(COLOURS.values()))
    out = np.full((len(layout), 3, SIZE, SIZE), BACKGROUND)
    for i, (vertical, c1, s1, c2, s2) in enumerate(layout):
        along = (4 + rng.integers(-1, 2), 11 + rng.integers(-1, 2))  # the two halves of the relation axis
        across = rng.integers(4, 12, 2)  # the free axis
        for k, (c, s) in enumerate(((c1, s1), (c2, s2))):
            row, col = (along[k], across[k]) if vertical else (across[k], along[k])
            out[i][:, shape_mask(s, row, col)] = palette[c][:, None]
    return out


def mismatch(tokens: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A wrong caption for each row: one of colour (slot A or B, kept distinct), shape or relation changed."""
    t = tokens.copy()
    for row, kind in zip(t, rng.integers(0, 3, len(t)), strict=True):
        if kind == 0:
            slot = rng.choice([0, 3])
            other = row[3 - slot]
            row[slot] = rng.choice([c for c in range(1, len(COLOURS) + 1) if c not in (row[slot], other)])
        elif kind == 1:
            slot = rng.choice([1, 4])
            row[slot] = rng.choice([s for s in range(1, len(SHAPES) + 1) if s != row[slot]])
        else:
            row[2] = ((row[2] - 1) ^ 1) + 1  # left <-> right, above <-> below
    return t


def corrupt(images: np.ndarray, tokens: np.ndarray, c: Corruption,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(images, captions, flags n x 4) with each corruption of CORRUPTIONS applied with probability c.p[kind]."""
    flags = np.stack([rng.random(len(images)) < c.p[k] for k in CORRUPTIONS], 1)
    x, t = images.copy(), tokens.copy()
    t[flags[:, 0]] = mismatch(tokens[flags[:, 0]], rng)
    x[flags[:, 1]] = ndimage.gaussian_filter(x[flags[:, 1]], sigma=(0, 0, c.blur_sigma, c.blur_sigma), mode="nearest")
    x[flags[:, 2]] = np.clip(x[flags[:, 2]] + c.noise_std * rng.standard_normal(x[flags[:, 2]].shape), 0.0, 1.0)
    grey = x[flags[:, 3]].mean(1, keepdims=True)
    dulled = grey + (x[flags[:, 3]] - grey) * c.desaturate
    x[flags[:, 3]] = 0.5 + c.contrast * (dulled - 0.5)
    return x, t, flags
