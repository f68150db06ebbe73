"""A certificate folder: what a verification writes so that it can be re-checked from the artifact alone.

``weights.safetensors`` (the certificate and controller), ``meta.json`` (system, architecture, domain kind,
verifier budget), ``cells.parquet`` (every leaf cell of every unit's branch and bound: box, status, bound),
``counterexamples.parquet`` and ``summary.json`` (per-unit verdicts, the constants of the sISS bound and the digest
of the problem data, record.py). A unit is a platoon follower or a network subsystem.
"""

from __future__ import annotations

from pathlib import Path

import torch

from paperdag.io import save_tensors, write_json, write_table

from .record import DIGEST_KEY, problem_digest

WEIGHTS_FILE = "weights.safetensors"
META_FILE = "meta.json"
CELLS_FILE = "cells.parquet"
COUNTEREXAMPLES_FILE = "counterexamples.parquet"
SUMMARY_FILE = "summary.json"


def write_certificate_folder(out: Path, tensors: dict[str, torch.Tensor], meta: dict, problem: dict, unit: str,
                             cells: list[dict], counterexamples: list[dict], cex_columns: tuple[str, ...],
                             summary: dict, cell_columns: tuple[str, ...] = ()) -> None:
    """Write the five files; ``cells`` rows carry the unit index under ``unit`` (as do the counterexamples) and the
    ``cell_columns`` (e.g. the delay-domain piece); summary.json records the digest of ``problem`` (the problem data
    meta.json holds, ``record.problem_digest``). Every file is a function of the certificate and the verifier budget
    alone (no wall-clock times), so two verifications of one certificate give byte-identical folders."""
    out.mkdir(parents=True, exist_ok=True)
    save_tensors(out / WEIGHTS_FILE, tensors)
    write_json(out / META_FILE, meta)
    write_table(out / CELLS_FILE, {
        unit: [r[unit] for r in cells], **{c: [r[c] for r in cells] for c in cell_columns},
        "status": [r["status"] for r in cells],
        "depth": [int(r["depth"]) for r in cells], "bound": [r["bound"] for r in cells],
        "milp_nodes": [int(r["nodes"]) for r in cells],
        "lo": [r["lo"] for r in cells], "hi": [r["hi"] for r in cells]})
    write_table(out / COUNTEREXAMPLES_FILE, {k: [c[k] for c in counterexamples] for k in (unit, *cex_columns)})
    write_json(out / SUMMARY_FILE, summary | {DIGEST_KEY: problem_digest(problem)})
