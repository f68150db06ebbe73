"""Stage ``retrieve_<model>``: on the calibration seeds (queries.py), the noise-free beta rule in every (b, D), the
query noise at depth 2 (on the noise's ML decoder), then the beta the memory runs at in every (b, D) (the noisy
rule, from the noise-free rule's beta up); then decode noisy leaf queries in every evaluation cell by the memory,
its nearest-neighbour decoder and its noise's ML decoder; one row per query.

A cell's queries: ``queries_per_cell`` at the calibrated rho (level 1; the accuracies of the claims), then
``tolerance_queries`` at each rho level * rho of ``tolerance_levels`` (with level 1, the psychometric curve whose
50% point is the memory's noise tolerance, analysis.tolerance)."""

from __future__ import annotations

from statistics import NormalDist

import torch

from paperdag.io import write_table
from paperdag.stage import StageContext

from .design import BETA_STREAM, CALIBRATION_DEPTH, NOISE_STREAM, cells, generator
from .embed import EMBEDDINGS_FILE
from .noise import noisy_queries
from .params import Params
from .prepare import TREES_FILE
from .queries import (GEOMETRY, CalibrationSet, Retriever, calibrate_beta, calibrate_beta_noisy,
                      calibrate_noise_on_decoder, clean_accuracy, decode_all, input_space, leaf_queries, nearest_leaf,
                      probe_leaves)
from .store import load_embeddings, load_tree
from .tree import ancestor_table, lca_level

RETRIEVALS_FILE = "retrievals.parquet"
CALIBRATION_FILE = "calibration.parquet"
CLEAN_FILE = "clean.parquet"
BETA_FILE = "beta.parquet"
PILOT_FILE = "pilot.parquet"


def query_levels(n_main: int, levels: list[float], per_level: int) -> torch.Tensor:
    """The rho multiplier of each query of a cell: n_main at 1, then per_level at each of ``levels``."""
    return torch.tensor([1.0] * n_main + [lvl for lvl in levels for _ in range(per_level)], dtype=torch.float64)


def wrapped_floor(sets: list[CalibrationSet], rho: float) -> float:
    """The hyperbolic nearest-leaf accuracy of wrapped-normal queries at noise ``rho`` (rho_max) pooled over the
    calibration cells: the floor below which no rho takes a wrapped normal (noise.py)."""
    hits = [nearest_leaf("hamn", noisy_queries(m, n, rho, z, "wrapped", r.curvature), m, r.curvature) == n
            for r, m, n, z in sets]
    return float(torch.cat(hits).double().mean())


