"""Stage ``prepare``: the balanced trees, stored as Parquet (one row per node), with their provenance."""

from __future__ import annotations

import hashlib

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .tree import balanced_tree

TREES_FILE = "trees.parquet"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """trees.parquet (branching, depth, node, parent, level) and provenance.json (generator, sha256)."""
    t = ctx.params.trees
    trees = [balanced_tree(b, d) for b in t.branchings for d in t.depths]
    cols: dict[str, list[int]] = {k: [] for k in ("branching", "depth", "node", "parent", "level")}
    for tree in trees:
        cols["branching"] += [tree.branching] * tree.size
        cols["depth"] += [tree.depth] * tree.size
        cols["node"] += list(range(tree.size))
        cols["parent"] += tree.parent.tolist()
        cols["level"] += tree.level.tolist()
    write_table(ctx.output(TREES_FILE), cols)
    write_json(ctx.output("provenance.json"), {
        "source": "procedural (no download): complete b-ary trees, breadth-first numbering, parent(i) = (i-1)//b",
        "real_hierarchy": "none: WordNet (nltk, wn) is not shipped inside a PyPI package, it downloads at run time",
        "trees": [{"branching": tr.branching, "depth": tr.depth, "nodes": tr.size, "leaves": len(tr.leaves)}
                  for tr in trees],
        "sha256": hashlib.sha256(ctx.output(TREES_FILE).read_bytes()).hexdigest(),
    })
    return {"trees": float(len(trees)), "nodes": float(len(cols["node"]))}
