"""Stage ``standard_draws``: the standard schemes' precondition averaged over the schemes' own randomness.

Error-minimising and synthetic noise are random constructions (EM: its generator network's initialisation and
mini-batches; synthetic: the class means mu_k and the within-class draws), and one draw of EM noise can be much
weaker than another. So the precondition "the standard schemes make the data unlearnable" is judged on n
independent replicates i = 0..n-1, each one noise draw and one victim seed:

    r_i = root + i           the noise seed (EM network init, its mini-batches, the synthetic means and draws)
    v_i = 1000 seed + i      the victim seed (init and shuffle; the ``none`` victims of retrain.py use the same)
    d_i(s) = acc(victim v_i trained on scheme s's draw r_i) - f acc(victim v_i trained on clean data)

with f = claims.unlearn_frac and no defense. The d_i(s) are i.i.d. over i, so their Student-t interval carries the
variance between noise draws as well as between victims (the main grid's em / synthetic columns are one draw each,
reused by every defense).
"""

from __future__ import annotations

import torch

from paperdag.io import load_tensors, write_table
from paperdag.stage import StageContext

from .baselines import error_minimising_noise, synthetic_noise
from .network import ConvNet, accuracy, train_stacked
from .params import NetParams, Params
from .prepare import DATA_FILE
from .surrogate import CLASSES

DRAWS_FILE = "draws.parquet"


def standard_draws(ctx: StageContext[Params]) -> dict[str, float]:
    """draws.parquet: draw, noise_seed, victim_seed, em_rounds and the test accuracy of the clean, em and
    synthetic victims of each replicate."""
    p, q, eps = ctx.params, ctx.params.baselines, ctx.params.budget.eps
    data = load_tensors(ctx.input("prepare", DATA_FILE), ctx.device)
    x, y = data["x_train"], data["y_train"]
    root = int(ctx.rng.integers(2**31 - p.draws))
    noise_seeds = [root + i for i in range(p.draws)]
    victim_seeds = [p.seed * 1000 + i for i in range(p.draws)]
    inputs: dict[str, list[torch.Tensor]] = {"clean": [x] * p.draws, "em": [], "synthetic": []}
    rounds = []
    for r in ctx.progress(noise_seeds, desc="standard draws"):
        inputs["synthetic"].append(synthetic_noise(x, y, CLASSES, eps, q.synthetic_patch, q.synthetic_spread,
                                                   torch.Generator().manual_seed(r)))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(r)
            model = ConvNet(3, x.shape[-1], p.net.width, CLASSES).to(ctx.device)
        x_em, used = error_minimising_noise(model, x, y, eps, q.em_rounds, q.em_train_steps, q.em_pgd_steps,
                                           p.net.batch, p.net.lr, q.em_stop_acc, torch.Generator().manual_seed(r))
        inputs["em"].append(x_em)
        rounds.append(used)
    rows = {"draw": list(range(p.draws)), "noise_seed": noise_seeds, "victim_seed": victim_seeds, "em_rounds": rounds}
    for scheme, xs in inputs.items():  # one stack per scheme: victim v_i on replicate i's training set
        rows[scheme] = victim_accuracies(xs, y, data["x_test"], data["y_test"], victim_seeds, p.net)
    write_table(ctx.output(DRAWS_FILE), rows)
    return {f"test_acc_{s}": sum(rows[s]) / p.draws for s in inputs} | {"em_rounds": sum(rounds) / p.draws}


def victim_accuracies(xs: list[torch.Tensor], y: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor,
                      seeds: list[int], net: NetParams) -> list[float]:
    """Test accuracy of victim seeds[i] (init and shuffle seeded as in victims.train_victims) trained with no
    defense on xs[i], all trained together (network.train_stacked)."""
    models = []
    for seed in seeds:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            models.append(ConvNet(xs[0].shape[1], xs[0].shape[-1], net.width, CLASSES).to(y.device))
    trained = train_stacked(models, torch.stack(xs), y, net.epochs, net.batch, net.lr,
                            [torch.Generator().manual_seed(s) for s in seeds])
    return [accuracy(m, x_test, y_test) for m in trained]
