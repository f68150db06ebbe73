"""Stage ``verify_monolithic``: the monolithic certificate of each N, verified by the same sound verifier within a
wall-clock timeout per N."""

from __future__ import annotations

from paperdag.io import load_tensors, read_json, write_json
from paperdag.stage import StageContext

from ..params import Params
from ..platoon.certify import load_trained
from ..platoon.model import Platoon
from ..platoon.monolithic import load_mono, verify_mono
from .prepare import PLATOON_FILE
from .train_monolithic import MONO_FILE
from .train_vector import VECTOR_MODEL_FILE, VECTOR_TRAIN_FILE

MONO_RESULTS_FILE = "monolithic.json"  # per N: verdict, seconds, cells, timed_out, c_0, counterexamples


def verify(ctx: StageContext[Params]) -> dict[str, float]:
    """monolithic.json; returns the verification seconds per N."""
    p = ctx.params
    pl_all = Platoon.from_json(read_json(ctx.input("prepare", PLATOON_FILE)))
    weights, info = ctx.input("train_reach", VECTOR_MODEL_FILE), ctx.input("train_reach", VECTOR_TRAIN_FILE)
    _, policy, _ = load_trained(weights, info, pl_all)
    tensors = load_tensors(ctx.input("train_monolithic", MONO_FILE))
    rows = []
    for n in p.monolithic.n_grid:
        pl = pl_all.first(n)
        mc = load_mono(tensors, pl, p.monolithic, p.certificate)
        rows.append(verify_mono(mc, policy, pl, p.budget, p.monolithic.timeout))
    write_json(ctx.output(MONO_RESULTS_FILE), rows)
    return {f"mono_seconds_{r['n']}": r["seconds"] for r in rows}
