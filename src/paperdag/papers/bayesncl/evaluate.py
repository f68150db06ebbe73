"""Stage ``evaluate``: measure every pretrained network, the supervised upper bound and the raw-pixel probe
(assess.py), aggregate over seeds, plot, and judge the claims (claims.py). In the pilot profile (plans.pilot.run) it
measures the pilot's per-part spreads and the seed plan they give (pilot.py) and judges no claim but the plan's
check."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paperdag.claims import write_metrics
from paperdag.common.stats import mean_ci
from paperdag.io import load_tensors, save_figure, write_table
from paperdag.stage import StageContext

from .assess import Split, encoder_probe, measure, pixel_probe
from .claims import claims, plans_check
from .data import N_CLASSES, load_counterfactuals, load_split
from .networks import Classifier
from .params import Params
from .pilot import effects, part_names, seed_plan, spreads
from .plots import plot_summary, plot_top_activations
from .prepare import COUNTERFACTUAL_FILE, DATA_FILE
from .pretrain import initial
from .train import SUPERVISED, WEIGHTS_FILE, recipe, run_seed

UNTRAINED = "untrained"  # the trivial baseline: the same encoder at its initialisation
GATE = "gate{}"  # BayesNCL at point k of the gate grid (stage gate_<dataset>_<k>)


def supervised_probes(ctx: StageContext[Params], dataset: str, train: Split, test: Split) -> np.ndarray:
    """Per seed, the linear-probe accuracy of the supervised encoder (stage train_supervised_<dataset>)."""
    p, e = ctx.params, ctx.params.evaluate
    state = load_tensors(ctx.input(f"train_{SUPERVISED}_{dataset}", WEIGHTS_FILE))
    out = []
    for s in range(p.train.n_seeds):
        net = Classifier(p.train.width, N_CLASSES[dataset])
        net.load_state_dict({k.split(".", 1)[1]: v for k, v in state.items() if k.startswith(f"s{s}.")})
        out.append(encoder_probe(net.encoder.to(ctx.device), train, test, e.probe_c, e.probe_max_iter, e.embed_batch))
    return np.array(out)


def evaluate(ctx: StageContext[Params], methods: list[str], datasets: list[str]) -> dict[str, float]:
    """results.parquet (one row per dataset, method, seed), summary.png, top_activations_<dataset>.png, metrics."""
    p, e = ctx.params, ctx.params.evaluate
    r = recipe(p.train)
    rows, acts, pixels, supervised = [], {}, {}, {}
    for dataset in datasets:
        splits = {s: load_split(ctx.input("prepare", DATA_FILE), dataset, s, p.data.image_size) for s in ("train", "test")}
        train, test = (Split(d["x"].to(ctx.device), d["label"].numpy(), d["background"].numpy()) for d in splits.values())
        pixels[dataset] = pixel_probe(train, test, e.probe_c, e.probe_max_iter)
        supervised[dataset] = supervised_probes(ctx, dataset, train, test)
        counter = load_counterfactuals(ctx.input("prepare", COUNTERFACTUAL_FILE), dataset, p.data.image_size)
        grid = [(GATE.format(k), f"gate_{dataset}_{k}", p.sweep.n_seeds) for k in range(len(p.sweep.points))
                if p.sweep.n_seeds]
        for method, stage, n_seeds in [(UNTRAINED, None, p.train.n_seeds),
                                       *((m, f"train_{m}_{dataset}", p.train.n_seeds) for m in methods), *grid]:
            kind = "simclr" if method == UNTRAINED else "bayesncl" if method.startswith("gate") else method
            state = None if stage is None else load_tensors(ctx.input(stage, WEIGHTS_FILE))
            for s in ctx.progress(range(n_seeds), desc=f"{dataset} {method}"):
                net = initial(kind, r, run_seed(p.seed, dataset, p.train.first_seed + s))
                if state is not None:
                    net.load_state_dict({k.split(".", 1)[1]: v for k, v in state.items() if k.startswith(f"s{s}.")})
                row, f = measure(net.to(ctx.device), kind, train, test, counter.to(ctx.device), e.top_m, e.tau,
                                 e.activated_eps, e.probe_c, e.probe_max_iter, e.embed_batch)
                rows.append({"dataset": dataset, "method": method, "seed": p.train.first_seed + s} | row)
                if s == 0 and method in methods:
                    acts[dataset, method] = f
        save_figure(plot_top_activations(acts, dataset, methods, splits["test"]["x"].numpy(), test.label, e.show_dims,
                                         e.show_top, e.top_m, e.tau), ctx.output(f"top_activations_{dataset}.png"))
    write_table(ctx.output("results.parquet"), pa.Table.from_pylist(rows))
    grid = [GATE.format(k) for k in range(len(p.sweep.points)) if p.sweep.n_seeds]
    summary = {(d, m, k): mean_ci([row[k] for row in rows if row["dataset"] == d and row["method"] == m], unit="seed")
               for d in datasets for m in [UNTRAINED, *methods, *grid] for k in rows[0]
               if k not in ("dataset", "method", "seed")}
    summary |= {(d, SUPERVISED, "probe_acc"): mean_ci(v, unit="seed") for d, v in supervised.items()}
    metrics = {f"{d}_{m}_{k}": v.mean for (d, m, k), v in summary.items()}
    metrics |= {f"{d}_raw_pixel_probe_acc": v for d, v in pixels.items()}
    runs = {key: np.array([row[key[2]] for row in sorted(rows, key=lambda r: r["seed"])
                           if (row["dataset"], row["method"]) == key[:2]]) for key in summary}
    runs |= {(d, SUPERVISED, "probe_acc"): v for d, v in supervised.items()}
    released, pilot = (p.train.p0, p.train.gate_lr), p.plans.pilot
    sd = spreads(runs, datasets) if pilot.run else pilot.sd  # the pilot measures; a judged run reads the declared
    plan = None if sd is None else seed_plan(sd, effects(list(sd), pilot.share_effect, p.claims.probe_tol_pp,
                                                         p.claims.gate_kept_max), pilot.power)
    if plan is not None:
        metrics |= {f"pilot_sd_{k}": v for k, v in sd.items()} | {f"plan_n_{k}": v for k, v in plan.n.items()}
        metrics |= {"plan_n": plan.planned, "pilot_n": pilot.n_seeds}
    checked = [plans_check(plan, p.plans, part_names(datasets), pilot.run)]
    write_metrics(ctx.out, metrics, checked if pilot.run else [
        *claims(runs, pixels, methods, datasets, UNTRAINED, SUPERVISED, p.claims, p.plans,
                {GATE.format(k): pt for k, pt in enumerate(p.sweep.points) if p.sweep.n_seeds}, released), *checked])
    save_figure(plot_summary(summary, datasets, methods, UNTRAINED, SUPERVISED), ctx.output("summary.png"))
    return {k: v for k, v in metrics.items() if k.endswith(("consistency", "probe_acc"))}

