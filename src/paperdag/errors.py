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
