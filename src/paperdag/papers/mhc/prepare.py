"""Stage ``prepare``: the standard-library corpus (shared substrate), split by path hash, as Parquet with its
provenance, and the unigram baseline every trained model must beat."""

from __future__ import annotations

from paperdag.common.corpus import collect_stdlib_corpus, corpus_provenance, load_split_tokens, write_corpus
from paperdag.io import write_json
from paperdag.stage import StageContext

from .baseline import unigram_cross_entropy
from .params import Params

CORPUS_FILE = "corpus.parquet"
PROVENANCE_FILE = "provenance.json"


def prepare(ctx: StageContext[Params]) -> dict[str, float]:
    """corpus.parquet (path, split, text, n_bytes) and provenance.json (Python version, files, sha256); returns the
    sizes and the unigram cross-entropy of the validation bytes under the training byte frequencies."""
    c = ctx.params.corpus
    columns = collect_stdlib_corpus(list(c.packages), c.max_bytes, c.val_fraction)
    write_corpus(ctx.output(CORPUS_FILE), columns)
    write_json(ctx.output(PROVENANCE_FILE),
               corpus_provenance(columns) | {"packages": list(c.packages), "files": columns["path"]})
    train, val = (load_split_tokens(ctx.output(CORPUS_FILE), s) for s in ("train", "val"))
    return {"n_documents": len(columns["path"]), "train_bytes": len(train), "val_bytes": len(val),
            "unigram_val_loss": unigram_cross_entropy(train, val)}
