"""The experimental design: which (branching, depth, seed) cells exist and the seed of every random draw in them.

Evaluation cells are every (b, D, s) with s an evaluation seed; the calibration cells of branching b are
(b, 2, s) for s a calibration seed. A cell's draws come from SeedSequence([root, b, D, s, stream]), so both
geometries of a cell share their initial coordinates and negatives (stream 0), and all models share their query
noise (stream 1); the noisy queries of the beta rule on the calibration cells (b, D, c) have a stream of their own
(stream 2), so they are not the pilot's queries.
"""

from __future__ import annotations

import numpy as np
import torch

EMBED_STREAM, NOISE_STREAM, BETA_STREAM = 0, 1, 2
CALIBRATION_DEPTH = 2


def cells(branchings: list[int], depths: list[int], seeds: list[int], calibration_seeds: list[int],
          ) -> list[tuple[int, int, int]]:
    """[(b, 2, c) for each b and calibration seed c] + [(b, D, s) for each b, D, s]."""
    return [(b, CALIBRATION_DEPTH, c) for b in branchings for c in calibration_seeds] + \
        [(b, d, s) for b in branchings for d in depths for s in seeds]


def generator(root: int, cell: tuple[int, int, int], stream: int) -> torch.Generator:
    """A torch Generator seeded from SeedSequence([root, b, D, s, stream])."""
    seed = np.random.SeedSequence([root, *cell, stream]).generate_state(1, dtype=np.uint64)[0]
    return torch.Generator().manual_seed(int(seed) & (2**63 - 1))
