"""``paperdag verify sketchrefine [FOLDER]``: every reported proof re-checked from the verify stage's folder alone.

The folder (verify.py) holds the benchmark (``theorems.parquet``), every proof a search reported (``proofs.parquet``:
method, theorem, seed and the proof's nodes), the checker's budget (``certificate.json``: rlimit, z3 version) and
verify's verdicts (``verified.parquet``). The re-check rebuilds each theorem from its definitions and re-checks each
proof from scratch with a fresh z3 checker (proofcheck.py: the goal states the theorem, citations go down the
definition DAG, every step is unsat within the stored rlimit). The folder is accepted iff every proof is accepted
and every stored verdict equals the recomputed one. An unsat answer is a proof whatever the rlimit, and the rlimit
is the one the proofs were first checked with, so the re-check is as strict as the check. A folder without these
files or with an rlimit beyond the paper's bound (params.py) is REFUSED before any solving; a rejected proof or a
stored verdict that disagrees is REFUTED; ``--budget`` counts proofs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from paperdag.io import read_json, read_table
from paperdag.verification import Outcome, Refused, Result, Work, require_files

from .checker import Checker
from .params import Params
from .proofcheck import verify_proof
from .theorems import Theorem, theorems_from_rows

# the certificate folder's files
THEOREMS, PROOFS, VERIFIED_FILE, CERTIFICATE_FILE = ("theorems.parquet", "proofs.parquet", "verified.parquet",
                                                  "certificate.json")
MAX_RLIMIT = next(m.le for m in Params.model_fields["rlimit"].metadata if getattr(m, "le", None) is not None)


ProofNodes = tuple[tuple[str, str, int], list[dict[str, object]]]


def check_proofs(theorems: list[Theorem], proofs: list[dict[str, object]], rlimit: int,
                 progress: Callable[[list[ProofNodes]], Iterable[ProofNodes]] = iter) -> list[dict[str, object]]:
    """One verdict row (method, theorem, seed, ok, reason) per proof in ``proofs`` (node rows with method, theorem
    and seed), in first-appearance order, each checked from scratch by a fresh checker; ``progress`` wraps the
    proofs (``paperdag verify`` counts and budgets them)."""
    by_name = {t.name: t for t in theorems}
    checker = Checker(rlimit)
    grouped: dict[tuple[str, str, int], list[dict[str, object]]] = {}
    for r in proofs:
        grouped.setdefault((str(r["method"]), str(r["theorem"]), int(r["seed"])), []).append(r)
    rows = []
    for (method, name, seed), nodes in progress(list(grouped.items())):
        reason = verify_proof(by_name[name], nodes, checker) if name in by_name else f"unknown theorem {name}"
        rows.append({"method": method, "theorem": name, "seed": seed, "ok": not reason, "reason": reason})
    return rows


def reverify(folder: Path, work: Work) -> Result:
    """VERIFIED iff every proof in ``folder`` is accepted again and agrees with its stored verdict (module
    docstring)."""
    folder = Path(folder)
    require_files(folder, CERTIFICATE_FILE, THEOREMS, PROOFS, VERIFIED_FILE)
    rlimit = int(read_json(folder / CERTIFICATE_FILE).get("rlimit", 0))
    if not 0 < rlimit <= MAX_RLIMIT:
        raise Refused("rlimit", f"the certificate asks for rlimit {rlimit}, outside the paper's bound "
                                f"(0, {MAX_RLIMIT}]")
    theorems = theorems_from_rows(read_table(folder / THEOREMS).to_pylist())
    rows = check_proofs(theorems, read_table(folder / PROOFS).to_pylist(), rlimit,
                        progress=lambda proofs: work.each(proofs, "proofs"))
    stored = {(r["method"], r["theorem"], r["seed"]): r["ok"] for r in read_table(folder / VERIFIED_FILE).to_pylist()}
    fresh = {(r["method"], r["theorem"], r["seed"]): r for r in rows}
    rejected = [f"{k}: {r['reason']}" for k, r in fresh.items() if not r["ok"]]
    differ = sorted(set(stored) ^ set(fresh)) + [k for k in fresh if k in stored and stored[k] != fresh[k]["ok"]]
    if rejected or differ:
        shown = "; ".join(rejected[:3] + [f"{k}: stored verdict differs or is missing" for k in differ[:3]])
        return Result(Outcome.REFUTED, f"{len(rejected)} of {len(rows)} proofs rejected, {len(differ)} stored "
                                       f"verdicts disagree: {shown}")
    return Result(Outcome.VERIFIED, f"all {len(rows)} proofs re-checked from scratch by z3 (rlimit {rlimit}) and "
                                    f"accepted")
