"""The DSL: primitives over 1D strings, 2D grids and 3D grids of symbols 0..K-1.

Every function acts on the trailing ``dim`` axes of an integer array (numpy, or a torch tensor on the GPU path:
arrays.py), so one call transforms a whole stack (programs x examples x grid). A structural primitive permutes
positions, y[i] = x[P(i)]; a symbolic one applies an alphabet bijection cellwise, y[i] = s(x[i]) (Caesar
s(v) = v +- 1 mod K, Atbash s(v) = K - 1 - v). Both are
bijections and each names its inverse (P^-1, s^-1) inside the DSL. Lossy primitives (sort, running max, merge,
fold, smear) are not injective; their ``inverse`` is None: the claimed inverse a hallucinating generator would
write is the identity, which the cycle check must catch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np

from .arrays import Array, cummax_last, flip, permute_last, replace_value, roll, rot90, smear_first, sort_last, take

Kind = Literal["structural", "symbolic", "lossy"]
DIMS = (1, 2, 3)


@dataclass(frozen=True)
class Primitive:
    """A named map on the trailing grid axes, its inverse's name (None: lossy, claimed identity) and its kind."""

    name: str
    fn: Callable[[Array], Array]
    inverse: str | None
    kind: Kind


def weave_order(n: int) -> np.ndarray:
    """Perfect-shuffle positions: y[2i] = x[i], y[2i + 1] = x[ceil(n/2) + i]."""
    order = np.empty(n, dtype=np.int64)
    first = (n + 1) // 2
    order[0::2], order[1::2] = np.arange(first), np.arange(first, n)
    return order


def swap_order(n: int) -> np.ndarray:
    """Block swap: the first and last floor(n/2) positions trade places, a middle cell stays (self-inverse)."""
    h = n // 2
    return np.r_[np.arange(n - h, n), np.arange(h, n - h), np.arange(h)]


def _take(order: Callable[[int], np.ndarray], axis: int, invert: bool = False) -> Callable[[Array], Array]:
    def fn(x: Array) -> Array:
        o = order(x.shape[axis])
        return take(x, np.argsort(o) if invert else o, axis)
    return fn


def _structural(dim: int) -> list[tuple[str, Callable[[Array], Array], str]]:
    fl = {a: (lambda x, a=a: flip(x, a)) for a in (-3, -2, -1)}
    rot = {k: (lambda x, k=k: rot90(x, k)) for k in (1, -1)}
    rl = {(a, s): (lambda x, a=a, s=s: roll(x, s, a)) for a in (-3, -2, -1) for s in (1, -1)}

    def axes(perm: tuple[int, ...]) -> Callable[[Array], Array]:
        return lambda x: permute_last(x, perm)
    if dim == 1:
        return [("rev", fl[-1], "rev"), ("shl", rl[-1, -1], "shr"), ("shr", rl[-1, 1], "shl"),
                ("weave", _take(weave_order, -1), "unweave"), ("unweave", _take(weave_order, -1, True), "weave"),
                ("swap", _take(swap_order, -1), "swap")]
    if dim == 2:
        return [("transpose", axes((1, 0)), "transpose"), ("flip_lr", fl[-1], "flip_lr"),
                ("flip_ud", fl[-2], "flip_ud"), ("rot90", rot[1], "rot270"), ("rot270", rot[-1], "rot90"),
                ("roll_dn", rl[-2, 1], "roll_up"), ("roll_up", rl[-2, -1], "roll_dn"),
                ("roll_rt", rl[-1, 1], "roll_lt"), ("roll_lt", rl[-1, -1], "roll_rt"),
                ("swap", _take(swap_order, -2), "swap")]
    return [("p021", axes((0, 2, 1)), "p021"), ("p210", axes((2, 1, 0)), "p210"), ("p102", axes((1, 0, 2)), "p102"),
            ("p120", axes((1, 2, 0)), "p201"), ("p201", axes((2, 0, 1)), "p120"), ("flip0", fl[-3], "flip0"),
            ("flip1", fl[-2], "flip1"), ("flip2", fl[-1], "flip2"), ("rot90", rot[1], "rot270"),
            ("rot270", rot[-1], "rot90"), ("roll0", rl[-3, 1], "roll0_inv"), ("roll0_inv", rl[-3, -1], "roll0")]


def _symbolic(k: int) -> list[tuple[str, Callable[[Array], Array], str]]:
    return [("caesar_up", lambda x: (x + 1) % k, "caesar_dn"), ("caesar_dn", lambda x: (x - 1) % k, "caesar_up"),
            ("atbash", lambda x: (k - 1) - x, "atbash")]


def _lossy(k: int) -> list[tuple[str, Callable[[Array], Array]]]:
    return [("sort", sort_last), ("cummax", cummax_last), ("merge", lambda x: replace_value(x, k - 1, 0)),
            ("fold", lambda x: x % (k // 2)), ("smear", smear_first)]


@cache
def registry(dim: int, alphabet: int) -> dict[str, Primitive]:
    """Every primitive of dimension ``dim`` over ``alphabet`` symbols, by name, in a fixed order: structural,
    symbolic (the search DSL), then lossy (only ever injected by the generator, never searched)."""
    prims = [Primitive(n, f, inv, "structural") for n, f, inv in _structural(dim)]
    prims += [Primitive(n, f, inv, "symbolic") for n, f, inv in _symbolic(alphabet)]
    prims += [Primitive(n, f, None, "lossy") for n, f in _lossy(alphabet)]
    return {p.name: p for p in prims}


def names(dim: int, alphabet: int, kinds: tuple[Kind, ...] = ("structural", "symbolic")) -> list[str]:
    """Names of the primitives of the given kinds, in registry order (the enumeration order of the search)."""
    return [n for n, p in registry(dim, alphabet).items() if p.kind in kinds]
