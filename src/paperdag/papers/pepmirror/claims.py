"""The paper's claims restated for our scale: a pure function from measured numbers to ``Claim``s."""

from __future__ import annotations

from paperdag.claims import Claim

from .params import CertificateParams, ClaimParams
from .summary import QUALITY


def noninferior(axial: float, polar: float, higher_is_better: bool, margin: float) -> bool:
    """axial >= (1 - margin) polar when higher is better, else axial <= (1 + margin) polar."""
    return axial >= (1 - margin) * polar if higher_is_better else axial <= (1 + margin) * polar


def hand_measured(m: dict[str, float], v: str) -> dict[str, float]:
    """The L-residue numbers of variant v that its chirality claim reports."""
    return {"L_ratio_mirrored": m[f"L_ratio_{v}_mirrored_target"], "L_ratio_native": m[f"L_ratio_{v}_native_target"],
            "raw_L_ratio_mirrored": m[f"L_ratio_raw_{v}_mirrored_target"],
            "raw_undefined_ratio_mirrored": m[f"undefined_ratio_raw_{v}_mirrored_target"]}


def claims(m: dict[str, float], passes: dict[str, bool], package: dict[str, int], p: ClaimParams,
           cert: CertificateParams) -> list[Claim]:
    """Certificates pass; the polar model keeps ~no L residue on mirrored targets (it must mirror its designs); the
    axial model keeps a clear L majority there; axial quality is non-inferior; every exported peptide re-checks."""
    quality = {k: noninferior(m[f"{k}_axial_mirrored"], m[f"{k}_polar_mirrored"], s > 0, p.noninferiority_margin)
               for k, s in QUALITY.items()}
    polar_l, axial_l = m["L_ratio_polar_mirrored_target"], m["L_ratio_axial_mirrored_target"]
    return [
        Claim("equivariance_certificates",
              f"both denoisers rotation-equivariant (rel. error < {cert.equiv_tol:g}); polar satisfies f(Px)=Pf(x), "
              f"axial violates it by > {cert.reflection_min_violation:g}",
              "by construction", {k: m[k] for k in m if k.endswith(("rotation_error", "reflection_error"))},
              passes["polar"] and passes["axial"]),
        Claim("polar_wrong_hand_on_mirrored_targets",
              f"polar-only model on mirrored (D) targets: L-residue ratio <= {p.near_zero:g} (reflection forces "
              "the mirror image of its L-target designs)", "~0%", hand_measured(m, "polar"), polar_l <= p.near_zero),
        Claim("axial_requested_hand_majority",
              f"axial model on mirrored (D) targets: requested L hand in >= {p.clear_majority:g} of residues "
              "(cross-chirality generalisation from L-L training)", "clear majority", hand_measured(m, "axial"),
              axial_l >= p.clear_majority),
        Claim("axial_quality_noninferior",
              f"axial designs on mirrored targets at least as good as polar (within {p.noninferiority_margin:.0%}) "
              "on contacts, buried surface, native CA recovery and clashes", "axial >= polar in silico",
              {k: {"polar": m[f"{k}_polar_mirrored"], "axial": m[f"{k}_axial_mirrored"], "holds": quality[k]}
               for k in QUALITY},
              all(quality.values())),
        Claim("export_checks", "every exported D-peptide passes the chirality (PDB), CIP and InChIKey (differs from "
              "its L-enantiomer) checks re-read from the files", "all", package,
              package["n_exported"] > 0 and package["n_pass"] == package["n_exported"]),
    ]
