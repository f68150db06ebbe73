"""`paperdag run <slug> --replicate`: the default sizes on fresh seeds (an overlay of seed keys only), published
under metrics/profiles/replicate/; anything else in the overlay, a missing overlay or a profile beside it is a
one-line error with exit 2 and nothing written."""

from __future__ import annotations

import json

import pytest

from conftest import paperdag
from paperdag.params import seed_keys_only


def test_seed_keys_only_accepts_seeds_and_refuses_sizes():
    base = {"seed": 0, "seeds": [1, 2, 3], "n": 5, "train": {"eval_seed": 4, "steps": 10}}
    assert seed_keys_only({"seed": 7, "seeds": [11, 12, 13], "train": {"eval_seed": 9}}, base) is None
    assert seed_keys_only({"seed_offset": 100}, base) is None
    assert "n (not a seed key" in seed_keys_only({"n": 6}, base)
    assert "train.steps (not a seed key" in seed_keys_only({"train": {"steps": 20}}, base)
    assert "seeds (a replicate keeps the number of seeds)" in seed_keys_only({"seeds": [11, 12]}, base)
    assert "n_seeds (a number of seeds is a size" in seed_keys_only({"n_seeds": 6}, {"n_seeds": 3})
    assert "seeds (a number of seeds is a size" in seed_keys_only({"seeds": 20}, {"seeds": 10})


def _error(result) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("overlay, args, words", [
    ("", ["--replicate"], "declares no replicate seeds (toy.profiles.replicate"),
    ("    replicate:\n      n: 10\n", ["--replicate"], "toy.profiles.replicate.n (not a seed key"),
    ("    replicate:\n      seed: 1\n", ["--replicate", "-p", "smoke"], "takes no --profile"),
])
def test_bad_replicate_requests_are_one_line_and_write_nothing(toy_project, overlay, args, words):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10\n", "      n: 10\n" + overlay, 1))
    assert words in _error(paperdag("run", "toy", *args, "--local", cwd=toy_project.root))
    assert not (toy_project.root / "artifacts").exists()


def test_a_replicate_publishes_beside_the_default(toy_project):
    params = toy_project.params_path
    params.write_text(params.read_text().replace("      n: 10\n", "      n: 10\n    replicate:\n      seed: 1\n", 1))
    assert paperdag("run", "toy", "--local", cwd=toy_project.root).returncode == 0
    result = paperdag("run", "toy", "--replicate", "--local", cwd=toy_project.root)
    assert result.returncode == 0, result.stderr
    default = json.loads((toy_project.root / "metrics" / "toy.json").read_text())
    replicate = json.loads((toy_project.root / "metrics" / "profiles" / "replicate" / "toy.json").read_text())
    assert (default["profile"], replicate["profile"]) == ("default", "replicate")
    assert replicate["key"] != default["key"]  # fresh seeds: another computation
    assert [c["id"] for c in replicate["claims"]] == [c["id"] for c in default["claims"]]
