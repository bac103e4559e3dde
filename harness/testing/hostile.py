"""Hostile replies for the fake server: what a broken, malicious or unlucky model
server can send, one kind at a time.

Each kind is a function of the request (for the tools it offers) and a canary
path (a file that exists only if some payload got executed) to a ``Reply``.
``HostileHandler`` serves them in turn to the requests that start an agent turn
and answers requests that follow a tool result with plain text, so episodes end
quickly; it counts what it served.

Used by tests/core/test_hostile_server.py; run by hand as a server::

    python -m harness.testing.hostile --port 0
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import threading
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from harness.boundary.json_value import JsonObject, JsonValue
from harness.testing.fake_server import FakeServer, Reply

MB = 1 << 20


@dataclass
class Context:
    tools: list[str]  # names of the tools the request offers
    canary: str  # a path that must never be created

    def tool(self, *preferred: str) -> str:
        for name in preferred:
            if name in self.tools:
                return name
        return self.tools[0] if self.tools else "missing_tool"


def _raw_body(message: JsonObject, finish: JsonValue = "stop") -> JsonObject:
    return {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10},
    }


def _ascii_json(value: object) -> bytes:
    # ensure_ascii writes lone surrogates as "\ud800" escapes, as broken servers do.
    return json.dumps(value, ensure_ascii=True).encode("ascii")


def _call(name: str, arguments: JsonValue, call_id: JsonValue = "call_h") -> JsonObject:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _calls_body(
    *calls: JsonObject, finish: JsonValue = "tool_calls", content: JsonValue = None
) -> bytes:
    return _ascii_json(
        _raw_body({"role": "assistant", "content": content, "tool_calls": [*calls]}, finish)
    )


def _nested(depth: int) -> str:
    return '{"a": ' + "[" * depth + "]" * depth + "}"


def gzip_bomb(inflated_mb: int) -> bytes:
    """About 1 KB of gzip per MB of zeros it inflates to (trailer not valid: a
    reader that honours its cap never reaches it)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * MB
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first + block * (inflated_mb - 1) + compressor.flush()


def spaces(total_mb: int) -> Iterator[bytes]:
    piece = b" " * MB
    for _ in range(total_mb):
        yield piece


_BOMB: list[bytes] = []
_SPACES: list[bytes] = []
_BIG_LOCK = threading.Lock()


def _bomb() -> bytes:
    with _BIG_LOCK:
        if not _BOMB:
            _BOMB.append(gzip_bomb(400))
        return _BOMB[0]


def _spaces_body() -> bytes:
    """400 MB of spaces sent with its Content-Length (made once, then shared)."""
    with _BIG_LOCK:
        if not _SPACES:
            _SPACES.append(b" " * (400 * MB))
        return _SPACES[0]


def _shell(ctx: Context) -> str:
    return f"$(touch {ctx.canary}); `touch {ctx.canary}`; __import__('os').system('touch {ctx.canary}')"


Kind = Callable[[Context], Reply]

