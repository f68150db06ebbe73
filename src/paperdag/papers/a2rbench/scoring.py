"""Scoring: every solver on every accepted task, on the original symbols (P0) and after a random renaming of the
alphabet (P1), and the per-benchmark summaries the claims use.

acc(solver, phase, bench) = (1/|T_b|) sum_{t in T_b} [solver(t) = answer(t)]; the P0 - P1 drop is paired by bench.
Accuracy at another budget b needs no second search: breadth-first search examines programs in a fixed order, so
with budget b it returns the same answer as the unbounded search when that found one after cost <= b programs, else
nothing. Each search therefore runs once over the whole program space (``cost_full``, ``correct_full``) and the row at
the declared budget B is derived from it (correct = correct_full and cost_full <= B, cost = min(cost_full, B)).

Equal solution density (``density_budgets``): a task whose demos leave c of the N_d programs of its dimension's DSL
consistent costs a blind search (uniform random order) (N_d + 1) / (c + 1) programs in expectation to its first
consistent program (the expected minimum of c draws without replacement from 1..N_d); giving each task that budget
equalises the expected cost to the first solution across tasks and dimensions, so accuracy by dimension measures
where the breadth-first order meets a solution, not how many solutions there are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
from scipy.special import gammaln

from .analysis import information_bits, ladder, spearman, within_rule_rho
from .certificate import rival
from . import smollm2
from .llm import ask, parse_grid, prompt
from .params import DslParams, SolveParams
from .primitives import DIMS, names, registry
from .solvers import SOLVERS, correct, solve
from .tasks import Task, from_row, remap

PHASES = ("P0", "P1")
VERIFIERS = ("forward", "single", "cycle")


def llm_subsample(tasks: Sequence[Task], n: int) -> list[Task]:
    """A stratified subsample of ``n`` tasks (0: all): the (dimension, benchmark) cells taken round-robin in that
    order, each cell in sha256(task_id) order, so every cell contributes n / cells tasks when it has them (and any n
    >= benchmarks reaches every benchmark)."""
    if n == 0 or n >= len(tasks):
        return list(tasks)
    key = lambda t: hashlib.sha256(t.task_id.encode()).hexdigest()  # noqa: E731
    cells = [sorted((t for t in tasks if (t.dim, t.bench) == c), key=key)
             for c in sorted({(t.dim, t.bench) for t in tasks})]
    picked: list[Task] = []
    for i in range(max(len(c) for c in cells)):
        picked += [c[i] for c in cells if i < len(c)]
    return picked[:n]


def llm_rows(tasks: Sequence[Task], s: SolveParams, device: str,
             progress: Callable[[Iterable], Iterable] = iter) -> tuple[list[dict], list[dict]]:
    """The LLM solver on ``tasks`` (P0): score rows like ``score``'s (cost: one query) and the replies, both in the
    order of ``tasks``. SmolLM2 decodes them in ``smollm2.batches`` of ``s.llm_batch`` (sorted by prompt length, a
    function of the prompts alone); ``progress`` wraps the batches (the endpoint's tasks), so a progress bar
    advances as the replies come in."""
    tasks = list(tasks)
    prompts = [prompt(t) for t in tasks]
    if s.llm_backend == "endpoint":
        answers = [(ask(s.llm_endpoint, s.llm_model, prompts[i]), 0) for i in progress(range(len(tasks)))]
    else:
        tokenizer, model = smollm2.load("cpu" if device == "cpu" else device.removeprefix("torch:"))
        answers = [None] * len(tasks)
        for group in progress(smollm2.batches(prompts, s.llm_batch)):
            replies = smollm2.generate(tokenizer, model, [prompts[i] for i in group], [tasks[i].query for i in group],
                                       s.llm_extra_tokens, len(group))
            for i, reply in zip(group, replies):
                answers[i] = reply
    rows, texts = [], []
    for t, (text, tokens) in zip(tasks, answers):
        ok = correct(parse_grid(text), t)
        rows.append({"task_id": t.task_id, "bench": t.bench, "dim": t.dim, "variant": t.variant, "phase": "P0",
                     "solver": "llm", "correct": ok, "cost": 1, "correct_full": ok, "cost_full": 1})
        texts.append({"task_id": t.task_id, "reply": text, "tokens": tokens, "correct": ok})
    return rows, texts


def score(tasks: Iterable[Task], perms: Iterable[np.ndarray], dsl: DslParams, s: SolveParams,
          device: str) -> list[dict]:
    """One row per (task, phase, built-in solver): bench, dim, variant, correct and cost (programs examined) at
    the declared budget, and correct_full and cost_full of the same solver over the whole program space."""
    rows = []
    for task, perm in zip(tasks, perms):
        prims = registry(task.dim, dsl.alphabet)
        full, structural = names(task.dim, dsl.alphabet), names(task.dim, dsl.alphabet, ("structural",))
        space = program_space(task.dim, dsl.alphabet, dsl.max_depth)
        for phase, t in zip(PHASES, (task, remap(task, perm))):
            for solver in SOLVERS:
                answer, cost = solve(t, solver, prims, full, structural, dsl.max_depth, space, dsl.alphabet, device)
                ok = correct(answer, t)
                rows.append({"task_id": task.task_id, "bench": task.bench, "dim": task.dim, "variant": task.variant,
                             "phase": phase, "solver": solver, "correct": ok and cost <= s.budget,
                             "cost": min(cost, s.budget), "correct_full": ok, "cost_full": cost})
    return rows


def accuracy(rows: Sequence[dict], benches: int, max_cost: float | Mapping[str, float] | None = None,
             **where: object) -> np.ndarray:
    """Per-bench accuracy over the rows matching ``where`` (NaN for a bench with none), at the declared budget; with
    ``max_cost`` (one budget, or a budget per task_id), a row counts as solved only if its unbounded search solved it
    within that many programs (a search under that budget)."""
    def solved(r: dict) -> bool:
        if max_cost is None:
            return r["correct"]
        b = max_cost[r["task_id"]] if isinstance(max_cost, Mapping) else max_cost
        return r["correct_full"] and r["cost_full"] <= b

    acc = np.full(benches, np.nan)
    for b in range(benches):
        hits = [solved(r) for r in rows if r["bench"] == b and all(r[k] == v for k, v in where.items())]
        if hits:
            acc[b] = float(np.mean(hits))
    return acc


def mean_cost(rows: Sequence[dict], **where: object) -> float:
    """Mean programs examined (a deterministic cost unit) over the rows matching ``where``."""
    return float(np.mean([r["cost"] for r in rows if all(r[k] == v for k, v in where.items())]))


def acceptance(certs: Sequence[dict], verifier: str, lossy: bool) -> float:
    """Fraction of original rules (lossy or invertible) that ``verifier`` accepts, pooled over benches."""
    rules = [c[verifier] for c in certs if c["variant"] == "original" and c["lossy"] == lossy]
    return float(np.mean(rules)) if rules else float("nan")


def pooled_rho(certs: Sequence[dict], benches: int) -> np.ndarray:
    """Per bench: the mean over dimensions of Spearman's rho between information_bits(demo inputs) and
    log(# consistent DSL programs), over the original invertible tasks (confounded by each rule's redundancy)."""
    rho = np.zeros(benches)
    for b in range(benches):
        per_dim = []
        for dim in DIMS:
            sel = [c for c in certs if c["bench"] == b and c["dim"] == dim and c["variant"] == "original"
                   and not c["lossy"]]
            bits = np.array([information_bits(np.array(json.loads(c["demos_in"]))) for c in sel])
            per_dim.append(spearman(bits, np.log([max(c["consistent"], 1) for c in sel])))
        rho[b] = float(np.mean(per_dim))
    return rho


def information_ladders(rng: np.random.Generator, rules: Iterable[Task], levels: Sequence[int], dsl: DslParams,
                        n_demos: int, device: str) -> list[dict]:
    """One row per (validated rule, m): bench, dim, rule, m, bits, consistent (analysis.ladder)."""
    return [{"bench": t.bench, "dim": t.dim, "rule": t.task_id, "m": m, "bits": bits, "consistent": count}
            for t in rules for m, bits, count in ladder(rng, t, levels, dsl.alphabet, dsl.max_depth, n_demos, device)]


def ladder_gmean(rows: Sequence[dict]) -> dict[str, dict[int, float]]:
    """Effect size of the ladder: per dimension and symbol count m, the geometric mean of |C| over the rules,
    exp(mean log|C|)."""
    levels = sorted({r["m"] for r in rows})
    return {f"{d}d": {m: float(np.exp(np.mean([np.log(max(r["consistent"], 1)) for r in rows
                                              if r["dim"] == d and r["m"] == m]))) for m in levels} for d in DIMS}


def ladder_rho(rows: Sequence[dict], benches: int) -> np.ndarray:
    """Per bench: the mean over dimensions of the within-rule Spearman rho (analysis.within_rule_rho)."""
    rho = np.zeros(benches)
    for b in range(benches):
        per_dim = []
        for dim in DIMS:
            sel = [r for r in rows if r["bench"] == b and r["dim"] == dim]
            per_dim.append(within_rule_rho(np.array([r["bits"] for r in sel]),
                                           np.array([r["consistent"] for r in sel]),
                                           np.array([r["rule"] for r in sel])))
        rho[b] = float(np.mean(per_dim))
    return rho


def program_space(dim: int, alphabet: int, max_depth: int) -> int:
    """N_dim = sum_{d <= max_depth} P^d: the programs of the dimension's search DSL (P primitives) up to the depth."""
    return sum(len(names(dim, alphabet)) ** d for d in range(max_depth + 1))


def search_coverage(alphabet: int, max_depth: int, budget: int) -> dict[int, float]:
    """Per dimension, the fraction min(1, budget / N_dim) of its program space that a search examining ``budget``
    programs in breadth-first order can reach."""
    return {dim: min(1.0, budget / program_space(dim, alphabet, max_depth)) for dim in DIMS}


def equal_coverage_budgets(alphabet: int, max_depth: int, budget: int) -> dict[int, int]:
    """Per dimension, round(f N_dim) programs with f = min(1, budget / max_dim N_dim): the fraction the one budget
    reaches in the largest DSL, given to every DSL (the largest keeps its budget, the others get less)."""
    spaces = {dim: program_space(dim, alphabet, max_depth) for dim in DIMS}
    f = min(1.0, budget / max(spaces.values()))
    return {dim: max(1, round(f * n)) for dim, n in spaces.items()}


def density_budgets(consistent: Mapping[str, int], dims: Mapping[str, int], alphabet: int,
                    max_depth: int) -> dict[str, float]:
    """Per task_id, the expected cost of a blind (uniform random order) search to its first consistent program,
    (N_d + 1) / (c + 1), with c its count of consistent DSL programs and N_d its dimension's program space."""
    return {t: (program_space(dims[t], alphabet, max_depth) + 1) / (c + 1) for t, c in consistent.items()}


def blind_success(n: int, c: int, budget: float) -> float:
    """P(a uniform random order over n programs, c of them consistent, meets one among its first floor(budget)):
    1 - C(n - c, b) / C(n, b) (hypergeometric, exact)."""
    b = min(int(budget), n)
    if c <= 0 or b <= 0:
        return 0.0
    if b > n - c:
        return 1.0
    log_miss = gammaln(n - c + 1) - gammaln(n - c - b + 1) - gammaln(n + 1) + gammaln(n - b + 1)
    return float(1.0 - np.exp(log_miss))


def variant_mix(tasks: Iterable[dict]) -> dict[str, dict[str, int]]:
    """Exported tasks per dimension and variant (the 3D claim uses the original ones only)."""
    mix: dict[str, dict[str, int]] = {}
    for t in tasks:
        by = mix.setdefault(f"{t['dim']}d", {})
        by[t["variant"]] = by.get(t["variant"], 0) + 1
    return {d: dict(sorted(v.items())) for d, v in sorted(mix.items())}


def ladder_steps(rows: Sequence[dict], benches: int) -> dict[str, np.ndarray]:
    """The information ladder's effect by symbol-count step m -> m': per bench, the mean over its rules (all
    dimensions) of log|C|(m') - log|C|(m)."""
    levels = sorted({r["m"] for r in rows})
    logc = {(r["bench"], r["dim"], r["rule"], r["m"]): np.log(max(r["consistent"], 1)) for r in rows}
    rules = sorted({k[:3] for k in logc})
    out = {}
    for m0, m1 in zip(levels, levels[1:]):
        out[f"{m0}->{m1}"] = np.array([np.mean([logc[(*k, m1)] - logc[(*k, m0)] for k in rules if k[0] == b])
                                       for b in range(benches)])
    return out


def generated_complexity(certs: Sequence[dict], benches: int) -> dict[str, dict[int, np.ndarray]]:
    """The complexity of the generated rules that passed the cycle check (original tasks), per dimension, one mean
    per bench: "min_depth", the minimal description depth in the DSL, and "depth", the depth as generated."""
    measures = {"min_depth": lambda c: c["min_depth"], "depth": lambda c: len(c["program"])}
    return {name: {dim: np.array([np.mean([f(c) for c in certs if c["bench"] == b and c["dim"] == dim
                                           and c["variant"] == "original" and c["cycle"]]) for b in range(benches)])
                   for dim in DIMS} for name, f in measures.items()}


def counterexample(cert: dict) -> dict[str, object]:
    """A cycle-valid task with more than one answer, printed: its rule, demos, query and stored answer, and the
    first DSL program (breadth-first) that reproduces every demo but answers the query differently."""
    task = from_row(cert)
    alphabet, depth = int(cert["alphabet"]), int(cert["max_depth"])
    found = rival(task, registry(task.dim, alphabet), names(task.dim, alphabet), depth)
    other = {"rival_program": list(found[0]), "rival_answer": json.dumps(found[1].tolist())} if found else {}
    return {"task_id": task.task_id, "rule": list(task.program), "demos_in": cert["demos_in"],
            "demos_out": cert["demos_out"], "query": cert["query"], "answer": cert["answer"], **other}


def cycle_valid_ambiguity(certs: Sequence[dict]) -> dict[str, object]:
    """The theorem's strong form against the certificates: cycle-valid tasks (invertible rule, cycle check passed)
    and those of them with more than one answer among the consistent DSL programs, both by variant; the first such
    task of each variant printed (``counterexample``); and whether every cycle-valid task's own rule is among its
    consistent programs within the enumerated depth."""
    valid = [c for c in certs if c["cycle"]]
    ambiguous = [c for c in valid if not c["unique"]]
    variants = sorted({c["variant"] for c in valid})
    firsts = {v: next(c for c in ambiguous if c["variant"] == v) for v in variants
              if any(c["variant"] == v for c in ambiguous)}
    return {"cycle_valid": {v: sum(c["variant"] == v for c in valid) for v in variants},
            "ambiguous": {v: sum(c["variant"] == v for c in ambiguous) for v in variants},
            "counterexamples": {v: counterexample(c) for v, c in firsts.items()},
            "rule_enumerated": all(c["consistent"] >= 1 and len(c["program"]) <= c["max_depth"] for c in valid)}


def multi_program_share(certs: Sequence[dict], ladders: Sequence[dict]) -> dict[str, float]:
    """Share of tasks whose demos leave more than one consistent DSL program: original invertible tasks, and the
    information ladder's re-posed tasks (the ambiguity that more informative inputs could remove)."""
    orig = [c["consistent"] > 1 for c in certs if c["variant"] == "original" and not c["lossy"]]
    return {"original": float(np.mean(orig)) if orig else 0.0,
            "ladder": float(np.mean([r["consistent"] > 1 for r in ladders])) if ladders else 0.0}
