"""Stage ``verify``: every reported proof re-checked from scratch by the checker (proofcheck.py), from the proof
tables alone, with a fresh checker (no verdict is carried over from the searches)."""

from __future__ import annotations

import pyarrow as pa

from paperdag.io import read_table, write_table
from paperdag.stage import StageContext

from .checker import Checker
from .params import Params
from .prepare import THEOREMS_FILE
from .proofcheck import verify_proof
from .prove import PROOFS_FILE
from .theorems import theorems_from_rows

VERIFIED_FILE = "verified.parquet"


def verify(ctx: StageContext[Params], methods: list[str]) -> dict[str, float]:
    """verified.parquet: method, theorem, seed, ok, reason (empty when accepted)."""
    theorems = {t.name: t for t in theorems_from_rows(read_table(ctx.input("prepare", THEOREMS_FILE)).to_pylist())}
    checker = Checker(ctx.params.rlimit)
    rows = []
    for method in ctx.progress(methods, desc="methods"):
        grouped: dict[tuple[str, int], list[dict]] = {}
        for r in read_table(ctx.input(f"prove_{method}", PROOFS_FILE)).to_pylist():
            grouped.setdefault((r["theorem"], r["seed"]), []).append(r)
        for (name, seed), nodes in grouped.items():
            reason = verify_proof(theorems[name], nodes, checker)
            rows.append({"method": method, "theorem": name, "seed": seed, "ok": not reason, "reason": reason})
    schema = pa.schema([("method", pa.string()), ("theorem", pa.string()), ("seed", pa.int64()),
                        ("ok", pa.bool_()), ("reason", pa.string())])
    write_table(ctx.output(VERIFIED_FILE), pa.Table.from_pylist(rows, schema=schema))
    return {"proofs": float(len(rows)), "rejected": float(sum(not r["ok"] for r in rows))}
