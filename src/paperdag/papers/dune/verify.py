"""Stage ``verify``: every perturbed training image of every scheme checked against its budget (budget.py)."""

from __future__ import annotations

from paperdag.io import load_tensors, write_table
from paperdag.stage import StageContext

from .budget import check
from .params import Params
from .perturb import PERTURBED_FILE
from .prepare import DATA_FILE

BUDGET_FILE = "budget.parquet"
METRIC_KEYS = ("images", "max_linf", "max_colour_residual", "min_psnr", "min_ssim", "max_changed_pixels")


def verify(ctx: StageContext[Params], schemes: list[str]) -> dict[str, float]:
    """budget.parquet: one row per scheme with its worst case over all images and ``ok``."""
    b = ctx.params.budget
    data = load_tensors(ctx.input("prepare", DATA_FILE))
    x, y = data["x_train"], data["y_train"]
    rows = []
    for scheme in schemes:
        pert = load_tensors(ctx.input(f"perturb_{scheme}", PERTURBED_FILE))
        res = check(scheme, x, pert["x"], pert.get("x_colour"), b.eps, b.psnr_min, b.ssim_min, pert.get("offsets"), y)
        rows.append({"scheme": scheme, "ok": bool(res["ok"])} | {k: res.get(k, float("nan")) for k in METRIC_KEYS})
    write_table(ctx.output(BUDGET_FILE), {k: [r[k] for r in rows] for k in rows[0]})
    return {"schemes_within_budget": float(sum(r["ok"] for r in rows)), "schemes": float(len(rows))}
