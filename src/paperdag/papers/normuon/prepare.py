"""Stage ``prepare``: the standard-library corpus, split by path hash, as Parquet with its provenance."""

from __future__ import annotations

from paperdag.common.corpus import collect_stdlib_corpus, corpus_provenance, write_corpus
from paperdag.io import write_json
from paperdag.stage import StageContext

from .params import Params

CORPUS_FILE = "corpus.parquet"
PROVENANCE_FILE = "provenance.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """corpus.parquet (path, split, text, n_bytes) and provenance.json (Python version, files, sha256)."""
    c = ctx.params.corpus
    columns = collect_stdlib_corpus(list(c.packages), c.max_bytes, c.val_fraction)
    write_corpus(ctx.output(CORPUS_FILE), columns)
    provenance = corpus_provenance(columns) | {"packages": list(c.packages), "files": columns["path"]}
    write_json(ctx.output(PROVENANCE_FILE), provenance)
    n_val = sum(n for n, s in zip(columns["n_bytes"], columns["split"], strict=True) if s == "val")
    return {"n_documents": len(columns["path"]), "train_bytes": sum(columns["n_bytes"]) - n_val, "val_bytes": n_val}
