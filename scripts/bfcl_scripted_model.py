"""A deterministic, imperfect BFCL model behind a local server (for the end-to-end
parity script, scripts/bfcl_end_to_end_parity.py).

The server answers both APIs the two pipelines use: chat completions (the
harness) and the Responses API (BFCL's OpenAI handler). Each request is reduced
to the same view on both sides: the conversation's first user message, the
user-turn index, the step index within the turn, the offered tool names and
whether tools come natively (FC) or in the prompt. The reply is a pure function
of that view, so both pipelines get the same reply at the same point.

What it answers: the gold calls of the entry (found by its first user message)
or text, with one mistake per turn chosen by a hash of the view. The mistakes
cover how replies are decoded and when turns end:
FC: arguments "" / malformed JSON / a JSON array / NaN, a wrong or missing
argument, a dotted name, an unknown extra call, no call, text that repeats the
calls, calls spread over steps, a repeated step, running into the step cap (also
inside a memory conversation, which then ends while the next one starts).
Prompt: fenced code, wrapping quotes, bare names, arithmetic, unary plus,
positional and non-literal positional arguments, nested calls, ``**{...}``,
``...``, tuples, sets, lambdas, empty dict arguments, prose around the calls,
plain text.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.adapters.bfcl.categories import Kind, kind_of
from harness.adapters.bfcl.data import Entry, load_entries
from harness.adapters.bfcl.oracle import answer_text, ast_gold_calls, multi_turn_gold_calls

TOOL_RESULT_PREFIX = "[{'role': 'tool'"


# ---------------------------------------------------------------- the view


@dataclass
class View:
    """What the model bases its reply on (the same on both pipelines)."""

    first_user: str
    turn: int
    step: int
    tools: list[str]
    native_tools: bool
    system: str = ""
    last_user: str = ""

    def seed(self, salt: str = "") -> int:
        key = f"{self.first_user}|{self.turn}|{self.step}|{self.native_tools}|{salt}"
        return int(hashlib.sha256(key.encode()).hexdigest()[:12], 16)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _events(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(kind, text) per item: system, user, tool or assistant."""
    events = []
    for item in items:
        kind = item.get("type")
        role = item.get("role")
        if kind == "function_call_output" or role == "tool":
            events.append(("tool", ""))
        elif kind == "function_call" or role == "assistant":
            events.append(("assistant", ""))
        elif role in ("system", "developer"):
            events.append(("system", _text(item.get("content"))))
        elif role == "user":
            text = _text(item.get("content"))
            events.append(("tool" if text.startswith(TOOL_RESULT_PREFIX) else "user", text))
    return events


def view_of(items: list[dict[str, Any]], tools: list[dict[str, Any]]) -> View:
    events = _events(items)
    users = [text for kind, text in events if kind == "user"]
    step = 0
    previous = None
    for kind, _ in events:
        if kind == "user":
            step = 0
        elif kind == "assistant" and previous != "assistant":
            step += 1
        previous = kind
    names = []
    for tool in tools or []:
        function = tool.get("function", tool)
        names.append(str(function.get("name")))
    return View(
        first_user=users[0] if users else "",
        turn=len(users) - 1,
        step=step,
        tools=names,
        native_tools=bool(tools),
        system="\n".join(text for kind, text in events if kind == "system"),
        last_user=users[-1] if users else "",
    )


# ---------------------------------------------------------------- replies


@dataclass
class Reply:
    text: str | None = None
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, raw arguments)


Call = tuple[str, dict[str, Any]]  # (name as BFCL writes it, arguments)


def _py(value: Any) -> str:
    return repr(value)


def _call_text(name: str, arguments: dict[str, Any], extra: str = "") -> str:
    parts = [f"{key}={_py(value)}" for key, value in arguments.items()]
    if extra:
        parts.insert(0, extra)
    return f"{name}({', '.join(parts)})"


def _perturb(arguments: dict[str, Any]) -> dict[str, Any]:
    changed = dict(arguments)
    for key, value in changed.items():
        if isinstance(value, bool):
            changed[key] = not value
            return changed
        if isinstance(value, (int, float)):
            changed[key] = value + 1
            return changed
        if isinstance(value, str):
            changed[key] = value + "_x"
            return changed
    changed["unexpected"] = 1
    return changed


