"""The LLM solver's prompt and answer parsing (shared by both backends), and the optional OpenAI-compatible
chat-completions endpoint a user configures (``solve.llm_backend: endpoint``, ``solve.llm_endpoint`` /
``solve.llm_model``). The endpoint is never required nor called in tests; with it on, evaluate's results also depend
on the remote model (temperature 0 is asked, not guaranteed). The in-process backend is smollm2.py.

The prompt shows the demos as JSON grids and asks for the query's output as one JSON array; the answer is the
last JSON array in the reply.
"""

from __future__ import annotations

import json
import os
import urllib.request

import numpy as np

from .tasks import Task

API_KEY_ENV = "A2RBENCH_LLM_API_KEY"  # sent as a Bearer token when set


def prompt(task: Task) -> str:
    """The task as text: each demo's input and output grid, then the query grid."""
    lines = ["Each input grid is transformed into its output grid by the same hidden rule.", ""]
    for i, (x, y) in enumerate(zip(task.demos_in, task.demos_out), 1):
        lines += [f"Example {i} input: {json.dumps(x.tolist())}", f"Example {i} output: {json.dumps(y.tolist())}"]
    lines += ["", f"Query input: {json.dumps(task.query.tolist())}",
              "Reply with the query's output grid as one JSON array and nothing else."]
    return "\n".join(lines)


def parse_grid(text: str) -> np.ndarray | None:
    """The last top-level bracketed span of ``text`` that parses as a JSON array of integers (None if none)."""
    found, depth, start = None, 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            start, depth = (i if depth == 0 else start), depth + 1
        elif ch == "]" and depth:
            depth -= 1
            if depth == 0:
                try:
                    grid = np.array(json.loads(text[start:i + 1]))
                except (ValueError, TypeError):
                    continue
                if grid.size and grid.dtype.kind == "i":
                    found = grid.astype(np.int16)
    return found


def ask(endpoint: str, model: str, content: str, timeout_s: float = 120.0) -> str:
    """POST one user message to ``endpoint``/chat/completions; the first choice's text."""
    body = json.dumps({"model": model, "temperature": 0, "messages": [{"role": "user", "content": content}]})
    headers = {"Content-Type": "application/json"}
    if os.environ.get(API_KEY_ENV):
        headers["Authorization"] = f"Bearer {os.environ[API_KEY_ENV]}"
    request = urllib.request.Request(endpoint.rstrip("/") + "/chat/completions", body.encode(), headers)
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return json.loads(response.read())["choices"][0]["message"]["content"]
