"""Stage ``embed_calibration_<geometry>``: the calibration seeds' embeddings at every depth but 2 (the embed stage
has them at D = 2), for the beta rule of every (b, D) (queries.calibrate_beta): the embed stage's own function on
the design whose evaluation seeds are the calibration seeds (cells (b, D, c), D != 2; no seed of the evaluation)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from paperdag.stage import StageContext

from .design import CALIBRATION_DEPTH
from .embed import embed
from .params import Params


def embed_calibration(ctx: StageContext[Params], geometry: str) -> dict[str, float]:
    """embeddings.parquet and quality.parquet of the cells (b, D, c), c a calibration seed, D != 2."""
    p = ctx.params
    trees = SimpleNamespace(branchings=p.trees.branchings, depths=[d for d in p.trees.depths if d != CALIBRATION_DEPTH])
    design = SimpleNamespace(seed=p.seed, seeds=p.calibration_seeds, calibration_seeds=[], trees=trees,
                             embedding=p.embedding)
    return embed(replace(ctx, params=design, _curves=ctx._curves), geometry)
