"""params.yaml: one section per paper slug (the default profile), with overlays under ``<slug>.profiles.<name>``.

Params are validated with the paper's pydantic model before anything runs; any problem is a one-line
``ParamsError`` naming the file, the paper and the key (exit code 2).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from paperdag.errors import ParamsError, UsageError

PROFILES_KEY = "profiles"
DEFAULT_PROFILE = "default"
REPLICATE_PROFILE = "replicate"  # fresh seeds, same sizes: its overlay may set only seed keys (``seed_keys_only``)
GPU_PROFILE = "gpu"  # sized for one GPU node; its committed verdicts (metrics/profiles/gpu/) are reported beside
SEED_KEY = re.compile(r"(.*_)?seeds?(_offset)?")


class ParamsModel(BaseModel):
    """Base for a paper's params (and its sub-models): unknown keys are errors and values are immutable.

    Every field is bounded and described and has no default: params.yaml is the one source of values. A stage sees
    the object restricted to the keys it declares; reading another key raises AttributeError naming it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __getattr__(self, name: str) -> Any:
        if name in type(self).model_fields:
            raise AttributeError(f"param {name!r} is not declared by this stage: add it to Stage(params=...), so "
                                 f"that it enters the stage's cache key")
        return super().__getattr__(name)


class _UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader (libyaml's parser where available) that refuses a key given twice in one mapping
    (YAML would keep the last one without a word)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key == "<<" or not isinstance(key, (str, int, float, bool)):
                continue  # merge keys, and unhashable keys PyYAML itself refuses
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def read_params_file(path: Path) -> dict[str, Any]:
    """Parse params.yaml into a dict (a one-line ParamsError on YAML syntax errors, a key given twice, text that
    is not UTF-8); libyaml's parser where PyYAML has it (~10x faster than the pure-Python scanner)."""
    try:
        data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_UniqueKeyLoader) or {}
    except FileNotFoundError:
        raise ParamsError(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise ParamsError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ParamsError(f"{path}{where}: invalid YAML ({getattr(e, 'problem', e)})") from None
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping of paper sections")
    return data


def deep_merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``overlay`` applied: nested mappings merge key by key, any other value replaces."""
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _validate(model: type[BaseModel], values: dict[str, Any], path: Path, slug: str, where: str) -> BaseModel:
    try:
        validated = model(**values)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(section)"
        got = f" (got {_short_repr(err['input'])})" if err["type"] != "missing" and "input" in err else ""
        raise ParamsError(f"{path}: {slug}{where}.{key}: {err['msg']}{got}") from None
    unset = _unset(validated)
    if unset:
        raise ParamsError(f"{path}: {slug}{where}.{unset[0]}: not set (params.yaml is the one source of values; "
                          f"a model default is never used silently)")
    return validated


def _short_repr(value: Any) -> str:
    """A bounded repr (depth and length limited): a YAML alias bomb must not become a megabyte error line."""
    import reprlib

    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxother = 3, 6, 6, 60, 60
    return short.repr(value)


def check_sections(data: dict[str, Any], known: list[str], path: Path) -> None:
    """A one-line ParamsError for a top-level section of params.yaml that is no paper (a misspelt slug would
    otherwise be ignored without a word), with the closest known slug."""
    import difflib

    for name in data:
        if name not in known:
            close = difflib.get_close_matches(str(name), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (papers: {', '.join(sorted(known))})"
            raise ParamsError(f"{path}: section {str(name)[:60]!r} is no paper{hint}")


def _unset(values: BaseModel, prefix: str = "") -> list[str]:
    """Dotted names of the fields (in sub-models too) that took their model default instead of a params.yaml value."""
    missing = []
    for name in type(values).model_fields:
        if name not in values.model_fields_set:
            missing.append(f"{prefix}{name}")
        else:
            child = getattr(values, name)
            if isinstance(child, BaseModel):
                missing += _unset(child, f"{prefix}{name}.")
    return missing


def seed_keys_only(overlay: dict[str, Any], base: dict[str, Any], where: str = "") -> str | None:
    """The first key of a replicate overlay that is not a seed key (``seed``, ``<x>_seed``, ``seed_offset``: values;
    ``seeds``, ``<x>_seeds``: lists of values), or that changes a seed list's length or a count of seeds (the
    replicate keeps every size), else None."""
    for key, value in overlay.items():
        name = f"{where}{key}"
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            if (bad := seed_keys_only(value, base[key], f"{name}.")) is not None:
                return bad
        elif not SEED_KEY.fullmatch(str(key)):
            return f"{name} (not a seed key: a replicate changes only seeds)"
        elif str(key).endswith("seeds") and not isinstance(value, list):
            return f"{name} (a number of seeds is a size: a replicate sets seed values)"
        elif isinstance(value, list) and (not isinstance(base.get(key), list) or len(value) != len(base[key])):
            return f"{name} (a replicate keeps the number of seeds)"
    return None


def load_params(data: dict[str, Any], slug: str, model: type[BaseModel], profile: str, path: Path) -> BaseModel:
    """Validate ``slug``'s section of params.yaml, then the section with the profile's overlay applied.

    The base section is validated even when a profile overrides a bad key, so a broken default never hides.
    """
    section = data.get(slug)
    if slug in data and (section is None or section == {}):
        raise ParamsError(f"{path}: the section for paper {slug!r} is empty (it must set every param)")
    if not isinstance(section, dict):
        raise ParamsError(f"{path}: no section for paper {slug!r}")
    base = {k: v for k, v in section.items() if k != PROFILES_KEY}
    if not base:
        raise ParamsError(f"{path}: the section for paper {slug!r} sets no params, only {PROFILES_KEY} (it must set "
                          f"every param)")
    profiles = section.get(PROFILES_KEY) or {}
    if not isinstance(profiles, dict):
        raise ParamsError(f"{path}: {slug}.{PROFILES_KEY} must be a mapping of profile name to overlay")
    validated = _validate(model, base, path, slug, "")
    if profile == DEFAULT_PROFILE:
        return validated
    if profile == REPLICATE_PROFILE and profile not in profiles:
        raise UsageError(f"paper {slug!r} declares no replicate seeds ({slug}.{PROFILES_KEY}.{profile} in {path.name}: "
                         f"fresh values of its seed keys, same sizes)")
    if profile not in profiles:
        known = ", ".join([DEFAULT_PROFILE, *sorted(profiles)])
        raise UsageError(f"paper {slug!r} has no profile {profile!r} (profiles: {known})")
    overlay = profiles[profile]
    if overlay is None or overlay == {}:
        raise ParamsError(f"{path}: {slug}.{PROFILES_KEY}.{profile} is empty (an overlay sets at least one key; "
                          f"without one it would silently be the default profile)")
    if not isinstance(overlay, dict):
        raise ParamsError(f"{path}: {slug}.{PROFILES_KEY}.{profile} must be a mapping")
    if profile == REPLICATE_PROFILE and (bad := seed_keys_only(overlay, base)) is not None:
        raise ParamsError(f"{path}: {slug}.{PROFILES_KEY}.{profile}.{bad}")
    return _validate(model, deep_merge(base, overlay), path, slug, f".{PROFILES_KEY}.{profile}")
