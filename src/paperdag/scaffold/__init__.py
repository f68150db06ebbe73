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


RESERVED = {"all"}  # `paperdag run all` means every paper


def _render(name: str, slug: str, title: str) -> str:
    """A template file with the slug, the title as a Python string literal (``__TITLE_LITERAL__``) and the title
    inside a docstring (``__TITLE__``, its backslashes and quotes escaped), so any title gives code that parses."""
    text = (TEMPLATE / f"{name}.tmpl").read_text().replace("__SLUG__", slug)
    text = text.replace("__TITLE_LITERAL__", repr(title))
    return text.replace("__TITLE__", title.replace("\\", "\\\\").replace('"', '\\"'))


def check_new(project: Project, slug: str, title: str) -> Path:
    """The package folder ``new`` would write (``<project>/src/paperdag/papers/<slug>``), or one line saying why
    it may not: a slug that is not a lowercase identifier, a keyword or ``all``, a paper that exists (registered,
    package, test file or params.yaml section), a title that is empty or not one line, or a project that is not a
    paperdag checkout."""
    from paperdag.dag import paper_slugs

    if not re.fullmatch(r"[a-z][a-z0-9_]*", slug) or keyword.iskeyword(slug) or keyword.issoftkeyword(slug):
        raise UsageError(f"slug {slug!r} must be a lowercase Python identifier (letters, digits, underscores) and "
                         "not a Python keyword")
    if slug in RESERVED:
        raise UsageError(f"slug {slug!r} is reserved (`paperdag run {slug}` runs every paper)")
    if not title.strip() or any(c in title for c in "\r\n"):
        raise UsageError("--title must be one non-empty line")
    papers = project.root / "src" / "paperdag" / "papers"
    test_file = project.root / "tests" / "papers" / f"test_{slug}.py"
    if slug in paper_slugs() or (papers / slug).exists() or test_file.exists() or \
            re.search(rf"(?m)^{slug}:", project.params_path.read_text()):
        raise UsageError(f"paper {slug!r} already exists (registered paper, package, test file or params.yaml section)")
    if not papers.is_dir():
        raise UsageError(f"{project.root} has no src/paperdag/papers: `paperdag new` writes into a paperdag checkout")
    return papers / slug


def new_paper(project: Project, slug: str, title: str) -> list[Path]:
    """Write ``src/paperdag/papers/<slug>/``, ``tests/papers/test_<slug>.py`` and the slug's params.yaml section
    in the project found from the working folder; refuses in one line, writing nothing, what ``check_new`` does."""
    package = check_new(project, slug, title)
    test_file = project.root / "tests" / "papers" / f"test_{slug}.py"
    params_text = project.params_path.read_text()
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
