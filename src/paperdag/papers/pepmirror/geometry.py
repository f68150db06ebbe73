"""Backbone geometry: residue chirality, mirror images, virtual CB and carbonyl O placement (numpy, Angstrom)."""

from __future__ import annotations

import numpy as np

# atom order of a backbone-level residue everywhere in this package
BACKBONE = ("N", "CA", "C", "CB")
MIRROR = np.diag([-1.0, 1.0, 1.0])  # reflection P through the plane x = 0 (det P = -1)
CHIRAL_EPS = 0.5  # |chirality volume| below this (A^3) counts as planar / undefined hand


def chirality_volume(xyz: np.ndarray) -> np.ndarray:
    """Signed volume ((N - CA) x (C - CA)) . (CB - CA) per residue; xyz is [..., 4, 3] in BACKBONE order.

    L-amino acids give about +2.5 A^3, D-amino acids about -2.5 A^3 (checked on gramicidin A in the tests).
    """
    n, ca, c, cb = (xyz[..., i, :] for i in range(4))
    return np.einsum("...i,...i->...", np.cross(n - ca, c - ca), cb - ca)


def residue_hand(xyz: np.ndarray, eps: float = CHIRAL_EPS) -> np.ndarray:
    """'L' where the chirality volume > eps, 'D' where < -eps, '?' otherwise (array of one-char strings)."""
    vol = chirality_volume(xyz)
    return np.where(vol > eps, "L", np.where(vol < -eps, "D", "?"))


def mirror(xyz: np.ndarray, center: np.ndarray) -> np.ndarray:
    """Mirror image x' = P (x - c) + c with P = diag(-1, 1, 1); maps L residues to D and back."""
    return (xyz - center) @ MIRROR.T + center


def virtual_cb(n: np.ndarray, ca: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Ideal L-residue CB: CA - 0.58273 a + 0.56803 b - 0.54067 (b x c'), b = CA - N, c' = C - CA, a = b x c'."""
    b, cc = ca - n, c - ca
    a = np.cross(b, cc)
    return -0.58273431 * a + 0.56802827 * b - 0.54067466 * cc + ca


def carbonyl_oxygen(xyz: np.ndarray) -> np.ndarray:
    """Backbone O = C + 1.23 A * unit(unit(C - CA) + unit(C - N_next)), the in-plane bisector of the peptide
    bond; for the C-terminal residue N_next is stood in by C + unit(CA - N) (approximate, amide N not modelled)."""
    n, ca, c = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    n_next = np.concatenate([n[1:], c[-1:] + _unit(ca[-1:] - n[-1:])], 0)
    return c + 1.23 * _unit(_unit(c - ca) + _unit(c - n_next))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def bond_lengths(xyz: np.ndarray) -> np.ndarray:
    """Per residue |N-CA|, |CA-C|, |CA-CB| and the peptide bond |C_i - N_i+1| (0 for the last residue): [L, 4]."""
    n, ca, c, cb = (xyz[:, i] for i in range(4))
    pep = np.linalg.norm(c[:-1] - n[1:], axis=-1)
    return np.stack(
        [np.linalg.norm(n - ca, axis=-1), np.linalg.norm(c - ca, axis=-1), np.linalg.norm(cb - ca, axis=-1),
         np.concatenate([pep, [0.0]])], axis=-1)


def backbone_ok(xyz: np.ndarray, bond_min: float, bond_max: float, max_peptide_bond: float) -> bool:
    """bond_min < |N-CA|, |CA-C|, |CA-CB| < bond_max at every residue and |C_i - N_i+1| < max_peptide_bond."""
    bonds = bond_lengths(xyz)
    residues = ((bonds[:, :3] > bond_min) & (bonds[:, :3] < bond_max)).all()
    return bool(residues and (bonds[:-1, 3] < max_peptide_bond).all())
