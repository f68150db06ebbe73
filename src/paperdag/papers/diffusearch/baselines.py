"""Stage ``baselines``: the statement-count table's accuracy and the majority answer digit's (the next rung of the
answer's trivial ladder) on the decode stage's test programs (reference.py): what the decoders' competence
preconditions compare against. The oracle orders are the order study's (stage ``orders``)."""

from __future__ import annotations

import numpy as np

from paperdag.io import read_table, write_json
from paperdag.stage import StageContext

from .params import Params
from .prepare import DATA_FILE
from .reference import count_table_hits, fit_count_table

BASELINES_FILE = "baselines.json"


def _split(table: dict[str, list], split: str) -> tuple[list[str], list[str]]:
    """(prompts, answers) of one split of the program table."""
    rows = [i for i, s in enumerate(table["split"]) if s == split]
    return [table["prompt"][i] for i in rows], [table["answer"][i] for i in rows]


def baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """baselines.json: count-table slot and answer accuracy on the test programs, the accuracy of the training
    programs' most frequent answer digit (ties: the smaller) on them, the share of test programs listed in dependency
    order and the slot count S."""
    k = ctx.params.data.n_statements
    table = read_table(ctx.input("prepare", DATA_FILE)).to_pydict()
    counts, default = fit_count_table(*_split(table, "train"), k)
    test = _split(table, "test")
    hits = count_table_hits(counts, default, *test, k)
    majority = int(np.bincount([int(a[-1]) for a in _split(table, "train")[1]], minlength=10).argmax())
    answers = np.array([int(a[-1]) for a in test[1]])
    sequential = [s for s, split in zip(table["sequential"], table["split"], strict=True) if split == "test"]
    out = {"count_slot_accuracy": float(hits.mean()), "count_answer_accuracy": float(hits[:, -1].mean()),
           "majority_answer_accuracy": float(np.mean(answers == majority)),
           "dependency_ordered_share": float(np.mean(sequential)), "slots": k + 1}
    write_json(ctx.output(BASELINES_FILE), out)
    return {"count_answer_accuracy": out["count_answer_accuracy"]}
