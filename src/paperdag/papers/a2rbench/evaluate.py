"""Stage ``evaluate``: re-check the exported benchmark, score the solvers on P0 and P1, the verifier comparison,
the information analysis, the claims (claims.py) and the figures (plots.py)."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

from paperdag.claims import write_metrics
from paperdag.io import read_json, read_table, save_figure, write_json, write_table
from paperdag.stage import StageContext

from .claims import TRIVIAL, Measured, claims
from .export import BENCHMARK_FILE
from .params import Params
from .plots import plot_information, plot_solvers, plot_verifiers
from .prepare import SEEDS_FILE
from .primitives import DIMS
from .recheck import refutations
from .scoring import (PHASES, VERIFIERS, acceptance, accuracy, blind_success, cycle_valid_ambiguity,
                      density_budgets, equal_coverage_budgets, generated_complexity, information_ladders,
                      ladder_gmean, ladder_rho, ladder_steps, mean_cost, multi_program_share, pooled_rho,
                      llm_rows, llm_subsample, program_space, score, search_coverage, variant_mix)
from .solvers import SOLVERS
from .tasks import VARIANTS, from_row
from .verify import CERTIFICATES_FILE

LLM_FILE = "llm.json"


def evaluate(ctx: StageContext[Params]) -> dict[str, float]:
    """scores.parquet, ladder.parquet, llm.json (the LLM's replies; [] when off), metrics.json and three figures."""
    p, k = ctx.params, ctx.params.dsl.alphabet
    published = read_table(ctx.input("export", BENCHMARK_FILE)).to_pylist()
    tasks = [from_row(r) for r in published]
    certs = read_table(ctx.input("verify", CERTIFICATES_FILE)).to_pylist()
    benches = 1 + max(c["bench"] for c in certs)
    failed = len(refutations(published, k, p.dsl.max_depth, ctx.device))
    rows = score(ctx.progress(tasks, desc="solve"), (ctx.rng.permutation(k) for _ in tasks), p.dsl, p.solve,
                 ctx.device)
    llm = None
    if p.solve.llm_backend != "off":
        asked = llm_subsample(tasks, p.solve.llm_tasks)
        llm_scored, replies = llm_rows(asked, p.solve, ctx.device, lambda items: ctx.progress(items, desc="llm"))
        rows += llm_scored
        llm = _llm(rows, [t.task_id for t in asked], benches, p.solve, ctx.input("prepare", SEEDS_FILE))
        llm["replies"] = replies
    write_table(ctx.output("scores.parquet"), pa.Table.from_pylist(rows))
    write_json(ctx.output(LLM_FILE), llm["replies"] if llm else [])
    rules = [from_row(c) for c in certs if c["variant"] == "original" and c["cycle"]]
    ladders = information_ladders(ctx.rng, ctx.progress(rules, desc="ladder"), p.analysis.info_levels, p.dsl,
                                  p.tasks.n_demos, ctx.device)
    write_table(ctx.output("ladder.parquet"), pa.Table.from_pylist(ladders))

    solvers = SOLVERS
    acc = {s: {ph: accuracy(rows, benches, solver=s, phase=ph) for ph in PHASES} for s in solvers}
    acc_dims = {s: {d: accuracy(rows, benches, solver=s, phase="P0", dim=d) for d in DIMS} for s in solvers}
    orig = {s: {d: accuracy(rows, benches, solver=s, phase="P0", dim=d, variant="original") for d in DIMS}
            for s in solvers}
    budgets = equal_coverage_budgets(k, p.dsl.max_depth, p.solve.budget)
    complexity = generated_complexity(certs, benches)
    density = _density(published, k, p.dsl.max_depth)
    m = Measured(
        acceptance={v: {"lossy": acceptance(certs, v, True), "invertible": acceptance(certs, v, False)}
                    for v in VERIFIERS},
        rechecked=len(tasks), recheck_failed=failed, ambiguity=cycle_valid_ambiguity(certs),
        multi_program=multi_program_share(certs, ladders),
        spaces={d: program_space(d, k, p.dsl.max_depth) for d in DIMS}, budget=p.solve.budget, budgets=budgets,
        density=density, rho=ladder_rho(ladders, benches), rho_pooled=pooled_rho(certs, benches),
        ladder_gmean=ladder_gmean(ladders), acc=acc, acc_dim=orig["search"],
        acc_dim_equal={d: accuracy(rows, benches, max_cost=budgets[d], solver="search", phase="P0", dim=d,
                                   variant="original") for d in DIMS},
        acc_dim_density={d: accuracy(rows, benches, max_cost=density["budgets"], solver="search", phase="P0", dim=d,
                                     variant="original") for d in DIMS},
        rho_steps=ladder_steps(ladders, benches), trivial_dim={s: orig[s] for s in TRIVIAL},
        complexity=complexity["min_depth"], llm=llm,
        rule_depth=complexity["depth"])
    metrics = {"tasks_generated": len(certs), "tasks_exported": len(tasks), "recheck_failed": failed,
               "info_rho_within": float(m.rho.mean()),
               "info_rho_pooled": float(m.rho_pooled.mean()),
               "ambiguous_rejected": sum(m.ambiguity["ambiguous"].values())}
    metrics |= {f"accept_{v}_{kind}": m.acceptance[v][kind] for v in VERIFIERS for kind in ("lossy", "invertible")}
    metrics |= {f"acc_{s}_{ph}": float(np.nanmean(acc[s][ph])) for s in solvers for ph in PHASES}
    metrics |= {f"acc_search_{d}d": float(np.nanmean(acc_dims["search"][d])) for d in DIMS}
    metrics |= {f"acc_search_equal_{d}d": float(np.nanmean(m.acc_dim_equal[d])) for d in DIMS}
    metrics |= {f"acc_search_density_{d}d": float(np.nanmean(m.acc_dim_density[d])) for d in DIMS}
    metrics |= {f"cost_search_{d}d": mean_cost(rows, solver="search", phase="P0", dim=d) for d in DIMS}
    metrics |= {f"search_coverage_{d}d": v for d, v in search_coverage(k, p.dsl.max_depth, p.solve.budget).items()}
    metrics |= {f"budget_equal_{d}d": b for d, b in budgets.items()}
    metrics |= {f"min_depth_{d}d": float(np.mean(v)) for d, v in m.complexity.items()}
    metrics |= {f"exported_{v}": sum(t.variant == v for t in tasks) for v in ("original", *VARIANTS)}
    if llm:
        metrics |= {"llm_tasks": llm["tasks"], "acc_llm_P0": float(np.nanmean(llm["P0"])),
                    "llm_tokens_mean": float(np.mean([r["tokens"] for r in llm["replies"]]))}
        metrics |= {f"acc_llm_{d}d": float(np.nanmean(v)) for d, v in llm["by_dim"].items()}
    write_metrics(ctx.out, metrics, claims(m, p.claims, p.plans))

    save_figure(plot_verifiers(m.acceptance), ctx.output("verifiers.png"))
    save_figure(plot_information(ladders, float(m.rho.mean())), ctx.output("information.png"))
    save_figure(plot_solvers(acc, {"search, one budget": m.acc_dim, "search, equal coverage": m.acc_dim_equal,
                                   "search, equal density": m.acc_dim_density, "relabel s(q)": orig["relabel"]}),
                ctx.output("solvers.png"))
    return {key: float(v) for key, v in metrics.items()}


def _llm(rows: list[dict], subsample: list[str], benches: int, s: object, provenance: object) -> dict[str, object]:
    """The LLM's P0 accuracy per benchmark on its subsample, and the trivial solvers' and the search's on the same
    tasks (paired by benchmark), by dimension, with the model's provenance (recorded by prepare), the subsample's
    identity (sha256 of its task ids in order) and the decoding (greedy, batch size and order, torch threads)."""
    import torch

    asked = set(subsample)
    same = [r for r in rows if r["task_id"] in asked and r["phase"] == "P0"]
    return {"P0": accuracy(same, benches, solver="llm"),
            "trivial": {t: accuracy(same, benches, solver=t) for t in TRIVIAL},
            "search": accuracy(same, benches, solver="search"),
            "by_dim": {d: accuracy(same, benches, solver="llm", dim=d) for d in DIMS
                       if any(r["dim"] == d for r in same)},
            "tasks": len(asked), "backend": s.llm_backend,
            "subsample_sha256": hashlib.sha256("\n".join(subsample).encode()).hexdigest(),
            "decoding": {"greedy": True, "batch": s.llm_batch, "batch_order": "prompt length in characters, then index",
                         "extra_tokens": s.llm_extra_tokens, "torch_threads": torch.get_num_threads()},
            "model": read_json(provenance).get("llm") or {"endpoint": s.llm_endpoint, "model": s.llm_model}}


def _density(published: list[dict], alphabet: int, max_depth: int) -> dict[str, object]:
    """The equal-density design over the original exported tasks: each task's budget (N_d + 1)/(c + 1), and by
    dimension the geometric means of budget and c, a blind search's mean success probability at those budgets, the
    counts, and the variant mix of everything exported."""
    originals = [r for r in published if r["variant"] == "original"]
    budgets = density_budgets({r["task_id"]: r["consistent"] for r in originals},
                              {r["task_id"]: r["dim"] for r in originals}, alphabet, max_depth)
    by_dim = {d: [r for r in originals if r["dim"] == d] for d in DIMS}
    gmean = lambda v: round(float(np.exp(np.mean(np.log(v)))), 3) if len(v) else float("nan")  # noqa: E731
    spaces = {d: program_space(d, alphabet, max_depth) for d in DIMS}
    return {"budgets": budgets,
            "budget_gmean": {f"{d}d": gmean([budgets[r["task_id"]] for r in rs]) for d, rs in by_dim.items()},
            "consistent_gmean": {f"{d}d": gmean([r["consistent"] for r in rs]) for d, rs in by_dim.items()},
            "blind_success": {f"{d}d": round(float(np.mean([blind_success(spaces[d], r["consistent"],
                                                                           budgets[r["task_id"]]) for r in rs])), 4)
                              for d, rs in by_dim.items() if rs},
            "originals": {f"{d}d": len(rs) for d, rs in by_dim.items()},
            "programs": {f"{d}d": n for d, n in spaces.items()}, "variant_mix": variant_mix(published),
            "within_space": all(r["consistent"] >= 1 and 1 <= budgets[r["task_id"]] <= spaces[r["dim"]]
                                for r in originals)}
