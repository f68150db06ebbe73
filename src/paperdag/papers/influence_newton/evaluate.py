"""Stage ``evaluate``: errors, scaling fits, group effects, plots and the claims (analysis.py has the equations).

Cells whose certificate failed (verify) are left out of every fit and their number is reported.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from paperdag.claims import Claim, write_metrics
from paperdag.stage import StageContext

from .analysis import CELL, PAPER_EXPONENTS, cell_errors, group_loss_changes, group_slopes, scaling_fits, subset_errors
from .plots import plot_group_effects, plot_ratio_heatmap, plot_scaling
from .problem import read_fits
from .retrain import ESTIMATES_FILE
from .stats import Coef
from .verify import CERTIFICATE_FILE


def _measured(c: Coef) -> dict[str, float | list[float]]:
    return {"estimate": round(c.estimate, 4), "ci95": [round(c.lo, 4), round(c.hi, 4)]}


def evaluate(ctx: StageContext) -> dict[str, float]:
    """errors.parquet, group_effects.parquet, fits.parquet, three plots and metrics.json with the claims."""
    p = ctx.params
    estimates = pq.read_table(ctx.inputs["retrain"] / ESTIMATES_FILE)
    certificate = pq.read_table(ctx.inputs["verify"] / CERTIFICATE_FILE)
    fits = read_fits(ctx.inputs["train"])
    errors = subset_errors(estimates, fits).join(certificate.select(CELL + ["passed"]), CELL)
    pq.write_table(errors, ctx.out / "errors.parquet")

    used = errors.filter(pc.and_(errors["passed"], pc.equal(errors["kind"], "random")))
    cells = {how: cell_errors(used, how) for how in ("mean", "median")}
    scaling = {how: scaling_fits(m) for how, m in cells.items()}
    group = group_loss_changes(ctx.inputs["prepare"], estimates, fits[(p.group_n, p.group_d)], p.group_n, p.group_d)
    group = group.join(certificate.select(CELL + ["passed"]), CELL).filter(pc.field("passed"))
    pq.write_table(group, ctx.out / "group_effects.parquet")
    slopes = group_slopes(group)

    rows = [dict(aggregate=how, fit=fit, term=term, predicted=value, **vars(scaling[how][fit][term]))
            for how in scaling for (fit, term), value in PAPER_EXPONENTS.items()]
    rows += [dict(aggregate="subsets", fit=f"group_{kind}", term=f"slope_{method}", predicted=1.0, **vars(c))
             for (kind, method), c in slopes.items()]
    pq.write_table(pa.Table.from_pylist(rows), ctx.out / "fits.parquet")

    m, fit = cells["mean"], scaling["mean"]
    plot_scaling(m, fit["err_ns"], fit["gap"], ctx.out / "scaling.png")
    plot_ratio_heatmap(m, int(m["n"].max()), ctx.out / "ratio_heatmap.png")
    plot_group_effects(group, slopes, p.group_n, p.group_d, ctx.out / "group_effects.png")

    tol = p.slope_tol
    scope = (f"joint log-log fit over {len(m['n'])} certified random cells of the mean over {p.n_subsets} subsets; "
             f"holds if the 95% CI meets the paper's exponent +- {tol:g} (allowance for its polylog factors)")

    def exponent(claim_id: str, key: tuple[str, str], what: str) -> Claim:
        c, value = fit[key[0]][key[1]], PAPER_EXPONENTS[key]
        return Claim(claim_id, f"{what} ({scope})", value, _measured(c), c.within(value, tol))

    claims = [
        exponent("ns_error_exponent_k", ("err_ns", "k"), "NS error ||theta_T - theta_NS|| grows like k^1"),
        exponent("ns_error_exponent_d", ("err_ns", "d"), "NS error ||theta_T - theta_NS|| grows like d^1"),
        exponent("ns_error_exponent_n", ("err_ns", "n"), "NS error ||theta_T - theta_NS|| decays like n^-2"),
        exponent("ns_if_gap_exponent_kd", ("gap", "kd"), "||theta_NS - theta_IF|| grows like ((k + d) sqrt(k d))^1"),
        exponent("ns_if_gap_exponent_n", ("gap", "n"), "||theta_NS - theta_IF|| decays like n^-2"),
        exponent("if_ns_ratio_exponent", ("ratio", "balance"),
                 "IF/NS error ratio grows like ((k + d) / sqrt(k d))^1: largest for k << d or k >> d"),
        Claim("ns_beats_if_every_cell", "NS is more accurate than IF: mean err_IF / mean err_NS > 1 in every "
              "certified random cell", "ratio ~ (k + d) / sqrt(k d) >= 2, up to constants",
              {"min_ratio": round(float(m["ratio"].min()), 3), "cells": len(m["ratio"])}, bool(m["ratio"].min() > 1)),
        Claim("group_if_underestimates_coherent", "IF underestimates the actual test-loss change of coherent "
              f"(same-cluster) groups: 95% CI of the predicted-on-actual slope below 1 (n={p.group_n}, d={p.group_d})",
              "< 1", _measured(slopes["coherent", "if"]), slopes["coherent", "if"].hi < 1.0),
        Claim("group_ns_tracks_actual", "NS tracks the actual test-loss change of random and coherent groups: "
              f"each predicted-on-actual slope's 95% CI meets [{1 - p.track_tol:g}, {1 + p.track_tol:g}]", 1.0,
              {kind: _measured(slopes[kind, "ns"]) for kind in ("random", "coherent")},
              all(slopes[kind, "ns"].within(1.0, p.track_tol) for kind in ("random", "coherent"))),
    ]
    failed = certificate.filter(pc.invert(certificate["passed"]))
    metrics = {
        "cells": certificate.num_rows,
        "cells_failed_certificate": failed.num_rows,
        "random_cells_fitted": len(m["n"]),
        "max_refit_grad_norm": pc.max(estimates["grad_norm"]).as_py(),
        "ratio_min": float(m["ratio"].min()),
        "ratio_max": float(m["ratio"].max()),
        "exponents_ci_contain_paper": all(fit[f][t].contains(v) for (f, t), v in PAPER_EXPONENTS.items()),
    }
    metrics |= {f"{how}_{f}_{t}": scaling[how][f][t].estimate for how in scaling for f, t in PAPER_EXPONENTS}
    metrics |= {f"group_slope_{kind}_{method}": c.estimate for (kind, method), c in slopes.items()}
    write_metrics(ctx.out, metrics, claims)
    return {key: float(v) for key, v in metrics.items()}
