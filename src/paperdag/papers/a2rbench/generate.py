"""One benchmark: invertible and injected lossy rules per dimension, each as a task, plus the expansion variants."""

from __future__ import annotations

import numpy as np

from .params import DslParams, TaskParams
from .primitives import DIMS, names, registry
from .tasks import Task, expansions, make_task, sample_inputs, sample_lossy_rule, sample_rule


def generate_bench(rng: np.random.Generator, bench: int, dsl: DslParams, t: TaskParams) -> list[Task]:
    """For each dimension: ``rules_per_dim`` rules of depth ~ U{1..max_depth} and ``lossy_per_dim`` lossy ones
    (an invertible prefix then a lossy step), each as an original task with m ~ U{min_symbols..K} symbols, followed
    by its three expansions."""
    k, out = dsl.alphabet, []
    for dim in DIMS:
        prims, search = registry(dim, k), names(dim, k)
        lossy = names(dim, k, ("lossy",))
        probe = sample_inputs(rng, 1, t.shape(dim), k, k)
        rules = [sample_rule(rng, search, prims, int(rng.integers(1, dsl.max_depth + 1)), probe)
                 for _ in range(t.rules_per_dim)]
        rules += [sample_lossy_rule(rng, search, lossy, prims, dsl.max_depth, probe) for _ in range(t.lossy_per_dim)]
        for i, rule in enumerate(rules):
            m = int(rng.integers(t.min_symbols, k + 1))
            task = make_task(rng, f"b{bench}-{dim}d-{i:03d}", bench, dim, rule, prims, t.shape(dim), k, m, t.n_demos)
            out += [task, *expansions(rng, task, prims, t.shape(dim, larger=True), k, t.n_demos)]
    return out
