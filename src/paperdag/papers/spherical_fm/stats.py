"""Across-seed summaries: per group, each value's mean and its Student-t interval (paperdag.common.stats.mean_ci)."""

from __future__ import annotations

import numpy as np

from paperdag.common.stats import Interval, mean_ci


def summarize(rows: list[dict], keys: tuple[str, ...], values: tuple[str, ...]) -> dict[tuple, dict[str, Interval]]:
    """Group ``rows`` by the ``keys`` columns and give each ``values`` column's mean_ci over the group (the seeds)."""
    return {g: {v: mean_ci(np.array([r[v] for r in members])) for v in values}
            for g, members in group_rows(rows, keys).items()}


def per_seed(rows: list[dict], keys: tuple[str, ...], value: str) -> dict[tuple, np.ndarray]:
    """Group ``rows`` by the ``keys`` columns: the ``value`` column of each group ordered by its ``seed`` column (so
    two groups' values pair by seed)."""
    return {g: np.array([r[value] for r in sorted(members, key=lambda r: r["seed"])])
            for g, members in group_rows(rows, keys).items()}


def group_rows(rows: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    """The rows by their tuple of ``keys`` values, in first-seen order."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    return groups
