"""Every prompt of the test-time strategies, in one place, under one version.

The rehearser (imagines tool results), the critic (reviews an imagined attempt),
the distiller (turns critiques into a short memory) and the rehearser playing the
user all read their instructions from here. Change any text below and bump
``PROMPT_VERSION``: it is recorded in every run manifest, so runs made with
different prompts are never mixed or compared by accident.

Facts that carry over from the rehearsal training format: the three validation
error codes and the ``<execution_result>`` wrapper around one JSON value.
"""

from __future__ import annotations

import json

from harness.types import Message, ToolCall, ToolSchema

PROMPT_VERSION = "tts-prompts-v1"

# The simulator's validation error codes (the rehearsal format's facts).
INVALID_TOOL_CALL_FORMAT = "INVALID_TOOL_CALL_FORMAT"
TOOL_NOT_AVAILABLE = "TOOL_NOT_AVAILABLE"
INVALID_PARAMETERS = "INVALID_PARAMETERS"
ERROR_CODES = (INVALID_TOOL_CALL_FORMAT, TOOL_NOT_AVAILABLE, INVALID_PARAMETERS)

RESULT_OPEN = "<execution_result>"
RESULT_CLOSE = "</execution_result>"
MEMORY_OPEN = "<memory>"
MEMORY_CLOSE = "</memory>"
USER_STOP = "###STOP###"

# Per-message cap when rendering a conversation for the rehearser or the critic:
# long system prompts (domain policies) are kept whole up to this size.
MESSAGE_CHARS = 12_000

SIMULATOR_SYSTEM = f"""You are the execution engine behind a set of software tools. An \
assistant is working on a user's request and has just called one of the tools. Work out \
what the real system would return for exactly this call, given the tool definitions, any \
real results shown as examples, and everything that happened in the conversation so far \
(earlier results are the current state of the system: stay consistent with them).

Check the call the way the system would before running it:
- the call cannot be read as a tool call -> error code {INVALID_TOOL_CALL_FORMAT}
- the tool is not among the available tools -> error code {TOOL_NOT_AVAILABLE}
- an argument is missing, unexpected, of the wrong type or outside its allowed values \
-> error code {INVALID_PARAMETERS}
For these, answer with only this JSON object:
{{"error": {{"code": "<one of the codes above>", "message": "<what the system says>"}}}}

Otherwise answer with the result the tool returns, as one non-empty JSON value that \
follows the tool's description, between {RESULT_OPEN} and {RESULT_CLOSE}. If the system \
itself would refuse or fail (unknown id, insufficient funds, wrong state), the result is \
the error that system returns, inside the same tags.

You are a silent executor: never explain, never give hints or advice, never add text \
outside the answer."""

CRITIC_SYSTEM = """You review a practice attempt by an assistant that uses tools. The \
attempt was a private rehearsal: the tool results it received were imagined by a \
simulator, so they may be wrong in details, but they show how the assistant behaved. \
Nothing in the rehearsal happened for real.

Write a short, concrete critique that will help the assistant do the real task right \
on its first try:
1. What the request actually needs (the goal and its constraints).
2. Which tool calls would likely fail or do harm for real, and why: wrong id or value \
formats, missing or invented arguments, wrong order of steps, policy violations, \
irreversible actions taken before checking or confirming.
3. What went well and should be kept.
4. A step-by-step plan for the real attempt.
Be specific (tool names, argument formats). Do not write the final answer to the user."""

DISTIL_SYSTEM = f"""You condense critiques of practice attempts into one short memory \
that an assistant will read right before doing the task for real. Keep only what changes \
behaviour: concrete lessons, pitfalls to avoid (with tool names and argument formats) \
and a brief plan. Where critiques disagree, keep what is best supported. Write at most \
{{limit}} characters, between {MEMORY_OPEN} and {MEMORY_CLOSE}, and nothing else."""

USER_ROLE_SYSTEM = f"""You play the user in a conversation with a customer-service \
assistant that can use tools. Stay in character as that user: write only the user's \
next message, short and natural, in the conversation's language. Pursue the request \
the user has made so far; if no request has been made yet, make a plausible one that \
fits the assistant's instructions. Never act as the assistant. When the request is \
done or cannot be done, write {USER_STOP} alone."""

MEMORY_HEADER = (
    "Notes from your private rehearsal of this task. The rehearsal ran against an "
    "imagined environment, so its results were predictions, not facts; use these notes "
    "as lessons, and trust the real tool results you get now."
)

SEQUENTIAL_HEADER = (
    "Critiques of your earlier private rehearsals of this task (imagined environment; "
    "the results there were predictions). Improve on them in this attempt."
)


