"""Stage ``verify``: every reported proof re-checked from scratch by the checker (proofcheck.py), from the proof
tables alone, with a fresh checker (no verdict is carried over from the searches). Its folder is a self-contained
certificate that ``paperdag verify sketchrefine`` re-checks (reverify.py)."""

from __future__ import annotations

from importlib.metadata import version

import pyarrow as pa

from paperdag.io import read_table, write_json, write_table
from paperdag.stage import StageContext

from .params import Params
from .prepare import THEOREMS_FILE
from .prove import PROOF_SCHEMA, PROOFS_FILE
from .reverify import CERTIFICATE_FILE, PROOFS, THEOREMS, VERIFIED_FILE, check_proofs
from .theorems import theorems_from_rows

VERIFIED_SCHEMA = pa.schema([("method", pa.string()), ("theorem", pa.string()), ("seed", pa.int64()),
                             ("ok", pa.bool_()), ("reason", pa.string())])


def verify(ctx: StageContext[Params], methods: list[str]) -> dict[str, float]:
    """verified.parquet (method, theorem, seed, ok, reason: empty when accepted), and the certificate the verdicts
    come from: theorems.parquet, proofs.parquet (every method's proofs) and certificate.json (the rlimit)."""
    theorems = read_table(ctx.input("prepare", THEOREMS_FILE))
    proofs = [r | {"method": m} for m in methods
              for r in read_table(ctx.input(f"prove_{m}", PROOFS_FILE)).to_pylist()]
    rows = check_proofs(theorems_from_rows(theorems.to_pylist()), proofs, ctx.params.rlimit)
    write_table(ctx.output(THEOREMS), theorems)
    write_table(ctx.output(PROOFS), pa.Table.from_pylist(
        proofs, schema=pa.schema([("method", pa.string()), *PROOF_SCHEMA])))
    write_table(ctx.output(VERIFIED_FILE), pa.Table.from_pylist(rows, schema=VERIFIED_SCHEMA))
    write_json(ctx.output(CERTIFICATE_FILE), {"rlimit": ctx.params.rlimit,
                                              "checker": f"z3-solver {version('z3-solver')}"})
    return {"proofs": float(len(rows)), "rejected": float(sum(not r["ok"] for r in rows))}