def _first_number(arguments: dict[str, Any]) -> str | None:
    for key, value in arguments.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return key
    return None


def _first_list(arguments: dict[str, Any]) -> str | None:
    for key, value in arguments.items():
        if isinstance(value, list) and all(not isinstance(v, (list, dict)) for v in value):
            return key
    return None


FC_MISTAKES = [
    "right",
    "right",
    "empty_arguments",
    "malformed_json",
    "json_array",
    "nan",
    "wrong_value",
    "missing_call",
    "dotted_name",
    "extra_unknown_call",
    "text_only",
    "text_repeats_calls",
    "one_call_per_step",
    "repeat_step",
    "whitespace_json",
    "string_number",
    "duplicate_call",
    "reversed_calls",
    "wrong_case_name",
    "text_and_calls",
]
PROMPT_MISTAKES = [
    "right",
    "right",
    "fenced",
    "quoted",
    "bare_name",
    "arithmetic",
    "unary_plus",
    "positional",
    "nonliteral_positional",
    "nested_call",
    "kwargs_unpack",
    "ellipsis",
    "tuple",
    "set",
    "lambda",
    "empty_dict",
    "prose",
    "text_only",
    "wrong_value",
    "one_call_per_step",
    "no_brackets",
    "not_bool",
    "invert",
    "subscript",
    "attribute",
    "nested_positional_call",
    "string_concat",
    "duplicate_keyword",
    "multiline",
    "comment",
    "fstring",
    "nested_dict",
    "none_value",
    "bytes",
    "think_tags",
]


def fc_reply(calls: list[Call], mistake: str) -> Reply:
    def encoded(items: list[Call]) -> list[tuple[str, str]]:
        return [(name.replace(".", "_"), json.dumps(args)) for name, args in items]

    if not calls or mistake == "text_only":
        return Reply(text="I cannot do that with the functions I have.")
    if mistake == "empty_arguments":
        return Reply(calls=[(calls[0][0].replace(".", "_"), "")] + encoded(calls[1:]))
    if mistake == "malformed_json":
        return Reply(calls=encoded(calls[:-1]) + [(calls[-1][0].replace(".", "_"), '{"oops": ')])
    if mistake == "json_array":
        return Reply(calls=[(calls[0][0].replace(".", "_"), "[1, 2]")])
    if mistake == "nan":
        name, args = calls[0]
        key = _first_number(args) or "value"
        raw = json.dumps({**args, key: 0.123456789}).replace("0.123456789", "NaN")
        return Reply(calls=[(name.replace(".", "_"), raw)] + encoded(calls[1:]))
    if mistake == "wrong_value":
        return Reply(calls=encoded([(calls[0][0], _perturb(calls[0][1])), *calls[1:]]))
    if mistake == "missing_call":
        return Reply(calls=encoded(calls[:-1])) if len(calls) > 1 else Reply(text="Done.")
    if mistake == "dotted_name":
        return Reply(calls=[(name, json.dumps(args)) for name, args in calls])
    if mistake == "extra_unknown_call":
        return Reply(calls=encoded(calls) + [("no_such_tool", json.dumps({"x": 1}))])
    if mistake == "text_repeats_calls":
        text = "[" + ", ".join(_call_text(name, args) for name, args in calls) + "]"
        return Reply(text=text, calls=encoded(calls))
    if mistake == "whitespace_json":
        spaced = [(n.replace(".", "_"), "\n " + json.dumps(a, indent=2) + " ") for n, a in calls]
        return Reply(calls=spaced)
    if mistake == "string_number":
        name, args = calls[0]
        key = _first_number(args)
        if key is not None:
            args = {**args, key: str(args[key])}
        return Reply(calls=encoded([(name, args), *calls[1:]]))
    if mistake == "duplicate_call":
        return Reply(calls=encoded([*calls, calls[0]]))
    if mistake == "reversed_calls":
        return Reply(calls=encoded(list(reversed(calls))))
    if mistake == "wrong_case_name":
        name, args = calls[0]
        return Reply(calls=encoded([(name[:1].upper() + name[1:], args), *calls[1:]]))
    if mistake == "text_and_calls":
        return Reply(text="Let me call the tools for this.", calls=encoded(calls))
    return Reply(calls=encoded(calls))


