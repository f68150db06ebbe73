"""Stage ``prepare``: parse the MDAnalysisTests structures, cut training segments, pick held-out targets."""

from __future__ import annotations

import hashlib
from importlib.metadata import version

import numpy as np
import pyarrow as pa

from paperdag.io import write_json, write_table
from paperdag.stage import StageContext

from . import data
from .params import Params

EXAMPLES_FILE = "examples.parquet"
ATOMS_FILE = "target_atoms.parquet"
PROVENANCE_FILE = "provenance.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """Training examples (split=train), design targets (split=target: the real complexes and one segment of each
    of the first n_segment_targets held-out files) and every segment of the held-out files (split=heldout: the
    sequence head's test set) into examples.parquet, the target proteins' heavy atoms into target_atoms.parquet,
    package version, file/chain/residue provenance and the examples' sha256 into provenance.json."""
    p = ctx.params.data
    root = data.data_dir()
    dssp = sorted(f"dssp/{f.name}" for f in (root / "dssp").glob("*.pdb.gz") if f.name not in data.DSSP_SKIP)
    heldout_dssp = dssp[:: p.heldout_every]
    train_files = [f for f in dssp if f not in heldout_dssp] + list(data.TRAIN_FILES)
    cut = {"min_len": p.seg_min_len, "max_len": p.seg_max_len, "radius": p.pocket_radius, "k_max": p.pocket_max,
           "min_pocket": p.min_pocket}
    rows = []
    for f in ctx.progress(train_files, desc="train files"):
        rows += data.cut_segments(data.read_chains(root / f, f), ctx.rng, stride=p.seg_stride, split="train",
                                  prefix=f, **cut)
    for f, chain in data.TRAIN_COMPLEXES:
        rows.append(data.complex_example(data.read_chains(root / f, f), chain, p.pocket_radius, p.pocket_max,
                                         "train"))
    targets = [data.complex_example(data.read_chains(root / f, f), chain, p.pocket_radius, p.pocket_max, "target")
               for f, chain in data.HELDOUT_COMPLEXES]
    heldout = []
    for k, f in enumerate(heldout_dssp):
        pool = data.cut_segments(data.read_chains(root / f, f), ctx.rng, stride=p.seg_stride, split="heldout",
                                 prefix=f, **cut)
        heldout += pool
        if pool and k < p.n_segment_targets:
            targets.append(pool[int(ctx.rng.integers(len(pool)))] | {"split": "target"})
    if p.max_train_examples and len(rows) > p.max_train_examples:
        keep = np.sort(ctx.rng.choice(len(rows), p.max_train_examples, replace=False))
        rows = [rows[i] for i in keep]
    examples = rows + targets + heldout
    write_table(ctx.output(EXAMPLES_FILE), pa.Table.from_pylist(examples))
    atoms = []
    for t in targets:
        a = data.target_atoms(root / t["source_file"], t)
        atoms.append(pa.table(a | {"target_id": [t["id"]] * len(a["x"])}))
    write_table(ctx.output(ATOMS_FILE), pa.concat_tables(atoms))
    write_json(ctx.output(PROVENANCE_FILE), {
        "package": "MDAnalysisTests (PyPI), folder data/", "version": version("MDAnalysisTests"),
        "examples_sha256": hashlib.sha256(ctx.output(EXAMPLES_FILE).read_bytes()).hexdigest(),
        "train_files": train_files,
        "train_complexes": [f"{f}:{c}" for f, c in data.TRAIN_COMPLEXES], "heldout_segment_files": heldout_dssp,
        "excluded": ["1hvr.pdb (homolog of held-out 4E43)", *data.DSSP_SKIP],
        "targets": [{k: t[k] for k in ("id", "kind", "source_file", "pep_chain", "pep_resseq", "pep_seq",
                                       "pocket_chain", "pocket_resseq")} for t in targets],
    })
    return {"n_train": len(rows), "n_targets": len(targets), "n_heldout_segments": len(heldout),
            "mean_train_length": float(np.mean([r["length"] for r in rows])),
            "mean_pocket_size": float(np.mean([r["n_pocket"] for r in examples]))}
