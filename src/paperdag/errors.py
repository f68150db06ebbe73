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
