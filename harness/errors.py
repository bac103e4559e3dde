"""Errors the command line reports as one clear line with exit code 2."""


class ConfigError(ValueError):
    """A bad suite, model, flag, path or missing key: the user must fix the command."""


class DataNotFoundError(ConfigError):
    """Benchmark data that is not on this machine: the message says where it was
    looked for and how to get it. A run lists the subset as not run."""


class ModelOutputError(Exception):
    """Model output that makes an episode or its scoring impossible (raised by
    adapters and strategies): the runner scores it as the model's failure, not
    as an infrastructure error."""


def one_line(text: str) -> str:
    """An error message on one line (YAML and OS errors span several)."""
    return " ".join(str(text).split())


def yaml_problem(exc: Exception) -> str:
    """A YAML parse error as one short line: where, and what is wrong."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or str(exc)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return one_line(f"{where}{problem}")