def retrieve(ctx: StageContext[Params], model: str) -> dict[str, float]:
    """beta.parquet (b, D, beta the memory runs at (the noisy rule), beta_clean (the noise-free rule's), its pooled
    noise-free calibration accuracy, and the noisy rule's pooled memory and decoder accuracies), calibration.parquet
    (branching, rho, the ML decoder's pooled accuracy, and for HAMN the wrapped-normal floor), retrievals.parquet (cell, query leaf, rho level, retrieved / nearest / ML leaf, LCA level of the
    retrieved leaf, largest sqrt(c)||xi|| over the iterates), clean.parquet (per cell, the noise-free accuracy of
    every stored leaf, and the beta) and pilot.parquet (the rows of retrievals.parquet for the cells of the
    calibration seeds: the pilot whose spreads size the sample-size plans, never a judged interval)."""
    p, r, c, dev = ctx.params, ctx.params.retrieval, ctx.params.embedding.curvature, ctx.device
    cfg = (p.hamn if model == "hamn" else p.mhn).model_dump()
    noise = r.hamn_noise if model == "hamn" else "euclidean"
    base = Retriever(model, noise, c, beta=1.0, **cfg)  # beta set per (b, D) below
    g = GEOMETRY[model]
    embeddings = load_embeddings(ctx.input(f"embed_{g}", EMBEDDINGS_FILE))
    embeddings |= load_embeddings(ctx.input(f"embed_calibration_{g}", EMBEDDINGS_FILE))
    trees = {(b, d): load_tree(ctx.input("prepare", TREES_FILE), b, d)
             for b in p.trees.branchings for d in p.trees.depths}

    def memories_of(cell: tuple[int, int, int]) -> torch.Tensor:
        return input_space(model, embeddings[cell][torch.as_tensor(trees[cell[:2]].leaves)]).to(dev)

    clean_rule, clean_acc = {}, {}
    for b, d in ctx.progress(list(trees), desc=f"{model} beta"):
        probes = probe_leaves(len(trees[b, d].leaves), r.beta_queries).to(dev)
        clean_rule[b, d], clean_acc[b, d] = calibrate_beta(
            base, [(memories_of((b, d, s)), probes) for s in p.calibration_seeds], r.clean_target, r.beta_min,
            r.beta_max, r.beta_bisections, r.chunk)
    rho, calib = {}, {"branching": [], "rho": [], "accuracy": [], "wrapped_floor": []}
    for b in p.trees.branchings:
        sets: list[CalibrationSet] = []
        for s in p.calibration_seeds:
            cell = (b, CALIBRATION_DEPTH, s)
            nodes, z = (t.to(dev) for t in leaf_queries(len(trees[cell[:2]].leaves), r.calibration_queries,
                                                        p.embedding.dim, generator(p.seed, cell, NOISE_STREAM)))
            sets.append((clean_rule[b, CALIBRATION_DEPTH], memories_of(cell), nodes, z))
        rho[b], acc = calibrate_noise_on_decoder(sets, r.target_accuracy, r.rho_max, r.bisections, r.chunk)
        calib["branching"].append(b), calib["rho"].append(rho[b]), calib["accuracy"].append(acc)
        calib["wrapped_floor"].append(wrapped_floor(sets, r.rho_max) if model == "hamn" else float("nan"))
    retriever, betas = {}, {k: [] for k in ("branching", "depth", "beta", "beta_clean", "clean_accuracy",
                                            "noisy_accuracy", "noisy_decoder")}
    for b, d in ctx.progress(list(trees), desc=f"{model} noisy beta"):
        noisy = []
        for s in p.calibration_seeds:
            cell = (b, d, s)
            nodes, z = (t.to(dev) for t in leaf_queries(len(trees[b, d].leaves), r.beta_queries, p.embedding.dim,
                                                        generator(p.seed, cell, BETA_STREAM)))
            noisy.append((memories_of(cell), nodes, z))
        retriever[b, d], rule = calibrate_beta_noisy(clean_rule[b, d], noisy, rho[b], r.noisy_rel_gap, r.beta_max,
                                                     r.noisy_bisections, r.chunk,
                                                     NormalDist().inv_cdf(r.noisy_confidence))
        for key, value in zip(betas, (b, d, retriever[b, d].beta, clean_rule[b, d].beta, clean_acc[b, d],
                                      rule.accuracy, rule.decoder), strict=True):
            betas[key].append(value)
    def decode_cells(seeds: list[int], desc: str) -> tuple[dict[str, list], dict[str, list]]:
        """Every cell (b, D, seed) of ``seeds``: the noisy queries' rows and the noise-free accuracy per cell."""
        clean: dict[str, list] = {k: [] for k in ("branching", "depth", "seed", "accuracy", "beta")}
        rows: dict[str, list] = {k: [] for k in ("branching", "depth", "seed", "leaf", "level", "retrieved",
                                                 "nearest", "ml", "lca_level", "max_norm")}
        for cell in ctx.progress(cells(p.trees.branchings, p.trees.depths, seeds, []), desc=desc):
            b, d, _ = cell
            tree, memories = trees[b, d], memories_of(cell)
            levels = query_levels(max(r.queries_per_cell, len(tree.leaves)), r.tolerance_levels, r.tolerance_queries)
            nodes, z = (t.to(dev) for t in leaf_queries(len(tree.leaves), len(levels), memories.shape[1],
                                                        generator(p.seed, cell, NOISE_STREAM)))
            out = decode_all(retriever[b, d], memories, nodes, levels.to(dev) * rho[b], z, r.chunk)
            stored = torch.arange(len(tree.leaves), device=dev)
            for key, value in zip(clean, (*cell, clean_accuracy(retriever[b, d], memories, stored, r.chunk),
                                          retriever[b, d].beta), strict=True):
                clean[key].append(value)
            nodes, retrieved = nodes.cpu().numpy(), out.retrieved.cpu().numpy()
            for key, value in zip(("branching", "depth", "seed"), cell, strict=True):
                rows[key] += [value] * len(nodes)
            rows["leaf"] += nodes.tolist()
            rows["level"] += levels.tolist()
            rows["retrieved"] += retrieved.tolist()
            rows["nearest"] += out.nearest.cpu().tolist()
            rows["ml"] += out.ml.cpu().tolist()
            rows["lca_level"] += lca_level(ancestor_table(tree), tree.leaves[nodes], tree.leaves[retrieved]).tolist()
            rows["max_norm"] += out.max_norm.cpu().tolist()
        return rows, clean

    rows, clean = decode_cells(p.seeds, model)
    pilot, _ = decode_cells(p.calibration_seeds, f"{model} pilot")
    write_table(ctx.output(BETA_FILE), betas)
    write_table(ctx.output(CALIBRATION_FILE), calib)
    write_table(ctx.output(RETRIEVALS_FILE), rows)
    write_table(ctx.output(CLEAN_FILE), clean)
    write_table(ctx.output(PILOT_FILE), pilot)
    return {f"rho_b{b}": v for b, v in rho.items()}
