"""Part of a run's (sample, trial) work, for runs split across machines (``--shard I/N``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from harness.errors import ConfigError


@dataclass(frozen=True)
class Shard:
    """Part ``index`` (0-based) of ``count`` of a run's (sample, trial) work.

    A pair belongs to the shard picked by a hash of its key, so the partition is
    the same on every machine and does not depend on the order samples load in.
    """

    index: int = 0
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``I/N`` with 1 <= I <= N, as written on the command line (1-based)."""
        index, sep, count = text.partition("/")
        try:
            shard = cls(int(index) - 1, int(count))
        except ValueError:
            raise ConfigError(f"--shard '{text}' is not I/N") from None
        if not sep or shard.count < 1 or not 0 <= shard.index < shard.count:
            raise ConfigError(f"--shard '{text}' needs 1 <= I <= N")
        return shard

    def owns(self, key: str) -> bool:
        if self.count == 1:
            return True
        digest = hashlib.sha256(key.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index

    def label(self) -> str:
        return f"{self.index + 1}/{self.count}"
