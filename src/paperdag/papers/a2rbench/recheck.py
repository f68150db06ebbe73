"""Re-check of certificates from an artifact alone (``paperdag verify a2rbench [FOLDER]``, and the evaluate stage on
the exported benchmark), as strict as the certificate itself.

Every row's certificate is redone from the task the row stores (demos, query, answer, rule, claimed inverse): the
forward and single-sample checks, the full cycle check on the demos, the query, every exhaustive small grid and the
same random property grids (drawn again from the stored ``property_seed``), and the uniqueness enumeration of the
whole DSL; every field must equal the stored one. On top, a row the certificate accepts is refused when its rule is
lossy (recomputed from the primitives, not read from the row), when the rule was not validated on its original task,
or when it is not both cycle-valid and unique. A table asking for more than the paper's budget (params.py bounds) or
mixing DSLs is REFUSED before any enumeration; a row that differs in any field is REFUTED; ``--budget`` counts rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path

from paperdag.io import read_table
from paperdag.params import ParamsModel
from paperdag.verification import Outcome, Refused, Result, Work, require_files

from .certificate import certify, exhaustive_grids, property_inputs
from .params import DslParams, VerifyParams
from .primitives import DIMS, names, registry
from .tasks import from_row

CERTIFICATES_FILE = "certificates.parquet"  # the verify stage's table (verify.py, a stage module: not imported)
LIMITS: dict[str, type[ParamsModel]] = {"alphabet": DslParams, "max_depth": DslParams,
                                        "property_samples": VerifyParams}


def budget(field: str) -> int:
    """The largest value of a DSL or verifier param the paper allows (its bound in params.py): the most a
    certificate may ask the re-check to compute."""
    model = LIMITS[field]
    return next(m.le for m in model.model_fields[field].metadata if getattr(m, "le", None) is not None)


def within_budget(rows: list[dict]) -> tuple[int, int]:
    """(alphabet, max_depth) of a certificate table: one value each for the whole table, every requested size
    within its budget; raises ``Refused`` naming the field otherwise (nothing is re-checked)."""
    for field in LIMITS:
        asked = max((int(r[field]) for r in rows if field in r), default=0)
        if asked > budget(field):
            raise Refused(field, f"the certificate asks for {field} {asked}, beyond the paper's budget "
                                 f"{budget(field)}")
    dsl = {(int(r["alphabet"]), int(r["max_depth"])) for r in rows}
    if len(dsl) != 1:
        raise Refused("alphabet, max_depth", f"the certificate mixes DSLs (alphabet, max_depth) {sorted(dsl)}")
    return dsl.pop()


def refutations(rows: list[dict], alphabet: int, max_depth: int, device: str = "cpu",
                progress: Callable[[list[dict]], Iterable[dict]] = iter) -> dict[str, list[str]]:
    """task_id -> what is wrong with its row (rows without a problem are absent). ``rule_valid`` is recomputed as
    the cycle verdict of the row's original task when that row is in the table, else read from the row;
    ``progress`` wraps the rows whose certificates are redone (``paperdag verify`` counts and budgets them)."""
    exhaustive = {d: exhaustive_grids(d, alphabet) for d in DIMS}
    cycle: dict[str, bool] = {}
    found: dict[str, list[str]] = {}
    for row in progress(rows):
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


def reverify(folder: Path, work: Work) -> Result:
    """Redo every certificate of ``folder``/certificates.parquet (see the module docstring)."""
    require_files(Path(folder), CERTIFICATES_FILE)
    table = read_table(Path(folder) / CERTIFICATES_FILE)
    missing = [c for c in ("task_id", "accepted", *LIMITS) if c not in table.column_names]
    if missing:
        raise Refused(", ".join(missing), f"columns missing from {CERTIFICATES_FILE}: not a table of task certificates")
    rows = table.to_pylist()
    if not rows:
        raise Refused(CERTIFICATES_FILE, "the table has no rows")
    alphabet, depth = within_budget(rows)
    found = refutations(rows, alphabet, depth, progress=lambda r: work.each(r, "certificate rows"))
    accepted = sum(bool(r["accepted"]) for r in rows)
    shown = "; ".join(f"{tid}: {', '.join(issues)}" for tid, issues in list(found.items())[:5])
    message = (f"{len(rows) - len(found)}/{len(rows)} certificates redone identically ({accepted} accepted tasks, "
               f"alphabet {alphabet}, depth {depth})" + (f"; refuted: {shown}" if found else ""))
    return Result(Outcome.REFUTED if found else Outcome.VERIFIED, message)
