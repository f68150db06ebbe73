"""Stage ``decode``: every decoder (experiment.py) on every test program, for each trained (MDM, AR) pair."""

from __future__ import annotations

from paperdag.io import load_tensors, write_table
from paperdag.stage import StageContext

from .data import load_split
from .decoding import ALPHABET
from .experiment import run_decoders
from .mcts import Conventions
from .models import build, predictor
from .params import Params
from .prepare import DATA_FILE
from .task import slot_positions
from .train import WEIGHTS_FILE, model_config

RESULTS_FILE = "results.parquet"


def decode(ctx: StageContext[Params]) -> dict[str, float]:
    """results.parquet: seed, task, decoder, solved, trace_exact, forwards, sequential, order, task_sequential."""
    p, s = ctx.params, ctx.params.search
    x, answers, sequential, start = load_split(ctx.input("prepare", DATA_FILE), "test")
    slots = slot_positions(p.data.n_statements)
    grid = [(c, n) for c in s.c_grid for n in s.sim_grid]
    conv = Conventions(s.tie_break, s.q_init, s.reward_norm)
    weights = {k: load_tensors(ctx.input(f"train_{k}", WEIGHTS_FILE), ctx.device) for k in ("mdm", "ar")}
    table: dict[str, list] = {}
    for i in range(p.train.seeds):
        seed = p.seed + i
        predict = {}
        for kind in ("mdm", "ar"):
            model = build(kind, model_config(p, x.shape[1])).to(ctx.device)
            prefix = f"s{seed}."
            model.load_state_dict({k[len(prefix):]: v for k, v in weights[kind].items() if k.startswith(prefix)})
            predict[kind] = predictor(model.eval(), kind, start, x.shape[1] - start, ALPHABET, ctx.device)
        cols = run_decoders(x, answers, start, slots, grid, conv, predict["mdm"], predict["ar"], s.chunk, s.block,
                            ctx.rng, lambda done: ctx.report(f"seed {seed} tasks", done, len(x)))
        cols |= {"seed": [seed] * len(cols["task"]), "task_sequential": [bool(sequential[t]) for t in cols["task"]]}
        for k, v in cols.items():
            table.setdefault(k, []).extend(v)
    write_table(ctx.output(RESULTS_FILE), table)
    return {"rows": float(len(table["task"]))}
