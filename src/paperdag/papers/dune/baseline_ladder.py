"""Stage ``trivial_baselines``: the trivial classifiers' ladder (trivial.py) scored per clean test image."""

from __future__ import annotations

from paperdag.io import load_tensors, write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import DATA_FILE
from .surrogate import CLASSES
from .trivial import ladder

LADDER_FILE = "ladder.parquet"
CHOSEN_FILE = "ladder.json"


def trivial_baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """ladder.parquet (one 0/1 column per rung, one row per test image) and ladder.json (each rung's chosen
    hyper-parameter and validation accuracy)."""
    t = ctx.params.trivial
    data = load_tensors(ctx.input("prepare", DATA_FILE))
    rungs = ladder(data["x_train"], data["y_train"], data["x_test"], data["y_test"], CLASSES, tuple(t.ks),
                   tuple(t.cs), t.valid_frac)
    write_table(ctx.output(LADDER_FILE), {name: r["correct"] for name, r in rungs.items()})
    write_json(ctx.output(CHOSEN_FILE), {name: {k: v for k, v in r.items() if k != "correct"}
                                         for name, r in rungs.items()})
    scores = [float(r["correct"].sum() / len(r["correct"])) for r in rungs.values()]
    return {"strongest_test_acc": max(scores), "rungs": float(len(scores))}
