"""Errors the command line reports as one clear line with exit code 2."""


class ConfigError(Exception):
    """A bad suite, model, flag, path or missing key: the user must fix the command."""
