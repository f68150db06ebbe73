"""``paperdag new <slug>``: a new paper package written from the template in ``template/``.

The template is the code form of the paper contract (docs in the README's "Adding a paper"): a docstring-only
``__init__``, a ``params.py`` without defaults, a ``pipeline.py`` imported only by the registry, one module per
stage, science modules that never see the stage context, a pure ``claims.py``, ``plots.py`` on the Figure API, a
science test file, and a params.yaml section with a smoke profile. As generated it runs and passes the contract.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from paperdag.errors import UsageError
from paperdag.io import write_text_atomic
from paperdag.project import Project

TEMPLATE = Path(__file__).resolve().parent / "template"
PACKAGE_FILES = ("__init__", "params", "pipeline", "data", "model", "prepare", "train", "evaluate", "claims", "plots")


def _render(name: str, slug: str, title: str) -> str:
    return (TEMPLATE / f"{name}.tmpl").read_text().replace("__SLUG__", slug).replace("__TITLE__", title)


def new_paper(project: Project, slug: str, title: str) -> list[Path]:
    """Write ``src/paperdag/papers/<slug>/``, ``tests/papers/test_<slug>.py`` and the slug's params.yaml section.

    Refuses (one line, nothing written) a slug that is not a lowercase identifier or that already exists.
    """
    import paperdag.papers

    if not re.fullmatch(r"[a-z][a-z0-9_]*", slug) or keyword.iskeyword(slug):
        raise UsageError(f"slug {slug!r} must be a lowercase Python identifier (letters, digits, underscores)")
    package = Path(paperdag.papers.__path__[0]) / slug
    test_file = project.root / "tests" / "papers" / f"test_{slug}.py"
    params_text = project.params_path.read_text()
    if package.exists() or test_file.exists() or re.search(rf"(?m)^{slug}:", params_text):
        raise UsageError(f"paper {slug!r} already exists (package, test file or params.yaml section)")
    package.mkdir(parents=True)
    written = []
    for name in PACKAGE_FILES:
        write_text_atomic(package / f"{name}.py", _render(f"{name}.py", slug, title))
        written.append(package / f"{name}.py")
    test_file.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(test_file, _render("test_paper.py", slug, title))
    separator = "" if params_text.endswith("\n") or not params_text else "\n"
    write_text_atomic(project.params_path, params_text + separator + _render("params.yaml", slug, title))
    written += [test_file, project.params_path]
    if _add_extra(project.root / "pyproject.toml", slug):
        written.append(project.root / "pyproject.toml")
    return written


def _add_extra(pyproject: Path, slug: str) -> bool:
    """Declare the paper's (empty) optional extra and add it to ``all``; False when there is no such pyproject."""
    text = pyproject.read_text() if pyproject.is_file() else ""
    found = re.search(r'(?m)^all = \["paperdag\[([A-Za-z0-9_,]+)\]"\]', text)
    if not found:
        return False
    extras = f"{found.group(1)},{slug}"
    write_text_atomic(pyproject, text.replace(found.group(0), f'{slug} = []  # the paper\'s third-party stack\n'
                                                                f'all = ["paperdag[{extras}]"]'))
    return True
