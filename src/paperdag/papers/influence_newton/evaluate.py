"""Stage ``evaluate``: errors (of IF, NS and the trivial rungs of trivial.py), scaling fits, group effects, plots and
the claims (analysis.py has the equations, claims.py the verdicts).

Cells whose certificate failed (verify) are left out of every fit and their number is reported.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from paperdag.claims import write_metrics
from paperdag.common.stats import Interval
from paperdag.io import read_table, save_figure, write_table
from paperdag.stage import StageContext

from .analysis import (CELL, PAPER_EXPONENTS, cell_errors, cell_subsets, group_loss_changes, group_slopes,
                       scaling_fits, subset_errors, with_trivial)
from .claims import claims
from .params import Params
from .plots import plot_group_effects, plot_ratio_heatmap, plot_scaling
from .prepare import DATA_FILE, SUBSETS_FILE
from .problem import read_fits
from .retrain import ESTIMATES_FILE
from .stats import contains
from .train import FITS_FILE
from .trivial import trivial_estimates
from .verify import CERTIFICATE_FILE


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """errors.parquet, group_effects.parquet, fits.parquet, three plots and metrics.json with the claims."""
    p = ctx.params
    estimates = read_table(ctx.input("retrain", ESTIMATES_FILE))
    certificate = read_table(ctx.input("verify", CERTIFICATE_FILE))
    passed = certificate.select(CELL + ["passed"])
    fits = read_fits(ctx.input("train", FITS_FILE))
    trivial = trivial_estimates(ctx.input("prepare", DATA_FILE), ctx.input("prepare", SUBSETS_FILE),
                                ctx.input("train", FITS_FILE), p.ridge, ctx.device)
    errors = subset_errors(with_trivial(estimates, trivial), fits).join(passed, CELL)
    write_table(ctx.output("errors.parquet"), errors)

    certified = errors.filter(errors["passed"])
    used = certified.filter(pc.equal(certified["kind"], "random"))
    cells = {how: cell_errors(used, how) for how in ("mean", "median")}
    scaling = {how: scaling_fits(m) for how, m in cells.items()}
    group = group_loss_changes(ctx.input("prepare", DATA_FILE), estimates, fits[(p.group_n, p.group_d)], p.group_n,
                               p.group_d).join(passed, CELL).filter(pc.field("passed"))
    write_table(ctx.output("group_effects.parquet"), group)
    slopes = group_slopes(group)

    rows = [dict(aggregate=how, fit=fit, term=term, predicted=value, **_row(scaling[how][fit][term]))
            for how in scaling for (fit, term), value in PAPER_EXPONENTS.items()]
    rows += [dict(aggregate="subsets", fit=f"group_{kind}", term=f"slope_{method}", predicted=1.0, **_row(c))
             for (kind, method), c in slopes.items()]
    write_table(ctx.output("fits.parquet"), pa.Table.from_pylist(rows))

    m, fit = cells["mean"], scaling["mean"]
    save_figure(plot_scaling(m, fit["err_ns"], fit["gap"]), ctx.output("scaling.png"))
    save_figure(plot_ratio_heatmap(m, int(m["n"].max())), ctx.output("ratio_heatmap.png"))
    save_figure(plot_group_effects(group, slopes, p.group_n, p.group_d), ctx.output("group_effects.png"))

    metrics = {
        "cells": certificate.num_rows,
        "cells_failed_certificate": certificate.filter(pc.invert(certificate["passed"])).num_rows,
        "random_cells_fitted": len(m["n"]),
        "max_refit_grad_norm": pc.max(estimates["grad_norm"]).as_py(),
        "ratio_min": float(m["ratio"].min()),
        "ratio_max": float(m["ratio"].max()),
        "exponents_ci_contain_paper": all(contains(fit[f][t], v) for (f, t), v in PAPER_EXPONENTS.items()),
    }
    metrics |= {f"{how}_{f}_{t}": scaling[how][f][t].mean for how in scaling for f, t in PAPER_EXPONENTS}
    metrics |= {f"group_slope_{kind}_{method}": c.mean for (kind, method), c in slopes.items()}
    verdicts = claims(fit, cell_subsets(certified), slopes,
                      certificate=(metrics["cells"], metrics["cells_failed_certificate"]),
                      refit=(metrics["max_refit_grad_norm"], p.newton_tol), group=(p.group_n, p.group_d), p=p.claims,
                      plans=p.plans)
    write_metrics(ctx.out, metrics, verdicts)
    return {key: float(v) for key, v in metrics.items()}


def _row(c: Interval) -> dict[str, float | int]:
    """A fit interval as a row of fits.parquet."""
    return {"estimate": c.mean, "lo": c.lo, "hi": c.hi, "n": c.n, "df": c.dof, "confidence": c.confidence,
            "span": c.span or 0.0}
