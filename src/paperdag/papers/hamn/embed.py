"""Stage ``embed_<geometry>``: Poincare or Euclidean embeddings of every tree cell (embedding.py), with their MAP."""

from __future__ import annotations

from paperdag.io import write_table
from paperdag.stage import StageContext

from .design import EMBED_STREAM, cells, generator
from .embedding import average_distortion, reconstruction_map, train_embedding, tree_metric_map
from .params import Params
from .prepare import TREES_FILE
from .store import load_tree

EMBEDDINGS_FILE = "embeddings.parquet"
QUALITY_FILE = "quality.parquet"
LOG_EVERY = 25  # epochs between logged loss points


def embed(ctx: StageContext[Params], geometry: str) -> dict[str, float]:
    """embeddings.parquet (branching, depth, seed, node, vector) and quality.parquet (final loss; MAP trained,
    untrained and of the tree metric; average distortion)."""
    p, e = ctx.params, ctx.params.embedding
    emb_rows: dict[str, list] = {k: [] for k in ("branching", "depth", "seed", "node", "vector")}
    quality: dict[str, list] = {k: [] for k in ("branching", "depth", "seed", "loss", "map", "map_untrained",
                                                "map_tree_metric", "distortion")}
    for cell in ctx.progress(cells(p.trees.branchings, p.trees.depths, p.seeds, p.calibration_seeds), desc=geometry):
        tree = load_tree(ctx.input("prepare", TREES_FILE), cell[0], cell[1])
        gen = generator(p.seed, cell, EMBED_STREAM)
        untrained, _ = train_embedding(tree, geometry, e.dim, e.curvature, 0, e.lr, e.negatives, e.init, gen)
        gen = generator(p.seed, cell, EMBED_STREAM)
        run = "b{}_D{}_s{}".format(*cell)

        def log(epoch: int, loss: float, run: str = run) -> None:
            if epoch % LOG_EVERY == 0:
                ctx.log_metric("loss", loss, epoch, run=run)

        emb, loss = train_embedding(tree, geometry, e.dim, e.curvature, e.epochs, e.lr, e.negatives, e.init, gen,
                                    e.burn_in, log)
        for key, value in zip(("branching", "depth", "seed"), cell, strict=True):
            emb_rows[key] += [value] * tree.size
            quality[key].append(value)
        emb_rows["node"] += list(range(tree.size))
        emb_rows["vector"] += emb.tolist()
        quality["loss"].append(loss)
        quality["map"].append(reconstruction_map(tree, emb, geometry, e.curvature))
        quality["map_untrained"].append(reconstruction_map(tree, untrained, geometry, e.curvature))
        quality["map_tree_metric"].append(tree_metric_map(tree))
        quality["distortion"].append(average_distortion(tree, emb, geometry, e.curvature))
    write_table(ctx.output(EMBEDDINGS_FILE), emb_rows)
    write_table(ctx.output(QUALITY_FILE), quality)
    return {"min_map": min(quality["map"]), "max_untrained_map": max(quality["map_untrained"])}
