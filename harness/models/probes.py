"""The one way a short request before or beside a run reaches a server (the
models listing, llama.cpp's /props, the preflight, a started server's readiness).

Two rules make a probe go where the run's own requests go, carrying what they carry:

- A URL's userinfo (``http://user:password@host/v1``) becomes an
  ``Authorization: Basic`` header and is never part of the URL sent, as the
  run's direct client does (http1.py). Left in the URL, urllib sends it in the request
  line and the ``Host`` header, to an HTTP proxy too.
- A proxy from the environment (``HTTP_PROXY``/``HTTPS_PROXY``) is used unless
  ``NO_PROXY`` names the host, matched on the host name alone, the rule
  aiohttp and httpx apply (``urllib.request.proxy_bypass`` of the host). urllib
  matched the whole ``user:password@host`` against ``NO_PROXY``, so a URL with
  a password never matched and went to the proxy.

Synchronous (urllib): probes run once, before the event loop starts.
"""

from __future__ import annotations

import base64
import http.client
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit, urlunsplit


@dataclass(frozen=True)
class ProbeTarget:
    """A URL to send (no userinfo) and the headers its credentials became."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)


def probe_target(url: str) -> ProbeTarget:
    """``url`` without its userinfo, which becomes a Basic Authorization header."""
    parts = urlsplit(url.strip())
    if parts.username is None and parts.password is None:
        return ProbeTarget(urlunsplit(parts))
    host = parts.netloc.rpartition("@")[2]
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    token = base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return ProbeTarget(urlunsplit(parts._replace(netloc=host)), {"Authorization": f"Basic {token}"})


def proxies_for(url: str) -> dict[str, str]:
    """The environment's proxies for ``url``: none when NO_PROXY names its host."""
    host = urlsplit(url).hostname or ""
    if host and urllib.request.proxy_bypass(host):
        return {}
    return urllib.request.getproxies()


def open_probe(
    url: str,
    *,
    timeout: float,
    headers: dict[str, str] | None = None,
    data: bytes | None = None,
    method: str | None = None,
) -> http.client.HTTPResponse:
    """``urlopen`` of ``url`` by the two rules above (a context manager; raises
    what urlopen raises). An Authorization in ``headers`` (a bearer key) wins
    over the URL's userinfo, as it does in the run's direct client."""
    target = probe_target(url)
    request = urllib.request.Request(target.url, data=data, method=method)
    for name, value in {**target.headers, **(headers or {})}.items():
        request.add_header(name, value)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxies_for(target.url)))
    return opener.open(request, timeout=timeout)
