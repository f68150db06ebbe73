"""In-silico quality of a designed backbone in its pocket: contacts, buried surface, clashes, native recovery."""

from __future__ import annotations

import freesasa
import numpy as np

RADII = (1.65, 1.87, 1.76, 1.87)  # N, CA, C, CB (A), Shrake-Rupley probe 1.4 A via freesasa defaults


def sasa(xyz: np.ndarray) -> float:
    """Total solvent-accessible surface (A^2) of backbone-level atoms xyz [n, 4, 3] (freesasa, Lee-Richards)."""
    flat = xyz.reshape(-1, 3)
    radii = list(RADII) * len(xyz)
    return freesasa.calcCoord(flat.reshape(-1).tolist(), radii).totalArea()


def buried_surface(pep: np.ndarray, pocket: np.ndarray, pocket_sasa: float | None = None) -> float:
    """BSA = SASA(peptide) + SASA(pocket) - SASA(complex)."""
    ps = sasa(pocket) if pocket_sasa is None else pocket_sasa
    return sasa(pep) + ps - sasa(np.concatenate([pep, pocket]))


def contacts(pep: np.ndarray, pocket: np.ndarray, cutoff: float) -> int:
    """Number of (peptide residue, pocket residue) pairs with CB-CB distance below cutoff."""
    return int((np.linalg.norm(pep[:, None, 3] - pocket[None, :, 3], axis=-1) < cutoff).sum())


def clashes(pep: np.ndarray, pocket: np.ndarray, cutoff: float) -> int:
    """Peptide-pocket heavy-atom pairs (N, CA, C, CB) closer than cutoff, plus peptide CA pairs |i-j| >= 2
    closer than cutoff."""
    d = np.linalg.norm(pep.reshape(-1, 1, 3) - pocket.reshape(1, -1, 3), axis=-1)
    ca = np.linalg.norm(pep[:, None, 1] - pep[None, :, 1], axis=-1)
    far = np.abs(np.arange(len(pep))[:, None] - np.arange(len(pep))[None]) >= 2
    return int((d < cutoff).sum() + np.triu(far & (ca < cutoff)).sum())


def native_recovery(pep: np.ndarray, native: np.ndarray, cutoff: float) -> float:
    """Fraction of native peptide CA positions with a designed CA within cutoff (order-free coverage)."""
    d = np.linalg.norm(native[:, None, 1] - pep[None, :, 1], axis=-1)
    return float((d.min(1) < cutoff).mean())
