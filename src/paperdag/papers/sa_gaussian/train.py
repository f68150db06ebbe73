"""Stage ``train_<setting>``: simulate the chains to stationarity at every stepsize and save the scaled states y."""

from __future__ import annotations

import torch

from paperdag.io import read_json, save_tensors, write_json
from paperdag.stage import StageContext

from .dynamics import simulate
from .params import Params
from .prepare import SETTINGS_FILE
from .problems import Problem

SAMPLES_FILE = "samples.safetensors"
STEADY_FILE = "steady.json"


def train(ctx: StageContext[Params], setting: str) -> dict[str, float]:
    """samples.safetensors ({"y_i": n x d float32 per stepsize i}) and steady.json (alphas, steps, E|y|^2 drift)."""
    s = ctx.params.sim
    pr = Problem.from_json(read_json(ctx.input("prepare", SETTINGS_FILE))[setting])
    alphas = s.quartic_alphas if pr.drift == "quartic" else (s.alphas_1d if pr.dim == 1 else s.alphas)
    n = s.chains_quartic if pr.drift == "quartic" else (s.chains_1d if pr.dim == 1 else s.chains_2d)
    gen = torch.Generator(device=ctx.device).manual_seed(int(ctx.rng.integers(2**62)))
    samples, steady = {}, []
    for i, alpha in enumerate(ctx.progress(alphas, desc=f"{setting} stepsizes")):
        st = simulate(pr, alpha, n, s.burn_in_nats, s.start_offset, gen, ctx.device)
        samples[f"y_{i}"] = st.y.to(torch.float32)
        steady.append(dict(alpha=alpha, steps=st.steps, m2_three_quarters=st.m2_three_quarters, m2_end=st.m2_end))
        ctx.log_metric("second_moment", st.m2_end, step=i, run=setting)
    save_tensors(ctx.output(SAMPLES_FILE), samples, metadata={"setting": setting})
    write_json(ctx.output(STEADY_FILE), {"setting": setting, "chains": n, "stepsizes": steady})
    return {"chains": float(n), "steps": float(sum(r["steps"] for r in steady))}
