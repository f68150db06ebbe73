"""``paperdag verify pepmirror [PATH]``: re-check a verify or an export folder from its files alone.

A verify folder: every design's residue hands are recomputed from its stored coordinates and both certificates
must pass. An export folder: every file is re-hashed against candidate_manifest.json and the package is re-read
(package.recheck_package). The verify stage writes its files under the names defined here.

Outcomes (``paperdag.verification``): VERIFIED when every hand, hash and candidate check reproduces; REFUTED when
one does not (a tampered file, a hand the coordinates contradict, a failed certificate); REFUSED when the folder is
neither kind; UNDECIDED when ``--budget`` units (designs, or files re-hashed) run out.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from paperdag.verification import Outcome, Refused, Result, Work

from .geometry import residue_hand
from .package import MANIFEST_FILE, recheck_package

CERTIFICATES_FILE = "certificates.json"
VERIFIED_FILE = "designs_verified.parquet"


def recheck_designs(folder: Path, work: Work) -> Result:
    """Residue hands recomputed from the coordinates of designs_verified.parquet; certificates.json passes."""
    rows = pq.read_table(folder / VERIFIED_FILE).to_pylist()
    certs = json.loads((folder / CERTIFICATES_FILE).read_text())
    bad = sum("".join(residue_hand(np.asarray(r["xyz"]).reshape(-1, 4, 3))) != r["residue_hands"]
              for r in work.each(rows, "designs"))
    failed = [name for name in ("polar", "axial") if not certs[name]["passes"]]
    message = (f"{len(rows) - bad}/{len(rows)} designs' hands reproduce from their coordinates; "
               + (f"the {' and '.join(failed)} certificate fails" if failed else "both equivariance certificates pass"))
    return Result(Outcome.VERIFIED if bad == 0 and not failed else Outcome.REFUTED, message)


def recheck_export(folder: Path, work: Work) -> Result:
    """Every file's SHA-256 against candidate_manifest.json, then every candidate's chirality, CIP and InChIKey."""
    sums = json.loads((folder / MANIFEST_FILE).read_text())["sha256"]
    for name, digest in work.each(list(sums.items()), "files re-hashed"):
        if hashlib.sha256((folder / name).read_bytes()).hexdigest() != digest:
            return Result(Outcome.REFUTED, f"checksum mismatch: {name} differs from the manifest's SHA-256")
    work.doing("re-reading the candidates")
    pkg = recheck_package(folder)
    ok = pkg["n_exported"] > 0 and pkg["n_pass"] == pkg["n_exported"]
    return Result(Outcome.VERIFIED if ok else Outcome.REFUTED,
                  f"{pkg['n_pass']}/{pkg['n_exported']} candidates pass chirality, CIP and InChIKey checks")


def reverify(folder: Path, work: Work) -> Result:
    """An export folder (has candidate_manifest.json) or a verify folder re-checked; any other folder refused."""
    folder = Path(folder)
    if (folder / MANIFEST_FILE).exists():
        return recheck_export(folder, work)
    if (folder / VERIFIED_FILE).exists():
        return recheck_designs(folder, work)
    raise Refused(MANIFEST_FILE, f"neither an export ({MANIFEST_FILE}) nor a verify folder ({VERIFIED_FILE})")