def prompt_reply(calls: list[Call], mistake: str) -> Reply:
    if not calls or mistake == "text_only":
        return Reply(text="I cannot do that with the functions I have.")
    name, args = calls[0]
    rest = [_call_text(n, a) for n, a in calls[1:]]

    def listed(first: str) -> str:
        return "[" + ", ".join([first, *rest]) + "]"

    number = _first_number(args)
    sequence = _first_list(args)
    if mistake == "fenced":
        return Reply(text="```python\n" + listed(_call_text(name, args)) + "\n```")
    if mistake == "quoted":
        return Reply(text="'" + listed(_call_text(name, args)) + "'")
    if mistake == "bare_name":
        return Reply(text=listed(_with(name, args, "mode=fast")))
    if mistake == "arithmetic" and number is not None:
        value = args[number]
        body = {k: v for k, v in args.items() if k != number}
        return Reply(text=listed(_call_text(name, body, f"{number}={value!r} - 1 + 1")))
    if mistake == "unary_plus" and number is not None:
        body = {k: v for k, v in args.items() if k != number}
        return Reply(text=listed(_call_text(name, body, f"{number}=+{abs(args[number])!r}")))
    if mistake == "positional":
        return Reply(text=listed(_call_text(name, args, "'positional'")))
    if mistake == "nonliteral_positional":
        return Reply(text=listed(_call_text(name, args, "helper(1)")))
    if mistake == "nested_call":
        return Reply(text=listed(_with(name, args, "source=lookup(key='a')")))
    if mistake == "kwargs_unpack":
        return Reply(text=listed(f"{name}(**{args!r})"))
    if mistake == "ellipsis":
        return Reply(text=listed(_with(name, args, "extra=...")))
    if mistake == "tuple" and sequence is not None:
        return Reply(text=listed(_call_text(name, {**args, sequence: tuple(args[sequence])})))
    if mistake == "set":
        return Reply(text=listed(_with(name, args, "tags={1, 2}")))
    if mistake == "lambda":
        return Reply(text=listed(_with(name, args, "key=lambda x: x")))
    if mistake == "empty_dict":
        return Reply(text=listed(_with(name, args, "options={}")))
    if mistake == "prose":
        return Reply(text="Sure, here are the calls: " + listed(_call_text(name, args)))
    if mistake == "wrong_value":
        return Reply(text=listed(_call_text(name, _perturb(args))))
    flag = next((k for k, v in args.items() if isinstance(v, bool)), None)
    text_key = next((k for k, v in args.items() if isinstance(v, str) and len(v) > 1), None)
    if mistake == "no_brackets":
        return Reply(text=", ".join([_call_text(name, args), *rest]))
    if mistake == "not_bool" and flag is not None:
        body = {k: v for k, v in args.items() if k != flag}
        return Reply(text=listed(_call_text(name, body, f"{flag}=not {not args[flag]!r}")))
    if mistake == "invert" and number is not None:
        body = {k: v for k, v in args.items() if k != number}
        return Reply(text=listed(_call_text(name, body, f"{number}=~{args[number]!r}")))
    if mistake == "subscript":
        return Reply(text=listed(_with(name, args, "item=data[0]")))
    if mistake == "attribute":
        return Reply(text=listed(_with(name, args, "unit=math.pi")))
    if mistake == "nested_positional_call":
        return Reply(text=listed(_with(name, args, "source=lookup('a')")))
    if mistake == "string_concat" and text_key is not None:
        value = args[text_key]
        body = {k: v for k, v in args.items() if k != text_key}
        half = len(value) // 2
        joined = f"{text_key}={value[:half]!r} + {value[half:]!r}"
        return Reply(text=listed(_call_text(name, body, joined)))
    if mistake == "duplicate_keyword" and args:
        key = next(iter(args))
        return Reply(text=listed(_with(name, args, f"{key}={args[key]!r}")))
    if mistake == "multiline":
        return Reply(text="[\n    " + ",\n    ".join([_call_text(name, args), *rest]) + "\n]")
    if mistake == "comment":
        return Reply(text=listed(_call_text(name, args)) + "  # all the calls")
    if mistake == "fstring" and text_key is not None:
        body = {k: v for k, v in args.items() if k != text_key}
        return Reply(text=listed(_call_text(name, body, f"{text_key}=f{args[text_key]!r}")))
    if mistake == "nested_dict":
        return Reply(text=listed(_with(name, args, "config={'a': {'b': 1}, 'c': {}}")))
    if mistake == "none_value":
        return Reply(text=listed(_with(name, args, "option=None")))
    if mistake == "bytes":
        return Reply(text=listed(_with(name, args, "data=b'raw'")))
    if mistake == "think_tags":
        return Reply(text="<think>Plan the calls.</think>\n" + listed(_call_text(name, args)))
    return Reply(text=listed(_call_text(name, args)))


