"""Stage ``export``: the benchmark itself, the accepted tasks (certificate accepted, rule validated), as Parquet
and JSON Lines with task, demos, answer, program and certificate."""

from __future__ import annotations

import json

import pyarrow.compute as pc

from paperdag.io import read_table, write_table
from paperdag.stage import StageContext

from .params import Params
from .verify import CERTIFICATES_FILE

BENCHMARK_FILE = "benchmark.parquet"
JSONL_FILE = "benchmark.jsonl"
CERT_FIELDS = ("cycle", "checked_inputs", "consistent", "min_depth", "answers", "unique")


def export(ctx: StageContext[Params]) -> dict[str, float]:
    """benchmark.parquet and benchmark.jsonl (grids as nested lists, the certificate as a nested record)."""
    table = read_table(ctx.input("verify", CERTIFICATES_FILE))
    keep = pc.and_(table["accepted"], table["rule_valid"])
    write_table(ctx.output(BENCHMARK_FILE), table.filter(keep))
    rows = table.filter(keep).to_pylist()
    with open(ctx.output(JSONL_FILE), "w") as f:
        for r in rows:
            grids = {k: json.loads(r[k]) for k in ("demos_in", "demos_out", "query", "answer")}
            f.write(json.dumps({"task_id": r["task_id"], "dim": r["dim"], "variant": r["variant"],
                                "demos": [{"input": x, "output": y}
                                          for x, y in zip(grids["demos_in"], grids["demos_out"])],
                                "query": grids["query"], "answer": grids["answer"], "program": r["program"],
                                "certificate": {k: r[k] for k in CERT_FIELDS}}) + "\n")
    return {"exported": float(len(rows)), "rejected": float(table.num_rows - len(rows))}
