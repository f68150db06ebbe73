"""Stage ``evaluate``: the measured numbers (summary.py, the sequence head's held-out evaluation), the trivial
designs (baseline.py: the majority-hand design and training-data replay), the package re-read from its files
(package.py), the claims (claims.py) and the figures (plots.py)."""

from __future__ import annotations

from paperdag.claims import write_metrics
from paperdag.io import read_json, read_table, save_figure
from paperdag.stage import StageContext

from .baseline import majority_hand_designs, paired_with_mirrored, replay_designs
from .claims import claims, seed_ratios
from .package import FULLATOM_TABLE, MANIFEST_FILE, recheck_package
from .params import Params
from .plots import plot_chirality, plot_fullatom
from .quality_plot import plot_quality
from .prepare import EXAMPLES_FILE
from .reverify import CERTIFICATES_FILE, VERIFIED_FILE
from .summary import summarize, summarize_fullatom
from .train_seq import SEQ_EVAL_FILE

CHIRALITY_PLOT = "chirality.png"
FULLATOM_PLOT = "fullatom.png"
QUALITY_PLOT = "quality.png"


def evaluate(ctx: StageContext[Params], variants: list[str]) -> dict[str, float]:
    """metrics.json with the claims; chirality.png (L-residue ratio per variant and target hand); fullatom.png
    (interaction energy and clashes of each candidate before and after minimisation); quality.png (each training
    seed's quality ratios beside the crossed interval the claim judges)."""
    p = ctx.params
    certs = read_json(ctx.input("verify", CERTIFICATES_FILE))
    designs = read_table(ctx.input("verify", VERIFIED_FILE)).to_pandas()
    m = summarize(designs, certs, variants)
    examples = read_table(ctx.input("prepare", EXAMPLES_FILE)).to_pylist()
    targets = {r["id"]: r for r in examples if r["split"] == "target"}
    trivial = majority_hand_designs(designs, targets, p.quality, p.contact_dist)
    replay = replay_designs(designs, targets, [r for r in examples if r["split"] == "train"], p.quality,
                            p.contact_dist, p.export.clash_penalty, p.seed)
    m["in_silico_replay"] = float(replay["in_silico"].mean())
    paired = {v: paired_with_mirrored(designs, trivial, v, p.export.clash_penalty) for v in variants}
    for v, rows in paired.items():
        m |= {f"in_silico_{v}_{side}": float(rows[f"in_silico_{side}"].mean()) for side in ("design", "trivial")}
        m[f"L_ratio_{v}_trivial_majority_hand"] = float(rows["L_ratio_trivial"].mean())
    seq = read_json(ctx.input("train_seq", SEQ_EVAL_FILE))
    m |= {k: float(v) for k, v in seq.items() if k.startswith("seq_")}
    energies = read_table(ctx.input("export", FULLATOM_TABLE)).to_pandas()
    m |= summarize_fullatom(energies, read_json(ctx.input("export", MANIFEST_FILE)))
    package = recheck_package(ctx.input("export", MANIFEST_FILE).parent)
    m |= {f"export_{k}": v for k, v in package.items()}
    passes = {v: certs[v]["passes"] for v in variants}
    judged = claims(m, designs, paired, replay, passes, package, p.claims, p.certificate, p.plans)
    write_metrics(ctx.out, m, judged)
    quality = next(c for c in judged if c.id == "axial_quality_noninferior").measured
    save_figure(plot_quality(seed_ratios(designs), quality, p.claims.quality_ratio_min), ctx.output(QUALITY_PLOT))
    save_figure(plot_chirality({v: m[f"L_ratio_{v}_native_target"] for v in variants},
                               {v: m[f"L_ratio_{v}_mirrored_target"] for v in variants}), ctx.output(CHIRALITY_PLOT))
    save_figure(plot_fullatom(energies), ctx.output(FULLATOM_PLOT))
    return m
