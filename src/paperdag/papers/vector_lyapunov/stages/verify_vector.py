"""Stage ``verify`` / ``verify_full``: compositional verification of ``train_<domain>``'s certificate on its delay
domain; the stage's output is the certificate folder (verifier/folder.py) that ``paperdag verify`` re-checks, a
function of the certificate and the deterministic budget, and timing.json (wall-clock seconds, reported only)."""

from __future__ import annotations

from paperdag.io import read_json, write_json
from paperdag.stage import StageContext

from ..params import Params
from ..platoon.certify import load_trained, verify_vector, write_certificate
from ..platoon.model import Platoon
from .prepare import PLATOON_FILE
from .train_vector import VECTOR_MODEL_FILE, VECTOR_TRAIN_FILE

TIMING_FILE = "timing.json"  # {"constants_seconds", "seconds": per follower}


def verify(ctx: StageContext[Params], domain: str) -> dict[str, float]:
    """The certificate folder and timing.json; returns the verdict, followers proved, work and counterexamples."""
    p = ctx.params
    pl = Platoon.from_json(read_json(ctx.input("prepare", PLATOON_FILE)))
    trained = f"train_{domain}"
    weights, info = ctx.input(trained, VECTOR_MODEL_FILE), ctx.input(trained, VECTOR_TRAIN_FILE)
    vc, policy, arch = load_trained(weights, info, pl)
    res = verify_vector(vc, policy, pl, domain == "reach", p.budget, lambda it: ctx.progress(it, desc="followers"))
    write_certificate(ctx.out, vc, policy, pl, arch, p.budget, res)
    write_json(ctx.output(TIMING_FILE), res["timing"])
    s = res["summary"]
    return {"verified": float(s["verified"]), "followers_verified": sum(q["verified"] for q in s["per_vehicle"]),
            "bounds": sum(q["bounds"] for q in s["per_vehicle"]), "counterexamples": len(res["counterexamples"])}
