"""Stage functions: prepare the corpus, train each optimizer (one stage each, so they run in parallel).

Run k of every optimizer uses seed ``seed + k``: the same initial weights and the same batch order across
optimizers. AdamW's learning rate is swept on the first seed (best final validation loss kept, which favours the
baseline slightly) and the other seeds are trained at that rate. Muon and NorMuon use ``muon_lr`` unswept.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from paperdag.common.corpus import (
    collect_stdlib_corpus,
    corpus_provenance,
    fixed_batches,
    load_split_tokens,
    write_corpus,
)
from paperdag.common.transformer import GPTConfig
from paperdag.io import write_json, write_table
from paperdag.papers.normuon.training import Batches, RunConfig, train_run
from paperdag.stage import StageContext

CORPUS_FILE = "corpus.parquet"


def prepare(ctx: StageContext) -> dict[str, float]:
    """Collect the stdlib corpus, split it by path hash, write it as Parquet with its provenance and sha256."""
    p = ctx.params
    columns = collect_stdlib_corpus(list(p.corpus_packages), p.corpus_max_bytes, p.val_fraction)
    write_corpus(ctx.out / CORPUS_FILE, columns)
    provenance = corpus_provenance(columns) | {"packages": list(p.corpus_packages), "files": columns["path"]}
    write_json(ctx.out / "provenance.json", provenance)
    n_val = sum(n for n, s in zip(columns["n_bytes"], columns["split"], strict=True) if s == "val")
    return {"n_documents": len(columns["path"]), "train_bytes": sum(columns["n_bytes"]) - n_val, "val_bytes": n_val}


def model_config(p: object) -> GPTConfig:
    """The shared tiny transformer's shape from the params (byte vocabulary)."""
    return GPTConfig(context=p.context, n_layer=p.n_layer, n_head=p.n_head, d_model=p.d_model)


def run_config(
    p: object, optimizer: str, lr: float, aux_lr: float, wd: float, seed: int, beta2: float = 0.95
) -> RunConfig:
    """The RunConfig of one run: the shared schedule and batch shape from the params, the optimizer's own rates."""
    return RunConfig(
        optimizer=optimizer, lr=lr, aux_lr=aux_lr, weight_decay=wd, steps=p.steps, warmup=p.warmup_steps,
        final_lr_frac=p.final_lr_frac, batch_size=p.batch_size, eval_every=p.eval_every, seed=seed, beta2=beta2,
    )  # fmt: skip


def _data(ctx: StageContext) -> tuple[np.ndarray, Batches]:
    """Training tokens and the fixed validation batches (drawn with ``seed``, identical for every optimizer)."""
    corpus = Path(ctx.inputs["prepare"]) / CORPUS_FILE
    train = load_split_tokens(corpus, "train")
    val = fixed_batches(load_split_tokens(corpus, "val"), ctx.params.eval_batches, ctx.params.batch_size,
                        ctx.params.context, seed=ctx.params.seed)  # fmt: skip
    return train, val


def _train(ctx: StageContext, name: str, configs: list[RunConfig]) -> list[dict]:
    """Train each config; each result holds its curves and its config."""
    train, val = _data(ctx)
    results = []
    for cfg in configs:
        tag = f"{name}/lr{cfg.lr:g}/seed{cfg.seed}"
        res = train_run(model_config(ctx.params), cfg, train, val, ctx.device,
                        lambda metric, v, s, tag=tag: ctx.log_metric(f"{tag}/{metric}", v, s))  # fmt: skip
        results.append(res | {"lr": cfg.lr, "seed": cfg.seed})
    return results


def _write(ctx: StageContext, name: str, results: list[dict], selected: list[bool]) -> dict[str, float]:
    """Write ``curves.parquet`` (one row per evaluation of every run) and ``runs.json``; summarise selected runs."""
    rows: dict[str, list] = {k: [] for k in ("optimizer", "lr", "seed", "selected", "step", "val_loss", "row_cv")}
    runs = []
    for res, sel in zip(results, selected, strict=True):
        n = len(res["step"])
        for key, value in (("optimizer", name), ("lr", res["lr"]), ("seed", res["seed"]), ("selected", sel)):
            rows[key] += [value] * n
        for key in ("step", "val_loss", "row_cv"):
            rows[key] += res[key]
        keys = ("lr", "seed", "state_bytes", "hidden_state_bytes")
        runs.append({k: res[k] for k in keys} | {"selected": sel, "final_val_loss": res["val_loss"][-1]})
    write_table(ctx.out / "curves.parquet", rows)
    write_json(ctx.out / "runs.json", runs)
    kept = [r for r in runs if r["selected"]]
    return {
        "lr": kept[0]["lr"],
        "final_val_loss_mean": sum(r["final_val_loss"] for r in kept) / len(kept),
        "hidden_state_bytes": kept[0]["hidden_state_bytes"],
    }


def train_adamw(ctx: StageContext) -> dict[str, float]:
    """Sweep AdamW's lr on the first seed, keep the best final validation loss, train the other seeds with it."""
    p = ctx.params
    sweep = _train(ctx, "adamw", [run_config(p, "adamw", lr, lr, p.adamw_weight_decay, p.seed) for lr in p.adamw_lrs])
    best = min(range(len(sweep)), key=lambda i: sweep[i]["val_loss"][-1])
    lr = sweep[best]["lr"]
    rest = _train(ctx, "adamw", [run_config(p, "adamw", lr, lr, p.adamw_weight_decay, p.seed + k)
                                 for k in range(1, p.n_seeds)])  # fmt: skip
    selected = [i == best for i in range(len(sweep))] + [True] * len(rest)
    return _write(ctx, "adamw", sweep + rest, selected)


def _train_muon_family(ctx: StageContext, name: str) -> dict[str, float]:
    p = ctx.params
    configs = [run_config(p, name, p.muon_lr, p.muon_aux_lr, p.muon_weight_decay, p.seed + k, p.normuon_beta2)
               for k in range(p.n_seeds)]  # fmt: skip
    return _write(ctx, name, _train(ctx, name, configs), [True] * len(configs))


def train_muon(ctx: StageContext) -> dict[str, float]:
    """Muon on the hidden matrices (AdamW on the rest), one run per seed."""
    return _train_muon_family(ctx, "muon")


def train_normuon(ctx: StageContext) -> dict[str, float]:
    """NorMuon on the hidden matrices (AdamW on the rest), one run per seed."""
    return _train_muon_family(ctx, "normuon")
