"""Stage ``victims_<scheme>``: victims trained from scratch on one scheme's training set under every defense."""

from __future__ import annotations

from paperdag.io import load_tensors, write_table
from paperdag.stage import StageContext

from .defenses import DEFENSES
from .params import Params
from .perturb import PERTURBED_FILE
from .prepare import DATA_FILE
from .surrogate import CLASSES
from .victims import VictimSetup, train_victims

VICTIMS_FILE = "victims.parquet"


def retrain(ctx: StageContext[Params], scheme: str) -> dict[str, float]:
    """victims.parquet: scheme, defense, seed, test_acc (clean test images), train_acc (on what it was given)."""
    p = ctx.params
    data = load_tensors(ctx.input("prepare", DATA_FILE), ctx.device)
    x_train = data["x_train"] if scheme == "clean" else load_tensors(
        ctx.input(f"perturb_{scheme}", PERTURBED_FILE), ctx.device)["x"]
    setup = VictimSetup(**p.net.model_dump(), **p.defenses.model_dump())
    runs = [(d, s) for d in DEFENSES for s in range(p.seeds)]
    seeded = {run: p.seed * 1000 + i for i, run in enumerate(runs)}
    rows = []
    for group in ctx.progress([[r for r in runs if (r[0] == "adv_train") == at] for at in (False, True)],
                              desc=f"victims {scheme}"):  # standard training together, adversarial together
        scores = train_victims(x_train, data["y_train"], data["x_test"], data["y_test"],
                               [(d, seeded[d, s]) for d, s in group], setup, CLASSES)
        rows += [{"scheme": scheme, "defense": d, "seed": s, "test_acc": test, "train_acc": train}
                 for (d, s), (test, train) in zip(group, scores, strict=True)]
    write_table(ctx.output(VICTIMS_FILE), {k: [r[k] for r in rows] for k in rows[0]})
    return {f"test_acc_{d}": sum(r["test_acc"] for r in rows if r["defense"] == d) / p.seeds for d in DEFENSES}
