"""The training-seed plan of the quality claim, from pilot runs that are never judged again.

Each pilot run (a verify stage's designs table: S seeds x T targets) gives the crossed variance components of every
quality ratio's linearisation (claims._quality_noninferior) and of the polar model's native-hand share (the
precondition that gates it); the plan pools them over runs (their mean) and simulates, for each candidate seed count
at the pilot's targets, the power of each part to clear ``quality_ratio_min`` when the true ratio is 1.0 (the
paper's "axial as good as polar"), and of the precondition at the pooled share (``paperdag.common.crossed.power``:
a crossed t interval, for the share an approximation of the Korn-Graubard interval the claim uses).
The claim holds only when every part does: its power is the parts' product (independent parts; positively
correlated parts do better).

    python -m paperdag.papers.pepmirror.seedplan artifacts/.store/pepmirror/verify/<key>/designs_verified.parquet ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from paperdag.common.crossed import Components, power

from .claims import _designs, hand_share, mirrored_pair, quality_ratio
from .summary import QUALITY

TRUE_RATIO = 1.0  # the paper's claim: axial designs as good as polar's
BAR = 0.9  # params.yaml pepmirror.claims.quality_ratio_min and native_hand_min


def pooled(parts: list[Components]) -> Components:
    """The mean of runs' components (same targets per run; seeds: the runs' total)."""
    return Components(sum(c.seeds for c in parts), parts[0].targets, float(np.mean([c.seed for c in parts])),
                      float(np.mean([c.target for c in parts])), float(np.mean([c.resid for c in parts])))


def pilot_components(runs: list[pd.DataFrame]) -> tuple[dict[str, Components], float]:
    """Each quality ratio's pooled components (mirrored targets) and the polar native-hand share's, with that
    share's pooled estimate."""
    out: dict[str, list[Components]] = {}
    shares = []
    for designs in runs:
        polar, axial = mirrored_pair(designs)
        for k in QUALITY:
            out.setdefault(k, []).append(quality_ratio(polar, axial, k).components)
        share = hand_share(_designs(designs, "polar", "L"))
        out.setdefault("polar_native_hand", []).append(share.components)
        shares.append(share.interval.mean)
    return {k: pooled(v) for k, v in out.items()}, float(np.mean(shares))


def plan(runs: list[pd.DataFrame], seed_counts: list[int], draws: int = 2000) -> dict[str, object]:
    """Per seed count: each part's power, the claim's (product of the quality parts) and the precondition's."""
    comps, share = pilot_components(runs)
    rows = []
    for s in seed_counts:
        parts = {k: power(comps[k], s, TRUE_RATIO, BAR, draws=draws) for k in QUALITY}
        rows.append({"seeds": s, "targets": comps["clashes"].targets, "parts": parts,
                     "claim": float(np.prod(list(parts.values()))),
                     "polar_native_hand": power(comps["polar_native_hand"], s, share, BAR, draws=draws)})
    return {"components": {k: c.row() for k, c in comps.items()}, "polar_native_share": share, "rows": rows}


def main(argv: list[str]) -> int:
    runs = [pq.read_table(Path(a)).to_pandas() for a in argv]
    print(json.dumps(plan(runs, [4, 6, 8, 10, 12, 16, 20, 24]), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
