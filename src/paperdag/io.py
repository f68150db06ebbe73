"""File helpers for stage functions, one format per kind of data: Parquet tables (pyarrow), JSON, tensors and
weights (safetensors), figures (PNG from a matplotlib ``Figure``, no pyplot state).

Stage outputs are written into a temporary folder that the platform commits atomically, so these helpers write
plainly. ``write_json_atomic`` is for files outside a stage output (metrics/, reports/).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

# numpy and pyarrow are imported where used: the CLI's planning path (e.g. a store hit under `dvc repro`) reads and
# writes JSON only and stays fast.


def write_table(path: Path, columns: dict[str, Any] | pa.Table) -> None:
    """Write a table (dict of equal-length columns, lists/arrays allowed as cells) to Parquet."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = columns if isinstance(columns, pa.Table) else pa.table(
        {k: (list(v) if isinstance(v, np.ndarray) and v.ndim > 1 else v) for k, v in columns.items()}
    )
    pq.write_table(table, path)


def read_table(path: Path) -> pa.Table:
    """Read a Parquet table."""
    import pyarrow.parquet as pq

    return pq.read_table(path)


def save_tensors(path: Path, tensors: dict[str, Any], metadata: dict[str, str] | None = None) -> None:
    """Write named torch tensors (model weights, arrays) to one safetensors file, the one weight format.

    Tensors are made contiguous and moved to the CPU; ``metadata`` is a small str -> str header (e.g. a config).
    safetensors writes the metadata in hash-map order, which changes from one process to the next, so the JSON
    header is rewritten with sorted keys (tensor offsets are relative to the data section and stay valid; the header
    is space-padded to a multiple of 8 bytes, as safetensors writes it): the same tensors give the same bytes.
    """
    from safetensors.torch import save

    data = save({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, metadata=metadata)
    size = int.from_bytes(data[:8], "little")
    header = json.dumps(json.loads(data[8:8 + size]), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = header.encode().ljust(-(-len(header.encode()) // 8) * 8, b" ")
    path.write_bytes(len(text).to_bytes(8, "little") + text + data[8 + size:])


def load_tensors(path: Path, device: str = "cpu") -> dict[str, Any]:
    """Read every tensor of a safetensors file onto ``device``."""
    from safetensors.torch import load_file

    return load_file(str(path), device=device)


def new_figure(width: float = 6.4, height: float = 4.8, ncols: int = 1, nrows: int = 1) -> tuple[Any, Any]:
    """A matplotlib ``Figure`` (object API: no pyplot, no global state, safe in threads) and its axes grid."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(nrows, ncols)


def save_figure(fig: Any, path: Path, dpi: int = 110) -> None:
    """Render a ``Figure`` to PNG with no varying metadata, so the same figure gives the same bytes."""
    fig.savefig(path, dpi=dpi, format="png", metadata={"Software": None})


def to_jsonable(value: Any) -> Any:
    """numpy scalars/arrays and tuples to plain JSON types."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    np = sys.modules.get("numpy")  # without numpy loaded there can be no numpy values
    if np is None:
        return value
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def write_json(path: Path, data: Any) -> None:
    """Write JSON (sorted keys, indented) converting numpy types."""
    Path(path).write_text(json.dumps(to_jsonable(data), indent=2, sort_keys=True) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text())


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to a temporary file beside ``path`` and rename it into place (never half-written)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(to_jsonable(data), indent=2, sort_keys=True) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write text to a temporary file beside ``path`` and rename it into place."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
