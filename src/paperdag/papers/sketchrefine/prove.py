"""Stage ``prove_<method>``: one proof search per (theorem, proposer seed) at the largest budget.

There is no trained model (the proposer is a seeded error model); this stage is the experiment's "train" step.
The proposer's generator is seeded by (seed, proposer seed, theorem), the same for every method, so all methods
start from the same first sketch.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.io import read_table, write_table
from paperdag.stage import StageContext

from .checker import Checker
from .params import Params
from .prepare import THEOREMS_FILE
from .proposer import ErrorRates, Proposer
from .search import Search
from .theorems import theorems_from_rows

RUNS_FILE = "runs.parquet"
PROOFS_FILE = "proofs.parquet"
EDITS = ("replace", "insert", "decompose", "delete", "regenerate_subtree", "regenerate")
PROOF_SCHEMA = pa.schema([("theorem", pa.string()), ("seed", pa.int32()), ("node", pa.string()), ("var", pa.string()),
                          ("lo", pa.string()), ("hi", pa.string()), ("cites", pa.list_(pa.string()))])


def prove(ctx: StageContext[Params], method: str) -> dict[str, float]:
    """runs.parquet (per run: solved, tokens emitted and read, checker calls, rounds, reuse counts, edits) and
    proofs.parquet (the final sketch of every solved run)."""
    p = ctx.params
    theorems = theorems_from_rows(read_table(ctx.input("prepare", THEOREMS_FILE)).to_pylist())
    rates = ErrorRates(**p.rates.model_dump() | {"tighten": tuple(p.rates.tighten)})
    checker = Checker(p.rlimit)
    runs, proofs = [], []
    for seed, (j, t) in ctx.progress([(s, jt) for s in range(p.seeds) for jt in enumerate(theorems)], desc=method):
        calls = checker.calls
        proposer = Proposer(t, rates, np.random.default_rng([p.seed, seed, j]))
        run = Search(proposer, checker, p.max_budget).run(method)
        runs.append({"theorem": t.name, "lemmas": len(t.lemma_vars), "seed": seed, "solved": run.solved,
                     "tokens": run.tokens, "read": run.read, "checker_calls": checker.calls - calls, "rounds": run.rounds,
                     "proved_before": run.proved_before, "preserved": run.preserved}
                    | {e: run.edits[e] for e in EDITS})
        if run.solved:
            proofs += [r | {"theorem": t.name, "seed": seed} for r in run.sketch.proof_rows()]
    write_table(ctx.output(RUNS_FILE), pa.Table.from_pylist(runs))
    write_table(ctx.output(PROOFS_FILE), pa.Table.from_pylist(proofs, schema=PROOF_SCHEMA))
    return {"solved": float(sum(r["solved"] for r in runs)), "runs": float(len(runs)),
            "checker_calls": float(checker.calls), "solver_runs": float(len(checker.memo))}
