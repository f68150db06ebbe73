"""The paper contract, checked for every registered paper (README "Adding a paper"; the scaffold's template is its
code form). Per-paper test files hold only science tests; what every paper owes the platform is checked here.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from pydantic import BaseModel

from conftest import REPO
from paperdag.dag import DECLARATIONS, Pipeline, get_pipeline, paper_slugs
from paperdag.engine import resolve_fn, stage_code_files
from paperdag.params import load_params, read_params_file

PAPERS = paper_slugs()
PARAMS_FILE = REPO / "params.yaml"
CLAIM_KEYS = {"id", "kind", "statement", "paper_value", "measured", "verdict", "holds", "reason", "requires", "rule"}
CONSTRUCTORS = {"evidence", "check", "precondition"}


def _package_dir(pipeline: Pipeline) -> Path:
    return Path(__import__(pipeline.package, fromlist=["_"]).__file__).parent


@cache
def _modules(slug: str) -> dict[str, ast.Module]:
    """Every module of the paper package by dotted name relative to it (``train``, ``verifier.milp``)."""
    root = _package_dir(get_pipeline(slug))
    return {".".join(p.relative_to(root).with_suffix("").parts): ast.parse(p.read_text())
            for p in sorted(root.rglob("*.py"))}


def _stage_modules(pipeline: Pipeline) -> set[str]:
    return {s.module for s in pipeline.stages}


def _imported(module: str, tree: ast.Module, package: str) -> set[str]:
    """Names (relative to ``package``) of the package modules that ``module`` imports."""
    names, parts = set(), module.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = parts[: len(parts) - node.level]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.startswith(package + "."):
                target = node.module[len(package) + 1:]
            else:
                continue
            names.add(target)
            names.update(f"{target}.{a.name}".lstrip(".") for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name[len(package) + 1:] for a in node.names if a.name.startswith(package + "."))
    return names


@pytest.fixture(params=PAPERS)
def pipeline(request) -> Pipeline:
    return get_pipeline(request.param)


def test_pipeline_declaration_imports_no_torch(pipeline):
    code = (f"import sys, paperdag.papers.{pipeline.slug}.pipeline; "
            "heavy = sorted({'torch', 'ray', 'prefect', 'mlflow'} & set(sys.modules)); assert not heavy, heavy")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr.strip().splitlines()[-1]


def test_every_stage_function_resolves_and_takes_its_args(pipeline):
    for stage in pipeline.stages:
        fn = resolve_fn(pipeline.package, stage.fn)
        inspect.signature(fn).bind(object(), **stage.args)  # fn(ctx, **args)


def test_base_and_smoke_params_validate(pipeline):
    data = read_params_file(PARAMS_FILE)
    for profile in ("default", "smoke"):
        load_params(data, pipeline.slug, pipeline.params_model, profile, PARAMS_FILE)


def _fields(model: type[BaseModel], prefix: str = ""):
    for name, field in model.model_fields.items():
        yield f"{prefix}{name}", field
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            yield from _fields(sub, f"{prefix}{name}.")


def test_params_yaml_is_the_one_source_of_values(pipeline):
    """No pydantic default can drift from params.yaml, and every field says what it is."""
    with_default = [name for name, f in _fields(pipeline.params_model) if not f.is_required()]
    assert not with_default, f"fields with defaults (set them in params.yaml instead): {with_default}"
    undescribed = [name for name, f in _fields(pipeline.params_model)
                   if not f.description and not (isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel))]
    assert not undescribed, f"fields without a description: {undescribed}"


def test_code_keys_leave_out_declarations(pipeline):
    declarations = {_package_dir(pipeline) / f"{name}.py" for name in DECLARATIONS}
    for stage in pipeline.stages:
        assert not declarations & set(stage_code_files(pipeline, stage)), stage.name


def test_package_layout(pipeline):
    """Docstring-only ``__init__``, no catch-all ``stages.py``, science modules that never see the stage context
    nor import a stage module, and ``claims.py`` that is pure (no I/O, no stage context)."""
    modules = _modules(pipeline.slug)
    init = modules["__init__"]
    assert len(init.body) == 1 and isinstance(init.body[0], ast.Expr), "__init__.py holds only the docstring"
    assert "stages" not in modules, "no catch-all stages.py: one module per stage"
    assert "claims" in modules and "plots" in modules, "claims.py and plots.py"
    stage_modules = _stage_modules(pipeline)
    for name, tree in modules.items():
        if name in stage_modules or name.split(".")[-1] in DECLARATIONS or name.endswith("__init__"):
            continue
        imported = _imported(name, tree, pipeline.package)
        assert "paperdag.stage" not in ast.unparse(tree), f"science module {name} uses the stage context"
        assert not imported & stage_modules, f"science module {name} imports stage modules {imported & stage_modules}"
    claims_src = ast.unparse(modules["claims"])
    assert not any(w in claims_src for w in ("open(", "write_", "read_", "ctx")), "claims.py must be pure"


# Papers whose claims.py is still in the v1 verdict model (bool checks, no plans, no ladders) while they migrate;
# the v2 rules below apply to every other paper.
V1_PAPERS: set[str] = set()
INTERVAL_RULE_CALLS = {"superiority", "noninferiority", "equivalence", "trend"}
POINT_ESTIMATES = {"mean", "median", "nanmean", "nanmedian", "average"}
BASELINE_WORDS = ("baseline", "gram", "k-nn", "nearest", "logistic", "chance", "random policy", "majority",
                  "replay", "gaussian", "untrained", "no update", "base model", "trivial")


def _is_point_estimate(node: ast.AST, derived: set[str]) -> bool:
    """x.mean, x["mean"], mean(...), np.median(...), sum(...) / len(...), or a name assigned from one of these."""
    if isinstance(node, ast.Name):
        return node.id in derived
    if isinstance(node, ast.Attribute):
        return node.attr in POINT_ESTIMATES
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in POINT_ESTIMATES
    if isinstance(node, ast.Call):
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name in POINT_ESTIMATES or (name == "float" and any(_is_point_estimate(a, derived) for a in node.args))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        calls = [n.func.id for n in (node.left, node.right) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
        return calls == ["sum", "len"]
    if isinstance(node, ast.BinOp | ast.UnaryOp):
        return any(_is_point_estimate(n, derived) for n in ast.iter_child_nodes(node))
    return False


def _point_estimate_names(tree: ast.Module) -> set[str]:
    """Names assigned from a point estimate anywhere in the module (``m = d.mean`` then ``m > t``)."""
    derived: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _is_point_estimate(node.value, derived):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in derived:
                        derived.add(t.id)
                        changed = True
    return derived


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def _is_bool_expression(node: ast.AST) -> bool:
    return (isinstance(node, ast.Compare | ast.BoolOp) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))
            or (isinstance(node, ast.Constant) and isinstance(node.value, bool))
            or (isinstance(node, ast.Call) and _call_name(node) in ("bool", "all", "any")))


def _judged_argument(node: ast.Call) -> ast.AST | None:
    """The ``judged`` argument of evidence / check / precondition (the fifth, or by keyword)."""
    named = [k.value for k in node.keywords if k.arg in ("judged", "ok")]
    return named[0] if named else node.args[4] if len(node.args) > 4 else None


def claims_source_problems(source: str, v2: bool = True) -> list[str]:
    """What a paper's claims.py does against the verdict model: a claim built without a kind (``Claim(...)`` instead
    of ``evidence`` / ``check`` / ``precondition`` from paperdag.common.verdicts), or a threshold on a point estimate
    (a comparison with a mean or median, ``sum / len``, or a name assigned from one). In v2 also: a bool where a
    Judgement belongs, ``exact`` without its basis, an interval rule without the plan that set its n, and a
    precondition against a baseline without its ladder."""
    tree = ast.parse(source)
    problems = []
    imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.module == "paperdag.common.verdicts" for a in n.names}
    if not CONSTRUCTORS & imported:
        problems.append("builds no claim with evidence / check / precondition from paperdag.common.verdicts")
    derived = _point_estimate_names(tree) if v2 else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(_is_point_estimate(x, derived) if v2 else
                                                 isinstance(x, ast.Attribute) and x.attr == "mean"
                                                 for x in (node.left, *node.comparators)):
            problems.append(f"line {node.lineno}: a threshold on a point estimate ({ast.unparse(node)[:80]}): use a "
                            "shared interval rule (superiority, noninferiority, equivalence, trend)")
        if not isinstance(node, ast.Call):
            continue
        name, where = _call_name(node), f"line {node.lineno}"
        if name == "Claim":
            problems.append(f"{where}: Claim(...) without a kind: use evidence, check or precondition")
        if not v2:
            continue
        judged = _judged_argument(node) if name in CONSTRUCTORS else None
        if judged is not None and _is_bool_expression(judged):
            problems.append(f"{where}: a bool judgement ({ast.unparse(judged)[:60]}): pass a rule's Judgement")
        if name == "exact" and not any(k.arg == "basis" for k in node.keywords):
            problems.append(f"{where}: exact(...) without its basis (enumeration, exact solver, fixed set, ...)")
        if name in INTERVAL_RULE_CALLS and not any(k.arg == "plan" for k in node.keywords):
            problems.append(f"{where}: {name}(...) without plan=: every judged n comes from a declared plan")
        if name == "precondition" and not any(k.arg == "ladder" for k in node.keywords):
            against = node.args[2] if len(node.args) > 2 else None
            text = ast.unparse(against).lower() if against is not None else ""
            if any(w in text for w in BASELINE_WORDS):
                problems.append(f"{where}: a precondition against a baseline ({text[:60]}) without its ladder=")
        if name == "precondition" and len(node.args) > 5:
            problems.append(f"{where}: precondition(..., reason): the v1 form; the rule's reason is the reason")
    return problems


def test_claims_use_the_verdict_model(pipeline):
    """Every claim has a kind (built by the verdict model's constructors), no threshold on a point estimate decides a
    verdict, and (v2) judgements, plans and ladders are where they belong."""
    source = (_package_dir(pipeline) / "claims.py").read_text()
    problems = claims_source_problems(source, v2=pipeline.slug not in V1_PAPERS)
    assert not problems, problems


@pytest.mark.parametrize(("source", "problem"), [
    ("from paperdag.claims import Claim\ndef claims(d):\n    return [Claim('a', 's', 1, d.mean, d.mean > 0)]",
     "without a kind"),
    ("from paperdag.common.verdicts import evidence, exact\n"
     "def claims(d, p):\n    return [evidence('a', 's', 1, 2, exact(d.mean > p.margin, 'x'), ['r'])]",
     "threshold on a point estimate"),
    ("from paperdag.common.verdicts import evidence, exact\n"
     "def claims(d):\n    return [evidence('a', 's', 1, 2, exact(d['mean'] <= 0.01, 'x'), ['r'])]",
     "threshold on a point estimate"),
    ("import numpy as np\nfrom paperdag.common.verdicts import check, exact\n"
     "def claims(v):\n    m = np.median(v)\n    ok = m > 1\n    return [check('a', 's', 1, 2, exact(ok, 'x', basis='fixed set'))]",
     "threshold on a point estimate"),
    ("from paperdag.common.verdicts import check, exact\n"
     "def claims(v):\n    return [check('a', 's', 1, 2, exact(sum(v) / len(v) > 1, 'x', basis='fixed set'))]",
     "threshold on a point estimate"),
    ("from paperdag.common.verdicts import check\ndef claims(v):\n    return [check('a', 's', 1, 2, v.max() < 1e-6)]",
     "a bool judgement"),
    ("from paperdag.common.verdicts import precondition\n"
     "def claims(v):\n    return [precondition('a', 's', 'oracle', {}, v > 0)]", "a bool judgement"),
    ("from paperdag.common.verdicts import evidence, exact\n"
     "def claims(v):\n    return [evidence('a', 's', 1, 2, exact(v, 'x'), ['r'])]", "without its basis"),
    ("from paperdag.common.verdicts import evidence, superiority\n"
     "def claims(d):\n    return [evidence('a', 's', 1, 2, superiority(d), ['r'])]", "without plan="),
    ("from paperdag.common.verdicts import precondition, superiority\n"
     "def claims(d, p):\n    return [precondition('a', 's', 'a count bigram', {}, superiority(d, plan=p))]",
     "without its ladder="),
])
def test_the_contract_rejects_each_kind_of_bad_claims_py(source, problem):
    assert any(problem in p for p in claims_source_problems(source)), claims_source_problems(source)


def test_the_contract_accepts_v2_claims():
    source = ("from paperdag.common.verdicts import Ladder, evidence, precondition, superiority\n"
              "def claims(diff, gap, nll, p):\n"
              "    ladder = Ladder.of('lower', {'KN 4-gram': nll[4], 'KN 3-gram': nll[3]})\n"
              "    return [precondition('b', 's', 'KN 4-gram', {}, superiority(gap, plan=p.seeds), ladder=ladder),\n"
              "            evidence('a', 's', 1, 2, superiority(diff, plan=p.seeds), ['b'])]")
    assert claims_source_problems(source) == []


def _keys(value: object) -> set[str]:
    """Every mapping key in a JSON value, at any depth."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def check_published(doc: dict, v2: bool = True) -> list[str]:
    """A published metrics file against the verdict model: rows with every key, kinds and verdicts, a reason unless
    it holds, evidence decided by a rule and requiring preconditions (inconclusive when one fails), an interval rule
    where the measured value is an interval, preconditions naming their baseline or bound, counts that match; in v2
    also the unit, n and plan of every interval-judged evidence claim and precondition, and the ladder (the judged
    baseline and the next rung) of every precondition against a baseline."""
    from paperdag.claims import counts
    from paperdag.common.verdicts import INTERVAL_RULES, KINDS, RULES, VERDICTS

    claims, problems = doc.get("claims", []), []
    by_id = {c.get("id"): c for c in claims}
    for c in claims:
        cid = c.get("id")
        if not CLAIM_KEYS <= set(c):
            problems.append(f"{cid}: missing {sorted(CLAIM_KEYS - set(c))}")
            continue
        if c["kind"] not in KINDS or c["verdict"] not in VERDICTS or c["rule"] not in RULES:
            problems.append(f"{cid}: kind {c['kind']!r}, verdict {c['verdict']!r}, rule {c['rule']!r}")
        if c["holds"] != (c["verdict"] == "holds"):
            problems.append(f"{cid}: holds disagrees with the verdict")
        if c["verdict"] != "holds" and not str(c["reason"]).strip():
            problems.append(f"{cid}: {c['verdict']} without a reason")
        if c["kind"] == "evidence":
            if not c["requires"]:
                problems.append(f"{cid}: evidence requiring no precondition")
            if any(by_id.get(r, {}).get("verdict") != "holds" for r in c["requires"]) and c["verdict"] != "inconclusive":
                problems.append(f"{cid}: judged although a required precondition does not hold")
            if c["rule"] not in INTERVAL_RULES and any(k.startswith("ci") for k in _keys(c["measured"])):
                problems.append(f"{cid}: an interval in measured but judged by rule {c['rule']!r}")
        if c["kind"] == "precondition" and not (c.get("baseline") or c.get("bound") or (
                not v2 and isinstance(c["measured"], dict) and c["measured"].get("baseline"))):
            problems.append(f"{cid}: a precondition that names no baseline or bound")
        if v2 and c["kind"] in ("evidence", "precondition") and c["rule"] != "exact":
            plan = c.get("plan")
            if not (c.get("unit") and isinstance(c.get("n"), int) and isinstance(plan, dict)
                    and {"planned_n", "pilot_n", "looks"} <= set(plan)):
                problems.append(f"{cid}: judged on an interval without its unit, n and plan")
        if v2 and c.get("baseline") and not (isinstance(c.get("ladder"), list) and len(c["ladder"]) >= 2):
            problems.append(f"{cid}: a precondition against a baseline without a ladder of >= 2 rungs")
    kinds = {c.get("kind") for c in claims}
    if not {"evidence", "precondition"} <= kinds:
        problems.append(f"needs evidence and at least one precondition (kinds: {sorted(map(str, kinds))})")
    n = counts(claims)
    problems += [f"{k} {doc.get(k)} != {v} counted" for k, v in n.items() if doc.get(k) != v]
    return problems


def test_committed_metrics_are_in_the_verdict_model(pipeline):
    path = REPO / "metrics" / f"{pipeline.slug}.json"
    if path.exists():
        doc = json.loads(path.read_text())
        problems = check_published(doc, v2=pipeline.slug not in V1_PAPERS)
        assert not problems, problems[:8]
        summary = json.loads((REPO / "metrics" / "summary" / path.name).read_text())
        assert summary["evidence_holding"] == doc["evidence_holding"]
        assert set(summary["claim"]) == {c["id"] for c in doc["claims"]}


def _constants(slug: str) -> dict[str, str]:
    """Module-level string constants of the package (``DATA_FILE = "data.parquet"``), by name."""
    found = {}
    for tree in _modules(slug).values():
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                found.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return found


def test_stages_read_only_declared_upstream_outputs(pipeline):
    """Static check of ``ctx.input(stage, name)`` calls whose arguments are literals or package constants."""
    constants = _constants(pipeline.slug)
    modules = _modules(pipeline.slug)
    for module in _stage_modules(pipeline):
        users = [s for s in pipeline.stages if s.module == module]
        source = ast.unparse(modules[module])
        assert ".inputs[" not in source, f"{module}: read upstream outputs with ctx.input(stage, name)"
        for node in ast.walk(modules[module]):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "input"
                    and len(node.args) == 2):
                continue
            stage_arg, name_arg = node.args
            if not isinstance(stage_arg, ast.Constant):
                continue
            upstream = stage_arg.value
            assert any(upstream in s.upstream for s in users), f"{module}: reads from {upstream!r}, not upstream"
            name = name_arg.value if isinstance(name_arg, ast.Constant) else constants.get(getattr(name_arg, "id", ""))
            if isinstance(name, str):
                assert name.split("/")[0] in pipeline.stage(upstream).outputs, f"{module}: {upstream} has no {name!r}"