def clip(text: str, max_chars: int) -> str:
    """Text cut in the middle to at most about ``max_chars`` characters."""
    if len(text) <= max_chars:
        return text
    keep = max(0, max_chars - 60)
    head, tail = text[: keep // 2], text[len(text) - keep // 2 :]
    return f"{head}\n[... {len(text) - 2 * (keep // 2)} characters cut ...]\n{tail}"


def _content_text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return str(content)


def render_call(call: ToolCall) -> str:
    if call.arguments is not None:
        arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    else:
        arguments = call.raw_arguments
    return f"{call.name}({arguments})"


def render_message(message: Message, max_chars: int = MESSAGE_CHARS) -> str:
    """One chat message as a labelled block of text."""
    role = str(message.get("role", "?"))
    lines = []
    text = _content_text(message.get("content")).strip()
    if role == "tool":
        name = message.get("name") or "tool"
        return f"[tool result of {name}]\n{clip(text, max_chars)}"
    if text:
        lines.append(clip(text, max_chars))
    for raw in message.get("tool_calls") or []:
        call = ToolCall.from_openai(raw)
        lines.append(f"-> calls {render_call(call)}")
    return f"[{role}]\n" + ("\n".join(lines) if lines else "(empty)")


def render_conversation(messages: list[Message], max_chars: int) -> str:
    """A conversation as text, hidden (not model-visible) messages left out."""
    blocks = [render_message(m) for m in messages if not m.get("hidden")]
    return clip("\n\n".join(blocks), max_chars) if blocks else "(nothing yet)"


def render_tools(tools: list[ToolSchema]) -> str:
    return json.dumps(tools, ensure_ascii=False, indent=1)


def simulate_prompt(
    tools: list[ToolSchema],
    examples: list[tuple[ToolCall, str]],
    conversation: list[Message],
    latest_reply: str,
    call: ToolCall,
    think_switch: str,
    max_chars: int,
) -> list[Message]:
    """The rehearser's messages for one call, in the documented order: tools,
    real examples, conversation so far, the actor's latest reply, the call."""
    parts = ["## Available tools", render_tools(tools)]
    parts.append("## Real results of earlier calls in this episode")
    if examples:
        parts.extend(f"{render_call(c)}\n=> {clip(result, 4000)}" for c, result in examples)
    else:
        parts.append("(none)")
    parts.append("## Conversation so far")
    parts.append(render_conversation(conversation, max_chars // 2))
    parts.append("## The assistant's latest reply")
    parts.append(clip(latest_reply, 8000) or "(empty)")
    parts.append("## The call to execute")
    parts.append(render_call(call))
    user = clip("\n\n".join(parts), max_chars)
    if think_switch:
        user = f"{user}\n\n{think_switch}"
    return [{"role": "system", "content": SIMULATOR_SYSTEM}, {"role": "user", "content": user}]


def critique_prompt(
    transcript: list[Message], termination: str, guidance: str | None, max_chars: int
) -> list[Message]:
    """The critic's messages for one rehearsal transcript."""
    parts = ["## The rehearsal (initial instructions, then the attempt)"]
    parts.append(render_conversation(transcript, max_chars))
    parts.append(f"## How the rehearsal ended\n{termination}")
    if guidance:
        parts.append(f"## Critiques the assistant had before this attempt\n{guidance}")
    parts.append("Write your critique now.")
    user = clip("\n\n".join(parts), max_chars)
    return [{"role": "system", "content": CRITIC_SYSTEM}, {"role": "user", "content": user}]


def distil_prompt(critiques: list[str], limit: int, max_chars: int) -> list[Message]:
    """The distiller's messages: all critiques of this sample's rehearsals."""
    blocks = [f"## Critique of rehearsal {i}\n{text}" for i, text in enumerate(critiques, 1)]
    user = clip("\n\n".join(blocks) + "\n\nWrite the memory now.", max_chars)
    return [
        {"role": "system", "content": DISTIL_SYSTEM.format(limit=limit)},
        {"role": "user", "content": user},
    ]


def user_role_prompt(conversation: list[Message], max_chars: int) -> list[Message]:
    """Messages for the rehearser playing the user (roles described, not flipped)."""
    user = (
        "## The conversation so far\n"
        + render_conversation(conversation, max_chars)
        + "\n\nWrite the user's next message."
    )
    return [{"role": "system", "content": USER_ROLE_SYSTEM}, {"role": "user", "content": user}]


def memory_block(memory: str) -> str:
    return f"{MEMORY_HEADER}\n\n{memory}"


def sequential_block(critiques: list[str]) -> str:
    blocks = [f"### Rehearsal {i}\n{text}" for i, text in enumerate(critiques, 1)]
    return SEQUENTIAL_HEADER + "\n\n" + "\n\n".join(blocks)
