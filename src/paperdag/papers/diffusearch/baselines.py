"""Stage ``baselines``: the statement-count table's accuracy, the majority answer digit's (the next rung of the
answer's trivial ladder) and the MDM decoded in the oracle (dependency) order (reference.py), for every trained MDM
seed: what the claims' preconditions compare the decoders against."""

from __future__ import annotations

import numpy as np

from paperdag.common.tokenizer import decode as detokenize
from paperdag.io import load_tensors, read_table, write_json
from paperdag.stage import StageContext

from .data import load_split
from .decoding import ALPHABET, drive
from .models import build, predictor
from .params import Params
from .prepare import DATA_FILE
from .reference import count_table_hits, dependency_order, fit_count_table, ordered_infill, statements
from .task import answer_value, slot_positions
from .train import WEIGHTS_FILE, model_config

BASELINES_FILE = "baselines.json"


def _split(table: dict[str, list], split: str) -> tuple[list[str], list[str]]:
    """(prompts, answers) of one split of the program table."""
    rows = [i for i, s in enumerate(table["split"]) if s == split]
    return [table["prompt"][i] for i in rows], [table["answer"][i] for i in rows]


def baselines(ctx: StageContext[Params]) -> dict[str, float]:
    """baselines.json: count-table slot and answer accuracy on the test programs, the accuracy of the training
    programs' most frequent answer digit (ties: the smaller) on them, the share of test programs listed in dependency
    order, the oracle-order accuracy of each MDM seed (ascending seed) and the slot count S."""
    p, k = ctx.params, ctx.params.data.n_statements
    table = read_table(ctx.input("prepare", DATA_FILE)).to_pydict()
    counts, default = fit_count_table(*_split(table, "train"), k)
    hits = count_table_hits(counts, default, *_split(table, "test"), k)
    majority = int(np.bincount([int(a[-1]) for a in _split(table, "train")[1]], minlength=10).argmax())
    x, answers, sequential, start = load_split(ctx.input("prepare", DATA_FILE), "test")
    slots = slot_positions(k)
    orders = [dependency_order(statements(detokenize(row[:start]), k)) for row in x]
    weights = load_tensors(ctx.input("train_mdm", WEIGHTS_FILE), ctx.device)
    oracle = []
    for seed in range(p.seed, p.seed + p.train.seeds):
        model = build("mdm", model_config(p, x.shape[1])).to(ctx.device)
        model.load_state_dict({n[len(f"s{seed}."):]: v for n, v in weights.items() if n.startswith(f"s{seed}.")})
        predict = predictor(model.eval(), "mdm", start, x.shape[1] - start, ALPHABET, ctx.device)
        outs = drive([ordered_infill(row, start, slots, o) for row, o in zip(x, orders, strict=True)], predict,
                     p.search.chunk)
        oracle.append(float(np.mean([answer_value(o.tokens, start, k) == a for o, a in zip(outs, answers,
                                                                                          strict=True)])))
    out = {"count_slot_accuracy": float(hits.mean()), "count_answer_accuracy": float(hits[:, -1].mean()),
           "majority_answer_accuracy": float(np.mean(answers == majority)),
           "dependency_ordered_share": float(np.mean(sequential)), "oracle_accuracy": oracle, "slots": len(slots)}
    write_json(ctx.output(BASELINES_FILE), out)
    return {"count_answer_accuracy": out["count_answer_accuracy"], "oracle_accuracy_mean": float(np.mean(oracle))}
