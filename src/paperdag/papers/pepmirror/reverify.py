"""``paperdag verify pepmirror [PATH]``: re-check a verify or an export folder from its files alone.

A verify folder: every design's residue hands are recomputed from its stored coordinates and both certificates
must pass. An export folder: every file is re-hashed against candidate_manifest.json and the package is re-read
(package.recheck_package). The verify stage writes its files under the names defined here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from .geometry import residue_hand
from .package import MANIFEST_FILE, checksum_mismatches, recheck_package

CERTIFICATES_FILE = "certificates.json"
VERIFIED_FILE = "designs_verified.parquet"


def recheck_designs(folder: Path) -> tuple[bool, str]:
    """Residue hands recomputed from the coordinates of designs_verified.parquet; certificates.json passes."""
    rows = pq.read_table(folder / VERIFIED_FILE).to_pylist()
    bad = sum("".join(residue_hand(np.asarray(r["xyz"]).reshape(-1, 4, 3))) != r["residue_hands"] for r in rows)
    certs = json.loads((folder / CERTIFICATES_FILE).read_text())
    ok = bad == 0 and certs["polar"]["passes"] and certs["axial"]["passes"]
    return ok, f"{len(rows) - bad}/{len(rows)} designs' hands reproduce; certificates pass: {ok}"


def reverify(folder: Path) -> tuple[bool, str]:
    """(ok, message) for an export folder (has candidate_manifest.json) or a verify folder."""
    folder = Path(folder)
    if (folder / MANIFEST_FILE).exists():
        bad = checksum_mismatches(folder)
        if bad:
            return False, f"checksum mismatch: {bad[0]}"
        pkg = recheck_package(folder)
        ok = pkg["n_exported"] > 0 and pkg["n_pass"] == pkg["n_exported"]
        return ok, f"{pkg['n_pass']}/{pkg['n_exported']} candidates pass chirality, CIP and InChIKey checks"
    if (folder / VERIFIED_FILE).exists():
        return recheck_designs(folder)
    return False, f"{folder}: neither an export ({MANIFEST_FILE}) nor a verify folder ({VERIFIED_FILE})"
