"""Re-check of certificates from an artifact alone (``paperdag verify a2rbench [FOLDER]``, and the evaluate stage on
the exported benchmark), as strict as the certificate itself.

Every row's certificate is redone from the task the row stores (demos, query, answer, rule, claimed inverse): the
forward and single-sample checks, the full cycle check on the demos, the query, every exhaustive small grid and the
same random property grids (drawn again from the stored ``property_seed``), and the uniqueness enumeration of the
whole DSL; every field must equal the stored one. On top, a row the certificate accepts is refused when its rule is
lossy (recomputed from the primitives, not read from the row), when the rule was not validated on its original task,
or when it is not both cycle-valid and unique. A table asking for more than the paper's budget (params.py bounds) is
refused before any enumeration.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from paperdag.io import read_table
from paperdag.params import ParamsModel

from .certificate import certify, exhaustive_grids, property_inputs
from .params import DslParams, VerifyParams
from .primitives import DIMS, names, registry
from .tasks import from_row

LIMITS: dict[str, type[ParamsModel]] = {"alphabet": DslParams, "max_depth": DslParams,
                                        "property_samples": VerifyParams}


def budget(field: str) -> int:
    """The largest value of a DSL or verifier param the paper allows (its bound in params.py): the most a
    certificate may ask the re-check to compute."""
    model = LIMITS[field]
    return next(m.le for m in model.model_fields[field].metadata if getattr(m, "le", None) is not None)


def within_budget(rows: list[dict]) -> tuple[int, int]:
    """(alphabet, max_depth) of a certificate table: one value each for the whole table, every requested size
    within its budget; raises ValueError otherwise (nothing is re-checked)."""
    for field in LIMITS:
        asked = max((int(r[field]) for r in rows if field in r), default=0)
        if asked > budget(field):
            raise ValueError(f"the certificate asks for {field} {asked}, beyond the paper's budget {budget(field)}: "
                             "refused, nothing re-checked")
    dsl = {(int(r["alphabet"]), int(r["max_depth"])) for r in rows}
    if len(dsl) != 1:
        raise ValueError(f"the certificate mixes DSLs (alphabet, max_depth) {sorted(dsl)}: refused")
    return dsl.pop()


def refutations(rows: list[dict], alphabet: int, max_depth: int, device: str = "cpu") -> dict[str, list[str]]:
    """task_id -> what is wrong with its row (rows without a problem are absent). ``rule_valid`` is recomputed as
    the cycle verdict of the row's original task when that row is in the table, else read from the row."""
    exhaustive = {d: exhaustive_grids(d, alphabet) for d in DIMS}
    cycle: dict[str, bool] = {}
    found: dict[str, list[str]] = {}
    for row in rows:
        try:
            task = from_row(row)
            prims = registry(task.dim, alphabet)
            unknown = sorted({n for n in (*task.program, *task.inverse_program) if n not in prims})
            if unknown:
                raise ValueError(f"unknown primitives {unknown}")
            cert = certify(task, prims, names(task.dim, alphabet), max_depth, exhaustive[task.dim],
                           property_inputs(int(row["property_seed"]), int(row["property_samples"]),
                                           task.query.shape, alphabet), device)
        except Exception as e:  # noqa: BLE001 - a row that cannot be redone is refuted, never skipped
            found[str(row.get("task_id"))] = [f"cannot be redone ({type(e).__name__}: {e})"]
            continue
        cycle[task.task_id] = cert.cycle
        lossy = any(prims[n].inverse is None for n in task.program)
        issues = [f"{k} stored {row[k]!r}, recomputed {v!r}" for k, v in asdict(cert).items() if row[k] != v]
        if bool(row["lossy"]) != lossy:
            issues.append(f"lossy stored {row['lossy']!r}, recomputed {lossy!r}")
        if row["accepted"] and (lossy or row["lossy"]):
            issues.append(f"accepted although its rule {list(task.program)} is lossy")
        if row["accepted"] and not (row["cycle"] and row["unique"]):
            issues.append("accepted although not marked cycle-valid and unique")
        if issues:
            found[task.task_id] = issues
    for row in rows:
        valid = cycle.get(str(row.get("parent")), bool(row.get("rule_valid")))
        issues = []
        if bool(row.get("rule_valid")) != valid:
            issues.append(f"rule_valid stored {row.get('rule_valid')!r}, recomputed {valid!r}")
        if row.get("accepted") and not valid:
            issues.append("accepted although its rule failed the cycle check on its original task")
        if issues:
            found.setdefault(str(row.get("task_id")), []).extend(issues)
    return found


def reverify(folder: Path) -> tuple[bool, str]:
    """Redo every certificate of ``folder``/certificates.parquet (see the module docstring)."""
    rows = read_table(Path(folder) / "certificates.parquet").to_pylist()
    alphabet, depth = within_budget(rows)
    found = refutations(rows, alphabet, depth)
    accepted = sum(bool(r["accepted"]) for r in rows)
    shown = "; ".join(f"{tid}: {', '.join(issues)}" for tid, issues in list(found.items())[:5])
    return not found, (f"{len(rows) - len(found)}/{len(rows)} certificates redone identically ({accepted} accepted "
                       f"tasks, alphabet {alphabet}, depth {depth})" + (f"; refuted: {shown}" if found else ""))