KINDS: dict[str, Kind] = {
    # -- attacks on the tools and the report, and a server that never answers --------
    "hang": lambda c: Reply.slow(60.0, Reply.text("too late")),
    "shell_in_arguments": lambda c: Reply(
        body=_calls_body(_call(c.tool(), json.dumps({"q": _shell(c), "path": "../../etc/passwd"})))
    ),
    "python_call_text": lambda c: Reply.text(
        f"[{c.tool()}(x=__import__('os').system('touch {c.canary}'))]"
    ),
    "dunder_tool_name": lambda c: Reply(
        body=_calls_body(_call("__class__", "{}"), _call("_load_scenario", "{}"))
    ),
    "script_in_content": lambda c: Reply.text(
        "<script>document.title='pwned'</script><img src=x onerror=alert(1)></script><!--"
    ),
    "power_exponent_1e8": lambda c: Reply(
        body=_calls_body(_call("power", '{"base": 2, "exponent": 100000000}'))
    ),
    "square_root_precision_1e9": lambda c: Reply(
        body=_calls_body(_call("square_root", '{"number": 2, "precision": 1000000000}'))
    ),
    "calculate_product_of_powers": lambda c: Reply(
        body=_calls_body(
            _call("calculate", json.dumps({"expression": "*".join(["999999**100"] * 100_000)}))
        )
    ),
    "calculate_tower": lambda c: Reply(
        body=_calls_body(_call("calculate", '{"expression": "9**9**9**9"}'))
    ),
    "calculate_code": lambda c: Reply(
        body=_calls_body(
            _call(
                "calculate",
                json.dumps({"expression": f"__import__('os').system('touch {c.canary}')"}),
            )
        )
    ),
    # -- broken text: lone surrogates and invalid bytes --------------------------------
    "surrogate_in_arguments": lambda c: Reply(
        body=_calls_body(_call(c.tool(), json.dumps({"x": "\ud800"})))
    ),
    "surrogate_in_keys": lambda c: Reply(
        body=_calls_body(_call(c.tool(), json.dumps({"\udc80k": 1})))
    ),
    "surrogate_in_call_id": lambda c: Reply(
        body=_calls_body(_call(c.tool(), "{}", call_id="id\ud800"))
    ),
    "surrogate_in_finish_reason": lambda c: Reply(
        body=_calls_body(_call(c.tool(), "{}"), finish="\udfff")
    ),
    "surrogate_in_name": lambda c: Reply(body=_calls_body(_call(c.tool() + "\ud800", "{}"))),
    "surrogate_in_content": lambda c: Reply(
        body=_ascii_json(_raw_body({"role": "assistant", "content": "a\ud800b"}))
    ),
    "invalid_utf8_body": lambda c: Reply(
        body=_ascii_json(_raw_body({"role": "assistant", "content": "XX"})).replace(
            b"XX", b"\xff\xfe\xc0"
        )
    ),
    "nul_and_controls": lambda c: Reply.text("nul\x00 bell\x07 esc\x1b[31m \u2028\u2029 \ufeff"),
    # -- parse bounds ----------------------------------------------------------------
    "arguments_960_deep": lambda c: Reply(body=_calls_body(_call(c.tool(), _nested(960)))),
    "arguments_100k_deep": lambda c: Reply(body=_calls_body(_call(c.tool(), _nested(100_000)))),
    "arguments_object_deep": lambda c: Reply(
        body=b'{"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "d", "function": '
        b'{"name": "'
        + c.tool().encode()
        + b'", "arguments": {"a": '
        + b"[" * 900
        + b"]" * 900
        + b"}}}]}, "
        b'"finish_reason": "tool_calls"}]}'
    ),
    "integer_5000_digits": lambda c: Reply(
        body=_calls_body(_call(c.tool(), '{"n": ' + "9" * 5000 + "}"))
    ),
    "integer_in_body": lambda c: Reply(
        body=b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "n": '
        + b"7" * 6000
        + b"}"
    ),
    "nan_infinity": lambda c: Reply(
        body=_calls_body(_call(c.tool(), '{"a": NaN, "b": -Infinity}'))
    ),
    "float_overflow": lambda c: Reply(body=_calls_body(_call(c.tool(), '{"a": 1e999}'))),
    "nan_in_body": lambda c: Reply(
        body=b'{"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}], "usage": '
        b'{"prompt_tokens": NaN, "completion_tokens": Infinity}, "logprobs": [NaN]}'
    ),
    "list_300k_items": lambda c: Reply(
        body=_calls_body(_call(c.tool(), '{"a": [' + ",".join(["0"] * 300_000) + "]}"))
    ),
    "thousand_calls": lambda c: Reply(
        body=_calls_body(*[_call(c.tool(), "{}", f"c{i}") for i in range(1000)])
    ),
    "megabyte_name_and_id": lambda c: Reply(body=_calls_body(_call("n" * MB, "{}", "i" * MB))),
    "three_mb_content": lambda c: Reply.text("<b>big</b>" * 300_000),
    # -- size ------------------------------------------------------------------------
    "chunked_400mb": lambda c: Reply(chunks=spaces(400)),
    "gzip_bomb_400mb": lambda c: Reply(body=_bomb(), headers={"Content-Encoding": "gzip"}),
    "content_length_400mb": lambda c: Reply(body=_spaces_body()),
    # -- broken replies --------------------------------------------------------------
    "truncated_json": lambda c: Reply(body=_calls_body(_call(c.tool(), "{}"))[:-15]),
    "error_body_with_200": lambda c: Reply(body=b'{"error": {"message": "upstream failed"}}'),
    "empty_choices": lambda c: Reply(body=b'{"choices": []}'),
    "choices_not_a_list": lambda c: Reply(body=b'{"choices": {"0": "x"}}'),
    "garbage_tool_calls": lambda c: Reply(
        body=_ascii_json(
            _raw_body({"role": "assistant", "tool_calls": [1, "x", None, [], {"function": 7}]})
        )
    ),
    "content_parts_garbage": lambda c: Reply(
        body=_ascii_json(
            _raw_body({"role": "assistant", "content": [{"text": 5}, 7, None, {"x": []}]})
        )
    ),
    "odd_usage": lambda c: Reply(
        body=b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -5, '
        b'"completion_tokens": "lots"}}'
    ),
    "html_body": lambda c: Reply(body=b"<html><body>502 Bad Gateway</body></html>"),
    "json_array_body": lambda c: Reply(body=b"[1, 2, 3]"),
    "rate_limited_retry_after": lambda c: Reply.rate_limited(retry_after=0.2),
    "rate_limited_no_retry_after": lambda c: Reply.rate_limited(retry_after=None),
    "server_error_500": lambda c: Reply.server_error(500),
    "unavailable_503": lambda c: Reply.server_error(503),
    "dropped_connection": lambda c: Reply.dropped(),
}


