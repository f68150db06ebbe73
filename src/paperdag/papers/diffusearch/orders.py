"""Stage ``orders``: the order study (study.py) on ``study.n_test`` fresh held-out programs, for every trained seed:
each program's outcome under every slot order, the MDM's forward one-hop and filled-minus-masked gain, the AR's
value-slot one-hop, and the count table's and majority digit's hits on the same programs."""

from __future__ import annotations

import numpy as np

from paperdag.common.tokenizer import decode as detokenize
from paperdag.io import load_tensors, read_table, write_table
from paperdag.stage import StageContext

from .decoding import ALPHABET, drive
from .models import build, predictor
from .params import Params
from .prepare import DATA_FILE
from .reference import count_table_hits, fit_count_table
from .study import all_orders, dependency_orders, draw_study_programs, forward_hits, mechanism_gain, order_tree
from .task import answer_value, slot_positions
from .train import WEIGHTS_FILE, model_config

STUDY_FILE = "study.parquet"


def _model(ctx: StageContext[Params], weights: dict, kind: str, seed: int, length: int, start: int):
    model = build(kind, model_config(ctx.params, length)).to(ctx.device)
    model.load_state_dict({n[len(f"s{seed}."):]: v for n, v in weights.items() if n.startswith(f"s{seed}.")})
    return predictor(model.eval(), kind, start, length - start, ALPHABET, ctx.device)


def orders(ctx: StageContext[Params]) -> dict[str, float]:
    """study.parquet: one row per (seed, program), columns in the order written below."""
    p, k, chunk = ctx.params, ctx.params.data.n_statements, ctx.params.search.chunk
    table = read_table(ctx.input("prepare", DATA_FILE)).to_pydict()
    train = [i for i, s in enumerate(table["split"]) if s == "train"]
    prompts, answer_texts = [table["prompt"][i] for i in train], [table["answer"][i] for i in train]
    x, answers, in_order, start = draw_study_programs(ctx.rng, k, p.data.p_var, p.data.shuffle_prob, p.study.n_test,
                                                      set(prompts))
    slots, orders_ = slot_positions(k), all_orders(k + 1)
    counts, default = fit_count_table(prompts, answer_texts, k)
    hits = count_table_hits(counts, default, [detokenize(r[:start]) for r in x], [detokenize(r[start:]) for r in x], k)
    value_digits = np.array([[int(a[2 * i + 1]) for i in range(k)] for a in answer_texts]).ravel()
    majority = int(np.bincount(value_digits, minlength=10).argmax())
    majority_hits = (x[:, start + slots[:k]] - ord("0")) == majority
    majority_answer = int(np.bincount([int(a[-1]) for a in answer_texts], minlength=10).argmax())
    dep = [orders_.index(tuple(o)) for o in dependency_orders(x, start, k)]
    rand = ctx.rng.integers(len(orders_), size=len(x))
    weights = {kind: load_tensors(ctx.input(f"train_{kind}", WEIGHTS_FILE), ctx.device) for kind in ("mdm", "ar")}
    cols: dict[str, list] = {}
    for seed in range(p.seed, p.seed + p.train.seeds):
        mdm = _model(ctx, weights["mdm"], "mdm", seed, x.shape[1], start)
        ar = _model(ctx, weights["ar"], "ar", seed, x.shape[1], start)
        trees = drive([order_tree(row, start, slots) for row in x], mdm, chunk)
        solved = np.array([[answer_value(r, start, k) == a for r in rows] for (rows, _), a in zip(trees, answers,
                                                                                                   strict=True)])
        conf = np.array([orders_.index(c) for _, c in trees])
        forward = forward_hits(mdm, x, start, slots, chunk)
        gain, gain_right = mechanism_gain(mdm, x, start, slots, chunk)
        ar_scores = np.concatenate([ar(x[lo:lo + chunk]) for lo in range(0, len(x), chunk)])
        ar_hits = ALPHABET[ar_scores[:, slots[:k]].argmax(-1)] == x[:, start + slots[:k]]
        n = np.arange(len(x))
        rows = {"seed": [seed] * len(x), "task": n.tolist(), "in_order": in_order.tolist(),
                "forward": forward.mean(1).tolist(), "gain": gain.tolist(), "gain_right": gain_right.tolist(),
                "ar_value": ar_hits.mean(1).tolist(), "count_value": hits[:, :k].mean(1).tolist(),
                "count_answer": hits[:, k].tolist(), "majority_value": majority_hits.mean(1).tolist(),
                "majority_answer": (answers == majority_answer).tolist(),
                "dependency": solved[n, dep].tolist(), "l2r": solved[:, 0].tolist(),
                "confidence": solved[n, conf].tolist(), "random": solved[n, rand].tolist(),
                "any_order": solved.any(1).tolist(), "every_order": [r.tolist() for r in solved]}
        for key, v in rows.items():
            cols.setdefault(key, []).extend(v)
        ctx.report("order study seeds", seed - p.seed + 1, p.train.seeds)
    write_table(ctx.output(STUDY_FILE), cols)
    return {"programs": float(len(x)), "out_of_order_share": float(1 - in_order.mean())}
