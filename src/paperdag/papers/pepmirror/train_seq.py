"""Stage ``train_seq``: fit the contact-based residue classifier (seqhead.py) on the training peptides and report
its native-sequence recovery on the held-out targets against the majority-class baseline."""

from __future__ import annotations

import numpy as np

from paperdag.io import read_table, save_tensors
from paperdag.stage import StageContext

from .params import Params
from .prepare import EXAMPLES_FILE
from .seqhead import accuracy, fit_classifier, rows_to_xy

SEQHEAD_FILE = "seqhead.safetensors"


def train_seq(ctx: StageContext[Params]) -> dict[str, float]:
    """seqhead.safetensors; returns training accuracy, held-out native recovery and the majority-class baseline."""
    p = ctx.params
    rows = read_table(ctx.input("prepare", EXAMPLES_FILE)).to_pylist()
    x, y = rows_to_xy([r for r in rows if r["split"] == "train"], p.contact_dist)
    xt, yt = rows_to_xy([r for r in rows if r["split"] == "target"], p.contact_dist)
    net = fit_classifier(x, y, p.seqhead, ctx.rng, ctx.device, ctx.log_metric,
                         lambda steps: ctx.progress(steps, desc="seq head"))
    save_tensors(ctx.output(SEQHEAD_FILE), net.state_dict())
    return {"seq_train_acc": accuracy(net, x, y, ctx.device),
            "seq_heldout_native_recovery": accuracy(net, xt, yt, ctx.device),
            "seq_heldout_majority_class_baseline": float((yt == np.bincount(y, minlength=20).argmax()).mean())}