# Kinds that attack one tool: served only to requests that offer it.
NEEDS_TOOL = {
    "power_exponent_1e8": "power",
    "square_root_precision_1e9": "square_root",
    "calculate_product_of_powers": "calculate",
    "calculate_tower": "calculate",
    "calculate_code": "calculate",
}


def _function_of(tool: JsonObject) -> JsonObject:
    function = tool.get("function")
    return function if isinstance(function, dict) else {}


class HostileHandler:
    """Serves every kind in turn (the least served one that applies, tool-specific
    kinds first) to requests that start an agent turn."""

    def __init__(self, canary: str, kinds: list[str] | None = None):
        self.canary = canary
        self.kinds = list(kinds or KINDS)
        self.served: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: JsonObject) -> Reply:
        messages = request.get("messages")
        last = messages[-1] if isinstance(messages, list) and messages else None
        if isinstance(last, dict) and last.get("role") == "tool":
            return Reply.text("Done.")
        tools = request.get("tools")
        names = [
            str(_function_of(tool).get("name"))
            for tool in (tools if isinstance(tools, list) else [])
            if isinstance(tool, dict)
        ]
        applicable = [k for k in self.kinds if NEEDS_TOOL.get(k) in (None, *names)]
        with self._lock:
            kind = min(
                applicable,
                key=lambda k: (self.served[k], k not in NEEDS_TOOL, self.kinds.index(k)),
            )
            self.served[kind] += 1
        return KINDS[kind](Context(names, self.canary))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake chat server sending hostile replies.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--canary", default="/tmp/harness-hostile-canary")
    args = parser.parse_args(argv)
    server = FakeServer(handler=HostileHandler(args.canary), port=args.port, record_bodies=False)

    async def serve() -> None:
        await server.listen()
        print(f"FAKE_SERVER_URL {server.url}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.close()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())


if __name__ == "__main__":
    main()
