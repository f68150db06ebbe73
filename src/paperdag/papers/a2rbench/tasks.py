"""Tasks and their generator (the program generator that stands in for the paper's LLM generator).

A task is (demos (x_i, y_i)_{i<n}, query q, answer a) with y_i = p(x_i) and a = p(q) for a hidden rule p. Inputs of
a task use m symbols drawn from the alphabet (m uniform in [min_symbols, K]), so their information content varies.
Expansion reuses a rule over new input spaces: a larger grid, binary (m = 2) edge-case inputs, and adversarial
demos mirrored along the last axis (palindromic, so the demos cannot tell a rule from its composition with a
flip) with a generic query.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .primitives import Primitive
from .programs import inverse, run

VARIANTS = ("larger", "edge", "adversarial")


@dataclass(frozen=True)
class Task:
    """One benchmark item and the rule (``program``, claimed ``inverse_program``) that generated it."""

    task_id: str
    bench: int
    dim: int
    variant: str
    parent: str
    program: tuple[str, ...]
    inverse_program: tuple[str, ...]
    lossy: bool
    symbols: int
    demos_in: np.ndarray
    demos_out: np.ndarray
    query: np.ndarray
    answer: np.ndarray


def sample_inputs(rng: np.random.Generator, n: int, shape: Sequence[int], alphabet: int, m: int) -> np.ndarray:
    """n grids with cells uniform over a random m-subset of the alphabet."""
    subset = rng.choice(alphabet, size=m, replace=False)
    return rng.choice(subset, size=(n, *shape)).astype(np.int16)


def mirror(x: np.ndarray) -> np.ndarray:
    """Mirror-symmetric grids along the last axis: x'[..., j] = x[..., min(j, L - 1 - j)]."""
    length = x.shape[-1]
    return x[..., np.minimum(np.arange(length), length - 1 - np.arange(length))]


def sample_rule(rng: np.random.Generator, names: Sequence[str], prims: dict[str, Primitive], depth: int,
                probe: np.ndarray) -> tuple[str, ...]:
    """A depth-``depth`` composition with no step followed by its own inverse, that is not the identity on
    ``probe`` (rejection sampling)."""
    while True:
        prog = tuple(str(n) for n in rng.choice(names, size=depth))
        if any(prims[a].inverse == b for a, b in zip(prog, prog[1:])):
            continue
        out = run(prog, probe, prims)
        if out.shape != probe.shape or not np.array_equal(out, probe):
            return prog


def sample_lossy_rule(rng: np.random.Generator, names: Sequence[str], lossy: Sequence[str],
                      prims: dict[str, Primitive], max_depth: int, probe: np.ndarray) -> tuple[str, ...]:
    """An invertible prefix of depth 0..max_depth-1 followed by one lossy primitive."""
    depth = int(rng.integers(0, max_depth))
    prefix = sample_rule(rng, names, prims, depth, probe) if depth else ()
    return (*prefix, str(rng.choice(lossy)))


def make_task(rng: np.random.Generator, task_id: str, bench: int, dim: int, program: tuple[str, ...],
              prims: dict[str, Primitive], shape: Sequence[int], alphabet: int, m: int, n_demos: int,
              variant: str = "original", parent: str = "", mirrored: bool = False) -> Task:
    """Draw n_demos + 1 inputs (``mirrored``: the demos only, not the query), label them with the rule:
    y_i = p(x_i), answer = p(q)."""
    xs = sample_inputs(rng, n_demos + 1, shape, alphabet, m)
    if mirrored:
        xs[:n_demos] = mirror(xs[:n_demos])
    ys = run(program, xs, prims)
    return Task(task_id, bench, dim, variant, parent or task_id, program, tuple(inverse(program, prims)),
                any(prims[n].inverse is None for n in program), m, xs[:n_demos], ys[:n_demos], xs[n_demos],
                ys[n_demos])


def expansions(rng: np.random.Generator, task: Task, prims: dict[str, Primitive], larger: Sequence[int],
               alphabet: int, n_demos: int) -> list[Task]:
    """The rule of ``task`` over new input spaces: larger grids, binary inputs, mirrored (adversarial) inputs."""
    shape = task.query.shape
    specs = {"larger": (larger, task.symbols, False), "edge": (shape, 2, False),
             "adversarial": (shape, task.symbols, True)}
    return [make_task(rng, f"{task.task_id}/{v}", task.bench, task.dim, task.program, prims, specs[v][0], alphabet,
                      specs[v][1], n_demos, variant=v, parent=task.task_id, mirrored=specs[v][2]) for v in VARIANTS]


def remap(task: Task, perm: np.ndarray) -> Task:
    """P1: rename every symbol v -> perm[v] in demos, query and answer (the rule becomes perm . p . perm^-1)."""
    return replace(task, demos_in=perm[task.demos_in], demos_out=perm[task.demos_out], query=perm[task.query],
                   answer=perm[task.answer])


GRIDS = ("demos_in", "demos_out", "query", "answer")


def to_row(task: Task) -> dict[str, object]:
    """A flat record: grids as JSON nested lists, programs as lists of names."""
    row = {k: v for k, v in vars(task).items() if k not in GRIDS}
    row |= {k: json.dumps(getattr(task, k).tolist()) for k in GRIDS}
    row["program"], row["inverse_program"] = list(task.program), list(task.inverse_program)
    return row


def from_row(row: dict[str, object]) -> Task:
    """Inverse of ``to_row``."""
    grids = {k: np.array(json.loads(str(row[k])), dtype=np.int16) for k in GRIDS}
    fields = {k: row[k] for k in Task.__dataclass_fields__ if k not in GRIDS}
    fields["program"], fields["inverse_program"] = tuple(row["program"]), tuple(row["inverse_program"])
    return Task(**fields, **grids)
