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
