"""The trivial majority-hand design: a designer that ignores the hand of the target it is given.

On a mirrored (D) target, the trivial way to deliver the requested L hand is to ignore the mirror: return the L
design made for the native target, unmirrored. Its residues keep the training (majority) hand, so its L-residue ratio
is the native one (~1), but it was designed for the other pocket. Per design row (variant, seed, target, sample) on the
native target, this module scores that unmirrored design in the mirrored pocket P(pocket) against the mirrored
native peptide, P the reflection about the pocket's CA centroid (geometry.mirror), with the same quality functions
as records.py, so it pairs with the variant's own design on the mirrored target for the same (seed, target, sample).
Both are ranked by the export's in-silico score, buried surface - clash_penalty * clashes (selection.py).

The next rung of the ladder is training-data replay (``replay_designs``): for each (target, sample) a training
peptide of the target's length (the nearest length where none has it), drawn from a generator seeded by (seed,
target index, sample), placed in the mirrored pocket at the offset from its own pocket's CA centroid (an L peptide,
the training hand, as it was bound), scored the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import quality
from .geometry import mirror
from .params import QualityParams

KEYS = ["variant", "train_seed", "target_id", "sample"]
REPLAY_STREAM = 17  # the replay rung's draws: SeedSequence([seed, target index, sample, REPLAY_STREAM])


def majority_hand_designs(designs: pd.DataFrame, targets: dict[str, dict], p: QualityParams,
                          contact_dist: float) -> pd.DataFrame:
    """Per native-target design row: its L-residue ratio and its quality (contacts, buried_surface, clashes,
    native_recovery) when placed unmirrored in the mirrored pocket of its target (``targets`` by id)."""
    rows = []
    for d in designs[designs["target_hand"] == "L"].itertuples():
        target = targets[d.target_id]
        pep = np.asarray(d.xyz).reshape(-1, 4, 3)
        pocket = np.asarray(target["pocket_xyz"]).reshape(-1, 4, 3)
        center = pocket[:, 1].mean(0)
        pocket, native = mirror(pocket, center), mirror(np.asarray(target["pep_xyz"]).reshape(-1, 4, 3), center)
        rows.append({"variant": d.variant, "train_seed": d.train_seed, "target_id": d.target_id, "sample": d.sample,
                     "L_ratio": d.L_ratio,
                     "contacts": quality.contacts(pep, pocket, contact_dist),
                     "buried_surface": quality.buried_surface(pep, pocket),
                     "clashes": quality.clashes(pep, pocket, p.clash_dist),
                     "native_recovery": quality.native_recovery(pep, native, p.recovery_dist)})
    return pd.DataFrame(rows)


def paired_with_mirrored(designs: pd.DataFrame, trivial: pd.DataFrame, variant: str,
                         clash_penalty: float) -> pd.DataFrame:
    """The variant's designs on mirrored targets joined with its trivial majority-hand designs on (seed, target,
    sample): columns <metric>_design and <metric>_trivial, the in-silico score (buried surface - clash_penalty *
    clashes) of both included."""
    mine = designs[(designs["variant"] == variant) & (designs["target_hand"] == "D")]
    out = mine.merge(trivial[trivial["variant"] == variant], on=KEYS, suffixes=("_design", "_trivial"),
                     validate="one_to_one")
    for side in ("design", "trivial"):
        out[f"in_silico_{side}"] = out[f"buried_surface_{side}"] - clash_penalty * out[f"clashes_{side}"]
    return out.sort_values(["train_seed", "target_id", "sample"]).reset_index(drop=True)


def replay_designs(designs: pd.DataFrame, targets: dict[str, dict], train: list[dict], p: QualityParams,
                   contact_dist: float, clash_penalty: float, seed: int) -> pd.DataFrame:
    """Per (target, sample) of the mirrored-target designs: a replayed training peptide (module docstring) scored
    in the mirrored pocket (contacts, buried_surface, clashes, native_recovery, in_silico)."""
    lengths = np.array([t["length"] for t in train])
    rows = []
    keys = designs[designs["target_hand"] == "D"][["target_id", "target_index", "sample"]].drop_duplicates()
    for d in keys.sort_values(["target_id", "sample"]).itertuples():
        target = targets[d.target_id]
        pocket = np.asarray(target["pocket_xyz"]).reshape(-1, 4, 3)
        center = pocket[:, 1].mean(0)
        pocket, native = mirror(pocket, center), mirror(np.asarray(target["pep_xyz"]).reshape(-1, 4, 3), center)
        gap = np.abs(lengths - target["length"])
        pool = np.flatnonzero(gap == gap.min())
        rng = np.random.default_rng(np.random.SeedSequence([seed, int(d.target_index), int(d.sample), REPLAY_STREAM]))
        source = train[int(pool[rng.integers(len(pool))])]
        own = np.asarray(source["pocket_xyz"]).reshape(-1, 4, 3)[:, 1].mean(0)
        pep = np.asarray(source["pep_xyz"]).reshape(-1, 4, 3) - own + center
        row = {"target_id": d.target_id, "sample": int(d.sample), "source_id": source["id"],
               "contacts": quality.contacts(pep, pocket, contact_dist),
               "buried_surface": quality.buried_surface(pep, pocket),
               "clashes": quality.clashes(pep, pocket, p.clash_dist),
               "native_recovery": quality.native_recovery(pep, native, p.recovery_dist)}
        rows.append(row | {"in_silico": row["buried_surface"] - clash_penalty * row["clashes"]})
    return pd.DataFrame(rows)
