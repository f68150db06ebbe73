"""Errors a user can act on: the CLI prints them as one line and exits with their code."""


class PaperdagError(Exception):
    """A problem with the user's input or environment (exit code 1 unless a subclass says otherwise)."""

    exit_code = 1


class UsageError(PaperdagError):
    """Bad command-line input: unknown paper, stage or profile (exit code 2)."""

    exit_code = 2


class ParamsError(PaperdagError):
    """params.yaml fails validation for a paper (exit code 2); the message names paper, key and file."""

    exit_code = 2


class EnvironmentProblem(PaperdagError):
    """The environment cannot be used as set: a variable with a bad value, a server that is not there or not what
    it should be, a folder that is a file (exit code 2: fix it and rerun; nothing was written)."""

    exit_code = 2


def env_seconds(name: str, default: float) -> float:
    """The positive, finite number of seconds in environment variable ``name`` (``default`` when unset or empty);
    any other value is one ``EnvironmentProblem`` line naming the variable."""
    import math
    import os

    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise EnvironmentProblem(f"{name}={text[:40]!r} is not a positive number of seconds")
    return value


class StageFailed(PaperdagError):
    """A stage raised; the message names the paper, the stage and the error."""

    exit_code = 1


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached the driver: raised in the main thread by the CLI's signal handlers. A
    ``BaseException`` (like ``KeyboardInterrupt``) so that stage code catching ``Exception`` does not swallow it;
    the CLI prints one ``interrupted: ...`` line and exits 128 + the signal number (130, 143)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def traceback_text(error: BaseException) -> str:
    """The full traceback of a stage's error: the worker's, where the error crossed from a Ray worker (kept as
    ``paperdag_traceback``), else this process's."""
    import re
    import traceback

    remote = getattr(error, "paperdag_traceback", None)
    text = remote if isinstance(remote, str) and remote else "".join(traceback.format_exception(error))
    return re.sub(r"\x1b\[[0-9;]*m", "", text)  # Ray colours the worker's name