# Calls whose CPU result depends on more than their inputs unless an argument pins it: torch.linalg.lstsq's default
# CPU driver (gelsy) reads an uninitialised pivot array (pytorch#187411), so its rounding follows heap contents.
PINNED_ARGUMENTS = {"torch.linalg.lstsq": "driver"}


def test_calls_that_are_nondeterministic_by_default_pin_their_argument(pipeline):
    """A result is a function of its cache key: calls whose default is run-to-run nondeterministic name the
    argument that makes them deterministic (``PINNED_ARGUMENTS``)."""
    for module, tree in _modules(pipeline.slug).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (needed := PINNED_ARGUMENTS.get(ast.unparse(node.func))):
                assert needed in {k.arg for k in node.keywords}, (
                    f"{module} line {node.lineno}: {ast.unparse(node.func)} without {needed}=")


def test_committed_metrics_are_a_default_profile_run(pipeline):
    """metrics/<slug>.json in the repository is what the README row and the report quote: a default run's, never a
    smoke run's left behind."""
    path = REPO / "metrics" / f"{pipeline.slug}.json"
    if path.exists():
        metrics = json.loads(path.read_text())
        assert metrics["profile"] == "default", f"{path.name}: a {metrics['profile']} run (re-run the default profile)"


@pytest.mark.slow
def test_smoke_run_writes_every_output_and_the_claims_contract(pipeline, smoke_runs):
    runs = smoke_runs(pipeline.slug)
    for stage in pipeline.stages:
        missing = [o for o in stage.outputs if not (runs[stage.name] / o).exists()]
        assert not missing, f"{stage.name} did not write {missing}"
        for plot in stage.plots:
            assert (runs[stage.name] / plot).read_bytes()[:4] == b"\x89PNG", f"{stage.name}: {plot} is not a PNG"
    metrics = runs.metrics()
    assert metrics["paper"] == pipeline.slug and metrics["profile"] == "smoke" and metrics["title"]
    claims = metrics["claims"]
    problems = check_published(metrics, v2=pipeline.slug not in V1_PAPERS)
    assert claims and not problems, problems[:8]
    assert len({c["id"] for c in claims}) == len(claims), "claim ids are unique"
    assert all(isinstance(v, int | float | bool) for v in metrics["metrics"].values()), "metrics are scalars"
    json.dumps(metrics, allow_nan=False)
    assert not set(pipeline.headline) - set(metrics["metrics"]), "headline names metrics the paper reports"
    summary = runs.summary()
    assert summary["claims_total"] == len(claims) and set(summary["claim"]) == {c["id"] for c in claims}


@pytest.mark.slow
def test_scaffold_generates_a_paper_that_passes_the_contract(tmp_path):
    """`paperdag new demo_paper` in a copy of the project: the contract and the generated tests pass as written,
    whatever quotes and backslashes the title holds."""
    for name in ("src", "tests"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    shutil.copy(PARAMS_FILE, tmp_path / "params.yaml")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "src"), str(tmp_path / "tests")])}
    title = 'A "quoted" \\ title with \'\'\' and """'
    new = subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "new", "demo_paper",
                          "--title", title], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert new.returncode == 0, new.stderr
    shown = subprocess.run([sys.executable, "-c", "from paperdag.dag import get_pipeline; "
                            "print(get_pipeline('demo_paper').title, end='')"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert shown.stdout == title, shown.stderr
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "demo_paper",
                            "tests/test_paper_contract.py", "tests/papers/test_demo_paper.py"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout[-3000:]
    again = subprocess.run([sys.executable, "-c", "from paperdag.cli import main; main()", "new", "demo_paper"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "already exists" in again.stderr
