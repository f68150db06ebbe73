"""Stage ``train_<kind>``: train ``train.seeds`` models of one kind (MDM or AR) on the same programs and budget."""

from __future__ import annotations

from paperdag.common.transformer import GPTConfig
from paperdag.io import save_tensors, write_json
from paperdag.stage import StageContext

from .data import load_split
from .models import n_params
from .params import Params
from .prepare import DATA_FILE
from .task import slot_positions
from .training import majority_accuracy, slot_accuracy, train as fit

WEIGHTS_FILE = "models.safetensors"
SANITY_FILE = "sanity.json"


def model_config(p: Params, length: int) -> GPTConfig:
    """The shared transformer shape (byte vocabulary; the MDM adds [MASK])."""
    return GPTConfig(context=length, n_layer=p.model.n_layer, n_head=p.model.n_head, d_model=p.model.d_model)


def train(ctx: StageContext[Params], kind: str) -> dict[str, float]:
    """models.safetensors (``s{seed}.<param>``) and sanity.json (one-hop slot accuracy per seed vs majority)."""
    p, t = ctx.params, ctx.params.train
    x, _, _, start = load_split(ctx.input("prepare", DATA_FILE), "train")
    x_test, _, _, _ = load_split(ctx.input("prepare", DATA_FILE), "test")
    slots = slot_positions(p.data.n_statements)
    tensors, acc = {}, []
    for s in range(t.seeds):
        seed = p.seed + s
        def log(name: str, value: float, step: int) -> None:
            ctx.log_metric(name, value, step, run=f"{kind}_s{seed}", params={"kind": kind, "seed": seed})
            ctx.report(f"{kind} seed {seed}", step, t.steps)
        model = fit(kind, model_config(p, x.shape[1]), x, start, t.steps, t.batch_size, t.lr, t.warmup, seed,
                    ctx.device, log, t.log_every)
        acc.append(slot_accuracy(model, kind, x_test, start, slots, ctx.device))
        tensors |= {f"s{seed}.{k}": v.cpu() for k, v in model.state_dict().items()}
    baseline = majority_accuracy(x, x_test, start, slots)
    write_json(ctx.output(SANITY_FILE), {"slot_accuracy": acc, "majority_baseline": baseline,
                                         "n_params": n_params(model)})
    save_tensors(ctx.output(WEIGHTS_FILE), tensors, metadata={"kind": kind})
    return {"slot_accuracy_min": min(acc), "majority_baseline": baseline}
