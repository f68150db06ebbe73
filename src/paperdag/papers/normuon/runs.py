"""The runs of one optimizer, as a table: which runs are trained, which are judged, and how they are read back.

Every optimizer's peak lr is chosen the same way before its judged seeds run (params.yaml ``tuning``): a grid of its
published lr times ``tuning.lr_factors``, one pilot run per grid point on ``tuning.pilot_seed`` (outside the judged
seeds), trained on the training documents outside a tuning slice and scored on windows of that slice, never on the
validation windows that are judged. ``choose_lr`` keeps the lowest final tuning loss; a winning end of the grid grows
it by one step on that side, at most ``tuning.max_extensions`` times. Judged run k then uses seed ``seed + k`` at the
chosen lr on every training document: the same initial weights and batch order across optimizers. Pilot runs are
recorded (not selected) and never enter a judged interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from paperdag.common.corpus import DOC_SEPARATOR, is_validation
from paperdag.common.tokenizer import encode
from paperdag.common.transformer import GPTConfig
from paperdag.io import read_table

from .analysis import Curves
from .params import TrainParams, TuningParams
from .training import Batches, RunConfig, RunResult, train_run

CURVE_COLUMNS = ("step", "val_loss", "row_cv")
TUNE_SALT = "tune/"  # the tuning slice's hash is of the salted path: independent of the validation split's
RunLog = Callable[[str, float, int, str, dict[str, Any]], None]  # (metric, value, step, run label, run params)
Config = Callable[[float, int], RunConfig]  # (peak lr, seed) -> one run of an optimizer


@dataclass(frozen=True)
class Trainer:
    """What every run of a stage's role shares: the model shape, the data it trains on and is scored on, the device,
    the curve logger and the role ("pilot" or "judged")."""

    model: GPTConfig
    tokens: np.ndarray
    val: Batches
    device: str
    log: RunLog
    role: str

    def __call__(self, cfg: RunConfig) -> RunResult:
        """``train_run``, its curve points logged under the run label ``<role> <optimizer> lr=<lr> seed=<seed>`` with
        shared metric names, so runs of different optimizers can be overlaid."""
        label = f"{self.role} {cfg.optimizer} lr={cfg.lr:g} seed={cfg.seed}"
        params = {"optimizer": cfg.optimizer, "lr": cfg.lr, "seed": cfg.seed, "role": self.role}
        return train_run(self.model, cfg, self.tokens, self.val, self.device,
                         lambda metric, v, s: self.log(metric, v, s, label, params))  # fmt: skip


def tuning_split(corpus: Path, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """(fit, tune): the training documents outside and inside the tuning slice (``is_validation`` of the salted
    path at ``fraction``), each joined as ``load_split_tokens`` joins a split. Validation documents are in neither."""
    table = read_table(corpus).to_pydict()
    docs = [(p, t) for p, t, s in zip(table["path"], table["text"], table["split"], strict=True) if s == "train"]
    tune = [t for p, t in docs if is_validation(TUNE_SALT + p, fraction)]
    fit = [t for p, t in docs if not is_validation(TUNE_SALT + p, fraction)]
    if not tune or not fit:
        raise ValueError(f"{corpus}: the tuning slice at fraction {fraction} leaves {len(fit)} fit and {len(tune)} "
                         "tuning documents; both must be non-empty")  # fmt: skip
    return encode(DOC_SEPARATOR.join(fit)), encode(DOC_SEPARATOR.join(tune))


def _lr(x: float) -> float:
    """A grid rate rounded to 6 significant digits (0.02 * 0.5 prints as 0.01)."""
    return float(f"{x:.6g}")


def lr_grid(centre: float, factors: tuple[float, ...]) -> list[float]:
    """``centre`` times each factor, ascending."""
    return sorted(_lr(centre * f) for f in factors)


def choose_lr(final: dict[float, float]) -> float:
    """The lr of the lowest final tuning loss; ties go to the smaller lr; a non-finite loss (a diverged run) counts as
    +inf."""
    return min(sorted(final), key=lambda lr: final[lr] if math.isfinite(final[lr]) else math.inf)


def next_grid_point(lrs: list[float], chosen: float) -> float | None:
    """When ``chosen`` is an end of the grid ``lrs``, one more point beyond it (the ratio of the two outermost points on
    that side); None when it is inside."""
    lrs = sorted(lrs)
    if chosen == lrs[0]:
        return _lr(lrs[0] ** 2 / lrs[1])
    if chosen == lrs[-1]:
        return _lr(lrs[-1] ** 2 / lrs[-2])
    return None


def tune_lr(pilot: Trainer, config: Config, centre: float, tuning: TuningParams) -> tuple[list[RunResult], float]:
    """The pilot runs of ``lr_grid(centre, tuning.lr_factors)`` on ``tuning.pilot_seed`` (grown at a winning end up to
    ``tuning.max_extensions`` times), ascending by lr, and the chosen lr (``choose_lr`` of their final losses)."""
    runs = {lr: pilot(config(lr, tuning.pilot_seed)) for lr in lr_grid(centre, tuning.lr_factors)}
    for _ in range(tuning.max_extensions):
        more = next_grid_point(list(runs), choose_lr({lr: r.val_loss[-1] for lr, r in runs.items()}))
        if more is None:
            break
        runs[more] = pilot(config(more, tuning.pilot_seed))
    return [runs[lr] for lr in sorted(runs)], choose_lr({lr: r.val_loss[-1] for lr, r in runs.items()})


def optimizer_runs(pilot: Trainer, judged: Trainer, config: Config, centre: float, tuning: TuningParams,
                   t: TrainParams, seed: int) -> tuple[list[RunResult], list[bool]]:  # fmt: skip
    """``tune_lr``'s pilot runs (not selected), then seeds seed..seed+n_seeds-1 at the chosen lr (selected)."""
    grid, lr = tune_lr(pilot, config, centre, tuning)
    runs = [judged(config(lr, seed + k)) for k in range(t.n_seeds)]
    return grid + runs, [False] * len(grid) + [True] * len(runs)


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
    """One record per run: lr, seed, selected (a judged run) or not (a pilot run), role, final loss (on the
    validation windows for a judged run, on the tuning slice for a pilot run) and optimizer state bytes."""
    return [{"lr": r.config.lr, "seed": r.config.seed, "state_bytes": r.state_bytes,
             "hidden_state_bytes": r.hidden_state_bytes, "selected": sel, "role": "judged" if sel else "pilot",
             "final_val_loss": r.val_loss[-1]}
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


def run_metrics(records: dict[str, list[dict]]) -> dict[str, float]:
    """Every optimizer's chosen lr, whether it is still an end of its (grown) grid, its pilot's final tuning loss per
    grid lr, the hidden-matrix optimizer state bytes of every optimizer and NorMuon's relative to Muon's and AdamW's."""
    state = {n: selected_record(r)["hidden_state_bytes"] for n, r in records.items()}
    metrics: dict[str, float] = {}
    for n, recs in records.items():
        chosen, grid = selected_record(recs)["lr"], sorted(r["lr"] for r in recs if not r["selected"])
        metrics |= {f"{n}_chosen_lr": chosen, f"{n}_lr_at_grid_edge": float(chosen in (grid[0], grid[-1])),
                    f"{n}_pilot_runs": len(grid)}  # fmt: skip
        metrics |= {f"{n}_pilot_tuning_loss_lr{r['lr']:g}": r["final_val_loss"] for r in recs if not r["selected"]}
    metrics |= {f"{n}_hidden_state_bytes": b for n, b in state.items()}
    return metrics | {"normuon_state_over_muon": state["normuon"] / state["muon"],
                      "normuon_state_over_adamw": state["normuon"] / state["adamw"]}  # fmt: skip