def _with(name: str, args: dict[str, Any], extra: str) -> str:
    """The call with one more keyword argument written as raw text."""
    parts = [f"{key}={_py(value)}" for key, value in args.items()] + [extra]
    return f"{name}({', '.join(parts)})"


# ---------------------------------------------------------------- the model


def first_user_message(entry: Entry) -> str:
    """The entry's first user message: how the model finds the entry of a request."""
    for message in entry.turns[0] if entry.turns else []:
        if message.get("role") == "user":
            return str(message.get("content"))
    return ""


def memory_backend(view: View) -> str:
    """kv, vector or rec_sum, from the memory functions offered (natively or in the
    system prompt); "kv" also when none is offered."""
    offered = " ".join(view.tools) if view.native_tools else view.system
    if "memory_append" in offered:
        return "rec_sum"
    if "core_memory_update" in offered:  # the vector store's edit by vector id
        return "vector"
    return "kv"


class ScriptedModel:
    """Replies for every entry of the given categories, found by first user message."""

    def __init__(self, categories: list[str]):
        self.entries: dict[str, list[Entry]] = {}
        self.prerequisites: set[str] = set()
        for category in categories:
            for entry in load_entries(category):
                self._add(entry)
                for prerequisite in getattr(entry, "prerequisites", None) or []:
                    key = first_user_message(prerequisite)
                    self.prerequisites.add(key)

    def _add(self, entry: Entry) -> None:
        self.entries.setdefault(first_user_message(entry), []).append(entry)

    def _entry(self, view: View) -> Entry | None:
        candidates = self.entries.get(view.first_user) or []
        for entry in candidates:
            names = {doc["name"] for doc in entry.functions}
            offered = set(view.tools) if view.native_tools else None
            if offered is None or {n.replace(".", "_") for n in names} <= offered | names:
                return entry
        return candidates[0] if candidates else None

    def reply(self, view: View) -> Reply:
        if view.first_user in self.prerequisites:
            return self._memory_note(view)
        entry = self._entry(view)
        if entry is None:
            return Reply(text="I do not know.")
        kind = kind_of(entry.category)
        if kind in (Kind.AST, Kind.IRRELEVANCE, Kind.RELEVANCE):
            return self._single_turn(entry, view)
        if kind is Kind.MULTI_TURN:
            return self._multi_turn(entry, view)
        return self._memory_question(entry, view)

    # -- single turn

    def _single_turn(self, entry: Entry, view: View) -> Reply:
        kind = kind_of(entry.category)
        if kind is Kind.AST:
            calls = [(c.name, dict(c.arguments or {})) for c in ast_gold_calls(entry)]
            if not view.native_tools:
                # Prompt mode writes the names as documented ("a.b", not "a_b").
                documented = [doc["name"] for doc in entry.checker_functions]
                by_fc = {name.replace(".", "_"): name for name in documented}
                calls = [(by_fc.get(name, name), args) for name, args in calls]
        elif not entry.functions:  # a live_irrelevance entry that offers none: nothing to call
            calls = []
        else:
            doc = entry.functions[0]
            required = doc.get("parameters", {}).get("required", [])
            calls = [(doc["name"], {key: "x" for key in required})]
            if view.seed("relevance") % 2 == 0:
                calls = []
        return self._render(calls, view)

    def _render(self, calls: list[Call], view: View) -> Reply:
        if view.native_tools:
            mistake = FC_MISTAKES[view.seed() % len(FC_MISTAKES)]
            if mistake in ("one_call_per_step", "repeat_step"):
                mistake = "right"
            return fc_reply(calls, mistake)
        mistake = PROMPT_MISTAKES[view.seed() % len(PROMPT_MISTAKES)]
        if mistake == "one_call_per_step":
            mistake = "right"
        return prompt_reply(calls, mistake)

    # -- multi-turn

    def _multi_turn(self, entry: Entry, view: View) -> Reply:
        if view.turn >= len(entry.ground_truth):
            return Reply(text="Done.")
        gold = [(c.name, dict(c.arguments or {})) for c in multi_turn_gold_calls(entry, view.turn)]
        plan = view.seed("plan") % 12
        if plan == 0 and view.turn == 0:
            return self._step_cap(view)  # calls on every step: BFCL's 20-step cap
        # One turn in three gets a mistake (so that some entries pass all turns).
        mistake_pool = FC_MISTAKES if view.native_tools else PROMPT_MISTAKES
        first_step = View(view.first_user, view.turn, 0, view.tools, view.native_tools)
        seed = first_step.seed()
        mistake = mistake_pool[(seed // 3) % len(mistake_pool)] if seed % 3 == 0 else "right"
        if mistake == "one_call_per_step" and gold:
            if view.step < len(gold):
                return self._step([gold[view.step]], "right", view)
            return Reply(text="All done.")
        if mistake == "repeat_step" and gold and view.step == 1:
            return self._step(gold[-1:], "right", view)
        if view.step == 0:
            return self._step(gold, mistake, view)
        return Reply(text="All done.")

    def _step(self, calls: list[Call], mistake: str, view: View) -> Reply:
        if view.native_tools:
            return fc_reply(calls, mistake)
        return prompt_reply(calls, mistake)

    def _step_cap(self, view: View) -> Reply:
        # pwd() where it exists; elsewhere an error result, still a calling step.
        if view.native_tools:
            return Reply(calls=[("pwd", "{}")])
        return Reply(text="[pwd()]")

    # -- memory

    def _memory_note(self, view: View) -> Reply:
        backend = memory_backend(view)
        first_turn = View(view.first_user, 0, 0, [], view.native_tools)
        if view.turn == 0 and first_turn.seed("loop") % 5 == 0:
            # Calls on every step: BFCL's step cap ends this conversation only.
            name = {"rec_sum": "memory_retrieve", "vector": "core_memory_retrieve_all"}.get(
                backend, "core_memory_list_keys"
            )
            return Reply(calls=[(name, "{}")]) if view.native_tools else Reply(text=f"[{name}()]")
        if view.step > 0:
            return Reply(text="Noted.")
        note = view.last_user[:80]
        choice = view.seed("note") % 10
        if choice == 0:
            note = (note + " ") * 12  # past the core memory's 300-character entry limit
        calls: list[Call]
        if backend == "rec_sum":
            calls = [("memory_append", {"text": note})]
            if choice == 1:
                calls = [("memory_replace", {"old_text": "not there", "new_text": note})]
        elif backend == "vector":
            store = "core_memory_add" if view.seed("store") % 2 else "archival_memory_add"
            calls = [(store, {"text": note})]
            if choice == 1:
                calls.append(("core_memory_update", {"vec_id": 99, "new_text": note}))
            if choice == 2:
                calls.append(("core_memory_remove", {"vec_id": 0}))
        else:
            store = "core_memory_add" if view.seed("store") % 2 else "archival_memory_add"
            calls = [(store, {"key": f"note_{view.turn}", "value": note})]
            if choice == 1:
                calls.append(("core_memory_replace", {"key": "missing_key", "value": note}))
            if choice == 2:
                calls.append(("core_memory_remove", {"key": f"note_{view.turn - 1}"}))
        if view.native_tools:
            pool = ["right", "right", "empty_arguments", "malformed_json", "text_only"]
            pool += ["wrong_case_name", "duplicate_call", "text_and_calls", "string_number"]
            return fc_reply(calls, pool[view.seed() % len(pool)])
        pool = ["right", "right", "empty_dict", "prose", "text_only", "no_brackets"]
        pool += ["fenced", "duplicate_keyword", "nested_dict", "multiline", "bare_name"]
        return prompt_reply(calls, pool[view.seed() % len(pool)])

    def _memory_question(self, entry: Entry, view: View) -> Reply:
        backend = memory_backend(view)
        lookups: dict[str, list[Call]] = {
            "rec_sum": [("memory_retrieve", {})],
            "vector": [("core_memory_retrieve", {"query": view.last_user[:60], "top_k": 3})],
            "kv": [("core_memory_retrieve_all", {})],
        }
        lookup = lookups[backend]
        if backend == "kv" and view.seed("search") % 2:
            lookup = [("archival_memory_key_search", {"query": view.last_user[:40], "k": 2})]
        choice = view.seed("answer") % 8
        answers = entry.ground_truth[0] if entry.ground_truth else [""]
        answer = str(answers[0] if isinstance(answers, list) and answers else answers)
        if view.step == 0 and choice in (0, 1):
            return self._step(lookup, "right", view)
        if view.step == 0 and choice == 4:
            # The answer beside a call: the turn goes on, so this text is not the last.
            if view.native_tools:
                return Reply(text=answer_text(entry), calls=fc_reply(lookup, "right").calls)
            call_list = prompt_reply(lookup, "right").text or ""
            return Reply(text=answer_text(entry) + "\n" + call_list)
        if view.step == 0 and choice == 5 and not view.native_tools:
            return prompt_reply(lookup, "think_tags")
        if choice == 3 or (choice == 2 and not self._remembers(view)):
            return Reply(text=str({"answer": "I do not know", "context": "I do not know"}))
        if choice == 6:
            return Reply(text=f"From what you told me before, it is {answer.upper()}!")
        if choice == 7:
            return Reply(text=f"It is {answer[: max(1, len(answer) // 2)]}.")
        return Reply(text=answer_text(entry))

    @staticmethod
    def _remembers(view: View) -> bool:
        """Whether the memory shown in the system prompt (what the prerequisite
        conversations stored) "holds the answer": a function of that memory only,
        so that any difference in the memory between the pipelines shows."""
        notes = sorted(set(re.findall(r"note_\d+", view.system)))
        digest = hashlib.sha256(("|".join(notes) + str(len(view.system))).encode()).digest()
        return digest[0] % 2 == 0


# ---------------------------------------------------------------- the server


def chat_completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(reply.calls)
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def responses_body(reply: Reply, model: str, serial: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{serial}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for index, (name, arguments) in enumerate(reply.calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{serial}_{index}",
                "call_id": f"call_{serial}_{index}",
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }
        )
    return {
        "id": f"resp_{serial}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


class ScriptedServer:
    """The scripted model on 127.0.0.1 (chat completions and Responses)."""

    def __init__(self, model: ScriptedModel):
        self.model = model
        self.serial = 0
        self.lock = threading.Lock()
        # Every request body, by API ("responses" or "chat"), for the request-level
        # comparison of the parity script.
        self.requests: list[tuple[str, dict[str, Any]]] = []
        handler = self._handler_class()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, path: str, body: dict[str, Any], record: bool = True) -> dict[str, Any]:
        with self.lock:
            self.serial += 1
            serial = self.serial
            if record:
                api = "responses" if path.endswith("/responses") else "chat"
                self.requests.append((api, body))
        if path.endswith("/responses"):
            items = body.get("input") or []
            reply = self.model.reply(view_of(items, body.get("tools") or []))
            return responses_body(reply, str(body.get("model")), serial)
        reply = self.model.reply(view_of(body.get("messages") or [], body.get("tools") or []))
        return chat_completion(reply, str(body.get("model")))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                self._send(200, {"object": "list", "data": [{"id": "scripted"}]})

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?", 1)[0].rstrip("/")
                if not (path.endswith("/responses") or path.endswith("/chat/completions")):
                    self._send(404, {"error": {"message": f"no route {path}"}})
                    return
                try:
                    # The harness's preflight requests are no part of a run's conversations.
                    record = not self.headers.get("X-Harness-Preflight")
                    self._send(200, server.answer(path, body, record))
                except Exception as exc:  # a bug in the script must show, not hang
                    self._send(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
