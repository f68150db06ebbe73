"""Toy stages: deterministic, cheap, each writing a Parquet table or the metrics file."""

import os
import struct
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from paperdag.claims import write_metrics
from paperdag.common.verdicts import evidence, exact, precondition
from paperdag.io import read_table, write_table
from paperdag.stage import StageContext


def _maybe_fail(ctx: StageContext, name: str) -> None:
    """Record that the stage ran (a file in $TOY_LOG), sleep, and raise if $TOY_FAIL names this stage (or if
    $TOY_FAIL_ONCE does and it has not failed yet: a marker file in $TOY_LOG)."""
    if "TOY_LOG" in os.environ:
        (Path(os.environ["TOY_LOG"]) / f"{name}.{time.time_ns()}").touch()
    time.sleep(ctx.params.sleep)
    if os.environ.get("TOY_FAIL") == name:
        raise ValueError(f"{name} was told to fail")
    marker = Path(os.environ.get("TOY_LOG", ".")) / f"failed-once-{name}"
    if os.environ.get("TOY_FAIL_ONCE") == name and not marker.exists():
        marker.touch()
        raise ValueError(f"{name} was told to fail")


def prepare(ctx: StageContext) -> dict[str, float]:
    _maybe_fail(ctx, "prepare")
    x = ctx.rng.normal(size=ctx.params.n)
    write_table(ctx.output("data.parquet"), {"x": x})
    return {"mean": float(x.mean())}


def _rendezvous(variant: str, timeout: float = 120.0) -> None:
    """With $TOY_RENDEZVOUS set, wait until both train stages have started (marker files in $TOY_LOG): they meet
    only if they run at the same time, so a one-by-one executor fails here instead of passing on a lucky clock."""
    if not os.environ.get("TOY_RENDEZVOUS"):
        return
    log = Path(os.environ["TOY_LOG"])
    (log / f"rendezvous-{variant}").touch()
    deadline = time.monotonic() + timeout
    while not all((log / f"rendezvous-{v}").exists() for v in ("a", "b")):
        if time.monotonic() > deadline:
            raise TimeoutError(f"train_{variant} waited {timeout:.0f} s for the other train stage to start")
        time.sleep(0.05)


def train(ctx: StageContext, variant: str) -> dict[str, float]:
    _maybe_fail(ctx, f"train_{variant}")
    _rendezvous(variant)
    print(f"[{ctx.label}] a line from the stage", file=sys.stderr, flush=True)
    scale = getattr(ctx.params, f"scale_{variant}")
    x = read_table(ctx.input("prepare", "data.parquet"))["x"].to_numpy()
    for step in range(3):
        ctx.log_metric("loss", float(np.abs(x * scale).mean()) / (step + 1), step)
    write_table(ctx.output("model.parquet"), {"y": x * scale})
    return {"scale": scale}


def grey_png(value: int) -> bytes:
    """A 1x1 PNG of grey level ``value`` (0-255): a plot whose bytes tell runs apart, without matplotlib."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes([0, value % 256]))) + chunk(b"IEND", b""))


def evaluate(ctx: StageContext) -> dict[str, float]:
    _maybe_fail(ctx, "evaluate")
    a = read_table(ctx.input("train_a", "model.parquet"))["y"].to_numpy()
    b = read_table(ctx.input("train_b", "model.parquet"))["y"].to_numpy()
    ratio = float(np.abs(b).sum() / np.abs(a).sum())
    total = float(np.abs(a).sum())
    learned = precondition("a_is_nonzero", "train_a's output is not all zero", "an all-zero output",
                           {"sum_abs_a": total}, exact(total > 0, f"sum |a| = {total:g}", basis="fixed set"))
    ratio_claim = evidence("ratio", "b is twice a", 2.0, ratio,
                           exact(abs(ratio - 2.0) < 1e-9, f"ratio {ratio:g} vs 2", basis="closed form"),
                           requires=["a_is_nonzero"])
    write_metrics(ctx.out, {"ratio": ratio}, [learned, ratio_claim])
    ctx.output("n.png").write_bytes(grey_png(len(a)))
    return {"ratio": ratio}
