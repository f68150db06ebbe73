"""Stage ``train_surrogate``: one clean training run whose checkpoints form the surrogate ensemble."""

from __future__ import annotations

import torch

from paperdag.io import load_tensors, save_tensors, write_json
from paperdag.stage import StageContext

from .network import ConvNet, accuracy, train_classifier
from .params import Params
from .prepare import DATA_FILE

ENSEMBLE_FILE = "ensemble.safetensors"
CLASSES = 10


def train_surrogate(ctx: StageContext[Params]) -> dict[str, float]:
    """ensemble.safetensors ({"m<j>.<param>": ...} for each checkpoint epoch) and sanity.json (test accuracies)."""
    p = ctx.params
    data = load_tensors(ctx.input("prepare", DATA_FILE), ctx.device)
    model = ConvNet(3, data["x_train"].shape[-1], p.net.width, CLASSES).to(ctx.device)
    weights, acc = {}, {}

    def keep(epoch: int, m: torch.nn.Module) -> None:
        if epoch in p.surrogate.checkpoints:
            j = p.surrogate.checkpoints.index(epoch)
            weights.update({f"m{j}.{k}": v.clone() for k, v in m.state_dict().items()})
            acc[f"test_acc_epoch{epoch}"] = accuracy(m, data["x_test"], data["y_test"])
            ctx.log_metric("surrogate_test_acc", acc[f"test_acc_epoch{epoch}"], step=epoch)

    train_classifier(model, data["x_train"], data["y_train"], p.surrogate.epochs, p.net.batch, p.net.lr,
                     torch.Generator().manual_seed(p.seed), on_epoch=keep)
    save_tensors(ctx.output(ENSEMBLE_FILE), weights, metadata={"members": str(len(p.surrogate.checkpoints))})
    write_json(ctx.output("sanity.json"), acc | {"chance": 1 / CLASSES})
    return acc
