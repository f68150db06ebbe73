"""The measured numbers of the evaluate stage, from the verified designs and the certificates.

Per variant v and target hand (native L / mirrored D): the L- and D-residue ratios n_L / n and n_D / n over all
residues of the refined designs, the same L and undefined ('?') ratios of the raw samples, the mean quality scores
on mirrored targets, the fraction of sane backbones and of all-L designs, and the certificate numbers; the full-atom
candidates' energies, clashes, buried surface and H-bonds (before / after minimisation) and the minimiser's
convergence (RMS force after it) in ``summarize_fullatom``.
"""

from __future__ import annotations

import pandas as pd

QUALITY = {"contacts": 1, "buried_surface": 1, "native_recovery": 1, "clashes": -1}  # +1: higher is better
HAND_TAGS = {"L": "native", "D": "mirrored"}  # the hand of the target a design was made for


def summarize(designs: pd.DataFrame, certs: dict[str, dict], variants: list[str]) -> dict[str, float]:
    """Every metric of metrics.json except the export re-check's (see the module docstring)."""
    m: dict[str, float] = {}
    for (v, h), g in designs.groupby(["variant", "target_hand"]):
        tag = f"{v}_{HAND_TAGS[h]}_target"
        raw = "".join(g["raw_residue_hands"])
        m[f"L_ratio_{tag}"] = float(g["n_L"].sum() / g["length"].sum())
        m[f"D_ratio_{tag}"] = float(g["n_D"].sum() / g["length"].sum())
        m[f"L_ratio_raw_{tag}"] = raw.count("L") / len(raw)
        m[f"undefined_ratio_raw_{tag}"] = raw.count("?") / len(raw)
    for v in variants:
        mine = designs[designs["variant"] == v]
        mirrored = mine[mine["target_hand"] == "D"]
        m |= {f"{k}_{v}_mirrored": float(mirrored[k].mean()) for k in QUALITY}
        m[f"geometry_ok_{v}"] = float(mine["geometry_ok"].mean())
        m |= {f"{v}_{k}": certs[v][k] for k in ("rotation_error", "reflection_error", "design_mirror_deviation_A")}
        m[f"all_L_design_fraction_{v}_mirrored"] = float(mirrored["residue_hands"].map(lambda r: set(r) == {"L"})
                                                         .mean())
    return m


def summarize_fullatom(table: pd.DataFrame, manifest: dict | None = None) -> dict[str, float]:
    """Count, medians / maxima / means over the exported candidates (fullatom_energies.parquet); from the package
    manifest, the candidates requested and the ranked designs rejected because they could not be relaxed."""
    manifest = manifest or {}
    rejected = manifest.get("rejected_after_relaxation", [])
    m: dict[str, float] = {"fullatom_n": float(len(table)),
                           "fullatom_n_requested": float(manifest.get("n_requested", len(table))),
                           "fullatom_n_rejected": float(len(rejected)),
                           "fullatom_n_rejected_clash": float(sum(r.get("clashes_after", 0) > 0 for r in rejected)),
                           "fullatom_n_rejected_unconverged": float(sum(not r.get("converged", True)
                                                                        for r in rejected))}
    for when in ("before", "after"):
        m[f"fullatom_median_interaction_{when}"] = float(table[f"interaction_{when}"].median())
        m[f"fullatom_max_interaction_{when}"] = float(table[f"interaction_{when}"].max())
        m[f"fullatom_max_clashes_{when}"] = float(table[f"clashes_{when}"].max())
        m[f"fullatom_mean_clashes_{when}"] = float(table[f"clashes_{when}"].mean())
        m[f"fullatom_mean_buried_surface_{when}"] = float(table[f"buried_surface_{when}"].mean())
        m[f"fullatom_mean_hbonds_{when}"] = float(table[f"hbonds_{when}"].mean())
    m["fullatom_favourable_fraction"] = float((table["interaction_after"] < 0).mean())
    m["fullatom_converged_fraction"] = float(table["converged"].mean())
    m["fullatom_max_rms_force_after"] = float(table["rms_force_after"].max())
    m["fullatom_max_mirror_energy_rel_diff"] = float(table["mirror_energy_rel_diff"].max())
    return m
