"""Stage ``retrieve_<model>``: set the cell's beta by the storage rule, calibrate the model's query noise at depth
2, then retrieve noisy leaf queries in every evaluation cell (queries.py); one row per query."""

from __future__ import annotations

import torch

from paperdag.io import write_table
from paperdag.stage import StageContext

from .design import CALIBRATION_DEPTH, NOISE_STREAM, cells, generator
from .embed import EMBEDDINGS_FILE
from .params import Params
from .prepare import TREES_FILE
from .queries import (GEOMETRY, CalibrationSet, Retriever, accuracy, calibrate_noise, input_space, leaf_queries,
                      retrieve_all, storage_beta)
from .store import load_embeddings, load_tree
from .tree import ancestor_table, lca_level

RETRIEVALS_FILE = "retrievals.parquet"
CALIBRATION_FILE = "calibration.parquet"
CLEAN_FILE = "clean.parquet"


def retrieve(ctx: StageContext[Params], model: str) -> dict[str, float]:
    """calibration.parquet (branching, rho, accuracy), retrievals.parquet (cell, query leaf, retrieved leaf, LCA
    level, largest sqrt(c)||xi|| over the iterates) and clean.parquet (per cell, the accuracy of noise-free queries
    of every leaf: can the memory store them at all? and the cell's beta)."""
    p, r, c, dev = ctx.params, ctx.params.retrieval, ctx.params.embedding.curvature, ctx.device
    cfg = p.hamn if model == "hamn" else p.mhn  # one beta and step count for every Euclidean memory
    model_retriever = Retriever(model, c, **cfg.model_dump())
    embeddings = load_embeddings(ctx.input(f"embed_{GEOMETRY[model]}", EMBEDDINGS_FILE))
    trees = {(b, d): load_tree(ctx.input("prepare", TREES_FILE), b, d)
             for b in p.trees.branchings for d in p.trees.depths}
    rho, calib = {}, {"branching": [], "rho": [], "accuracy": []}
    held_out: dict[int, list[CalibrationSet]] = {b: [] for b in p.trees.branchings}
    clean: dict[str, list] = {k: [] for k in ("branching", "depth", "seed", "accuracy", "beta")}
    rows: dict[str, list] = {k: [] for k in ("branching", "depth", "seed", "leaf", "retrieved", "lca_level",
                                             "max_norm")}
    for cell in ctx.progress(cells(p.trees.branchings, p.trees.depths, p.seeds, p.calibration_seeds), desc=model):
        b, d, s = cell
        tree = trees[b, d]
        memories = input_space(model, embeddings[cell][torch.as_tensor(tree.leaves)], c).to(dev)
        retriever = storage_beta(model_retriever, memories, r.storage_weight)
        calibrating = s in p.calibration_seeds and d == CALIBRATION_DEPTH
        n_queries = r.calibration_queries if calibrating else max(r.queries_per_cell, len(tree.leaves))
        nodes, z = (t.to(dev) for t in leaf_queries(len(tree.leaves), n_queries, memories.shape[1],
                                                    generator(p.seed, cell, NOISE_STREAM)))
        if calibrating:  # the calibration cells of every b come first (design.cells)
            held_out[b].append((retriever, memories, nodes, z))
            if len(held_out[b]) == len(p.calibration_seeds):
                rho[b], acc = calibrate_noise(held_out[b], r.target_accuracy, r.rho_max, r.bisections, r.chunk)
                calib["branching"].append(b), calib["rho"].append(rho[b]), calib["accuracy"].append(acc)
            continue
        retrieved, max_norm, nodes = (t.cpu() for t in
                                      retrieve_all(retriever, memories, nodes, rho[b], z, r.chunk) + (nodes,))
        stored = torch.arange(len(tree.leaves), device=dev)
        for key, value in zip(("branching", "depth", "seed", "accuracy", "beta"), (*cell, accuracy(
                retriever, memories, stored, 0.0, torch.zeros_like(memories), r.chunk), retriever.beta), strict=True):
            clean[key].append(value)
        anc = ancestor_table(tree)
        for key, value in zip(("branching", "depth", "seed"), cell, strict=True):
            rows[key] += [value] * len(nodes)
        rows["leaf"] += nodes.tolist()
        rows["retrieved"] += retrieved.tolist()
        rows["lca_level"] += lca_level(anc, tree.leaves[nodes.numpy()], tree.leaves[retrieved.numpy()]).tolist()
        rows["max_norm"] += max_norm.tolist()
    write_table(ctx.output(CALIBRATION_FILE), calib)
    write_table(ctx.output(RETRIEVALS_FILE), rows)
    write_table(ctx.output(CLEAN_FILE), clean)
    return {f"rho_b{b}": v for b, v in rho.items()}
