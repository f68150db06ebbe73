"""The runs of one optimizer, as a table: which runs are trained, which are kept, and how they are read back.

Run k of every optimizer uses seed ``seed + k``: the same initial weights and the same batch order across
optimizers. AdamW's peak lr is swept on the first seed (the best final validation loss is kept, which favours the
baseline slightly) and the other seeds are trained at that rate; Muon and NorMuon run every seed at ``muon.lr``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperdag.common.transformer import GPTConfig

from .analysis import Curves
from .params import AdamWParams, MuonParams, TrainParams
from .training import Batches, RunConfig, RunResult, adamw_config, muon_config, train_run

CURVE_COLUMNS = ("step", "val_loss", "row_cv")
RunLog = Callable[[str, float, int, str, dict[str, Any]], None]  # (metric, value, step, run label, run params)


@dataclass(frozen=True)
class Trainer:
    """What every run of a stage shares: the model shape, the data, the device and the curve logger."""

    model: GPTConfig
    tokens: np.ndarray
    val: Batches
    device: str
    log: RunLog

    def __call__(self, cfg: RunConfig) -> RunResult:
        """``train_run``, its curve points logged under the run label ``<optimizer> lr=<lr> seed=<seed>`` with
        shared metric names, so runs of different optimizers can be overlaid."""
        label = f"{cfg.optimizer} lr={cfg.lr:g} seed={cfg.seed}"
        params = {"optimizer": cfg.optimizer, "lr": cfg.lr, "seed": cfg.seed}
        return train_run(self.model, cfg, self.tokens, self.val, self.device,
                         lambda metric, v, s: self.log(metric, v, s, label, params))  # fmt: skip


def adamw_runs(trainer: Trainer, t: TrainParams, adamw: AdamWParams, seed: int) -> tuple[list[RunResult], list[bool]]:
    """The lr sweep on ``seed`` (best final validation loss selected), then seeds 1..n_seeds-1 at the best lr."""
    sweep = [trainer(adamw_config(t, adamw, lr, seed)) for lr in adamw.lrs]
    best = min(range(len(sweep)), key=lambda i: sweep[i].val_loss[-1])
    lr = sweep[best].config.lr
    rest = [trainer(adamw_config(t, adamw, lr, seed + k)) for k in range(1, t.n_seeds)]
    return sweep + rest, [i == best for i in range(len(sweep))] + [True] * len(rest)


def muon_runs(
    trainer: Trainer, optimizer: str, t: TrainParams, muon: MuonParams, seed: int
) -> tuple[list[RunResult], list[bool]]:
    """One run of ``optimizer`` ("muon" or "normuon") per seed, all selected."""
    runs = [trainer(muon_config(t, muon, optimizer, seed + k)) for k in range(t.n_seeds)]
    return runs, [True] * len(runs)


def curve_table(runs: list[RunResult], selected: list[bool]) -> dict[str, list]:
    """Columns optimizer, lr, seed, selected, step, val_loss, row_cv: one row per evaluation of every run."""
    rows: dict[str, list] = {k: [] for k in ("optimizer", "lr", "seed", "selected", *CURVE_COLUMNS)}
    for run, sel in zip(runs, selected, strict=True):
        n = len(run.step)
        for key, value in (("optimizer", run.config.optimizer), ("lr", run.config.lr), ("seed", run.config.seed),
                           ("selected", sel)):  # fmt: skip
            rows[key] += [value] * n
        for key in CURVE_COLUMNS:
            rows[key] += getattr(run, key)
    return rows


def run_records(runs: list[RunResult], selected: list[bool]) -> list[dict]:
    """One record per run: lr, seed, selected, final validation loss and optimizer state bytes."""
    return [{"lr": r.config.lr, "seed": r.config.seed, "state_bytes": r.state_bytes,
             "hidden_state_bytes": r.hidden_state_bytes, "selected": sel, "final_val_loss": r.val_loss[-1]}
            for r, sel in zip(runs, selected, strict=True)]  # fmt: skip


def selected_curves(table: dict[str, list]) -> Curves:
    """The selected runs of a ``curve_table``, by seed."""
    out: Curves = {}
    for i, sel in enumerate(table["selected"]):
        if sel:
            run = out.setdefault(table["seed"][i], {k: [] for k in CURVE_COLUMNS})
            for key in run:
                run[key].append(table[key][i])
    return out


def mean_curve_rows(curves: dict[str, Curves], metric: str) -> list[dict[str, float]]:
    """Rows ``{"step", <optimizer>: mean over seeds of ``metric``}``, one per evaluation step shared by all runs."""
    steps = sorted(set.intersection(*(set(run["step"]) for c in curves.values() for run in c.values())))
    rows = []
    for step in steps:
        row = {"step": step}
        for name, by_seed in curves.items():
            row[name] = float(np.mean([run[metric][run["step"].index(step)] for run in by_seed.values()]))
        rows.append(row)
    return rows


def selected_record(records: list[dict]) -> dict:
    """The first selected run's record (the chosen lr; state sizes are the same for every run)."""
    return next(r for r in records if r["selected"])


def run_metrics(records: dict[str, list[dict]], first_seed: int) -> dict[str, float]:
    """AdamW's chosen lr and its sweep (final validation loss per lr on the first seed), the hidden-matrix
    optimizer state bytes of every optimizer and NorMuon's relative to Muon's and AdamW's."""
    state = {n: selected_record(r)["hidden_state_bytes"] for n, r in records.items()}
    metrics = {"adamw_best_lr": selected_record(records["adamw"])["lr"]}
    metrics |= {f"adamw_lr_sweep_{r['lr']:g}": r["final_val_loss"] for r in records["adamw"] if r["seed"] == first_seed}
    metrics |= {f"{n}_hidden_state_bytes": b for n, b in state.items()}
    return metrics | {"normuon_state_over_muon": state["normuon"] / state["muon"],
                      "normuon_state_over_adamw": state["normuon"] / state["adamw"]}  # fmt: skip
