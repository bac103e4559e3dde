"""Local model servers are not API endpoints.

An API provider that does not answer within the per-call timeout is worth
asking again; a server on this machine (``--serve``, or an ``--api-base`` on a
loopback address) that has not answered is usually still computing: on CPU a
5,000-token prompt takes minutes. Abandoning that request and sending it again
makes things worse: a single-slot server finishes the abandoned request first,
then starts the same prompt from scratch.

So for a local server the retry wrapper (retry.py) keeps waiting for the
request it sent as long as the server is alive (it still accepts connections),
up to ``max_wait_s``, and counts the calls that took longer than the timeout;
the run reports them in one line (``FitReport.lines``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

# How long a local call may take at most, however alive the server.
LOCAL_MAX_WAIT_S = 3600.0
# How often a waiting call checks that the server is still there.
CHECK_EVERY_S = 10.0


def is_loopback_url(url: str | None) -> bool:
    """Whether ``url`` names this machine (localhost, 127.0.0.0/8, ::1)."""
    if not url:
        return False
    host = urllib.parse.urlsplit(url.strip()).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class FitReport:
    """Requests of a run that did not fit: calls to a local server that took
    longer than the per-call timeout, and requests longer than the model's
    context window (any server). Shared by the run's clients; one line each at
    the end of the run (the first context overflow also when it happens)."""

    slow_calls: int = 0
    longest_s: float = 0.0
    gave_up: int = 0
    context_overflows: int = 0
    # Where the first context overflow is said at once (the run sets it: stderr);
    # None: only the end-of-run lines.
    say: Callable[[str], None] | None = field(default=None, repr=False, compare=False)

    def context_overflow(self, message: str) -> None:
        """Count a request longer than the context window; the first one is said
        at once, in one line (the count follows at the end of the run)."""
        self.context_overflows += 1
        if self.context_overflows == 1 and self.say is not None:
            self.say(
                f"a request was longer than the model's context window ({message[:200]}); "
                "such episodes end there, scored as failures (context_overflow), and the "
                "run goes on: their count follows at the end"
            )

    def note(self, seconds: float, timeout_s: float) -> None:
        if seconds > timeout_s:
            self.slow_calls += 1
            self.longest_s = max(self.longest_s, seconds)

    def lines(self, timeout_s: float) -> list[str]:
        """What to tell the user at the end of the run (nothing when all fit)."""
        lines = []
        if self.context_overflows:
            lines.append(
                f"{self.context_overflows} request(s) were longer than the model's context "
                "window; those episodes ended there, scored as failures (context_overflow); "
                "a server with a longer context lets them finish"
            )
        time_line = self.time_line(timeout_s)
        if time_line:
            lines.append(time_line)
        return lines

    def time_line(self, timeout_s: float) -> str | None:
        if not self.slow_calls and not self.gave_up:
            return None
        line = (
            f"{self.slow_calls} model call(s) to the local server took longer than "
            f"--timeout {timeout_s:g} s (longest {self.longest_s:.0f} s); "
            "they were waited for, not sent again, while the server was alive"
        )
        if self.gave_up:
            line += f"; {self.gave_up} did not finish within {LOCAL_MAX_WAIT_S:g} s"
        return line


@dataclass
class LocalPatience:
    """How the retry wrapper waits on a local server at ``url``."""

    url: str
    waits: FitReport
    max_wait_s: float = LOCAL_MAX_WAIT_S
    check_every_s: float = CHECK_EVERY_S
    hosts: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.hosts:
            for part in self.url.split(","):
                split = urllib.parse.urlsplit(part.strip())
                default = 443 if split.scheme == "https" else 80
                self.hosts.append((split.hostname or "127.0.0.1", split.port or default))

    async def alive(self) -> bool:
        """Whether any of the servers still accepts a connection."""
        for host, port in self.hosts:
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 2.0)
            except (OSError, asyncio.TimeoutError):
                continue
            writer.close()
            return True
        return False
