"""Runs VitaBench's official code on requests from the parity tests.

Executed by the Python of the official environment (vita_official_env.py), never
imported by the project: ``python vita_official_driver.py request.json answer.json``.
The official tools, evaluator, user simulator and agent run unchanged; only their
LLM call (``generate``) is replaced by scripted replies, which is what makes the
comparison deterministic.

Commands:
- ``tools``: run each case's calls in order on a fresh official environment of the
  task; generated ids are mapped to ours (paired by order of appearance in the
  outputs) so later calls can use them and outputs compare as text;
- ``judge``: the sliding-window evaluator with one scripted reply per window; the
  system and user message of every window, the reward and rubric results, or the
  exception it raised;
- ``user``: the user simulator's input at every user turn of a conversation;
- ``agent``: the agent's system prompt.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import sys

GENERATED_ID = re.compile(r"\bO[TIO][0-9a-f]{10}\b")
LANGUAGE = {"zh": "chinese", "en": "english"}


def read_prompts_once() -> None:
    """The benchmark re-reads all its prompt files (pure-Python YAML, ~0.5 s) on
    every judge window, user simulator and environment; the files do not change during a
    run, so each language is read once here. The texts are the same objects the
    benchmark would build."""
    import functools

    import vita.environment.environment as environment
    import vita.evaluator.evaluator_traj as evaluator
    import vita.prompts
    import vita.user.user_simulator as simulator

    cached = functools.cache(vita.prompts.get_prompts)
    for module in (environment, evaluator, simulator):
        module.get_prompts = cached


def load_tasks(path: str) -> dict[str, dict]:
    with open(path, encoding="utf-8") as handle:
        return {str(task["id"]): task for task in json.load(handle)}


def clear_thread_state() -> None:
    """What the benchmark clears before each task (its per-thread store and product
    indexes), plus its address index, which it leaks from task to task; the
    project does not reproduce that leak, so the comparison starts every task clean."""
    from vita.data_model.tasks import Location, ProductBaseModel, StoreBaseModel

    for model in (StoreBaseModel, ProductBaseModel, Location):
        model.clear_thread_data()


# ------------------------------------------------------------------ tools


def substitute(value, mapping: dict[str, str]):
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [substitute(item, mapping) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, mapping) for key, item in value.items()}
    return value


def ids_in(text: str) -> list[str]:
    return list(dict.fromkeys(GENERATED_ID.findall(text or "")))


def replace_ids(text: str, mapping: dict[str, str]) -> str:
    return GENERATED_ID.sub(lambda found: mapping.get(found.group(0), found.group(0)), text)


def run_tools(request: dict) -> dict:
    from vita.data_model.message import ToolCall

    tasks = load_tasks(request["task_file"])
    module = importlib.import_module(f"vita.domains.{request['scenario']}.environment")
    results = []
    for case in request["cases"]:
        clear_thread_state()
        task = tasks[case["task_id"]]
        environment = module.get_environment(
            copy.deepcopy(task["environment"]), LANGUAGE[request["language"]]
        )
        ours_to_official: dict[str, str] = {}
        official_to_ours: dict[str, str] = {}
        outputs = []
        for index, (call, ours) in enumerate(zip(case["calls"], case["ours"], strict=True)):
            arguments = substitute(call["arguments"], ours_to_official)
            message = environment.get_response(
                ToolCall(id=f"call_{index}", name=call["name"], arguments=arguments)
            )
            for mine, theirs in zip(ids_in(ours), ids_in(message.content), strict=False):
                if mine not in ours_to_official and theirs not in official_to_ours:
                    ours_to_official[mine] = theirs
                    official_to_ours[theirs] = mine
            content = replace_ids(message.content or "", official_to_ours)
            outputs.append({"content": content, "error": bool(message.error)})
        results.append({"task_id": case["task_id"], "outputs": outputs})
    return {"results": results}


# ------------------------------------------------------------------ messages


def official_messages(messages: list[dict]) -> list:
    """Our stored conversation as the benchmark's message objects."""
    from vita.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage

    converted = []
    for message in messages:
        role = message["role"]
        if role == "assistant":
            calls = [
                ToolCall(
                    id=call.get("id") or "",
                    name=call["function"]["name"],
                    arguments=json.loads(call["function"]["arguments"] or "{}"),
                )
                for call in message.get("tool_calls") or []
            ]
            converted.append(
                AssistantMessage(
                    role="assistant", content=message.get("content"), tool_calls=calls or None
                )
            )
        elif role == "user":
            converted.append(UserMessage(role="user", content=message.get("content")))
        elif role == "tool":
            converted.append(
                ToolMessage(
                    id=message.get("tool_call_id") or "",
                    name=message.get("name") or "",
                    role="tool",
                    content=message.get("content"),
                    requestor="assistant",
                )
            )
    return converted


def as_dict(message) -> dict:
    return {"role": message.role, "content": message.content}


class ScriptedLLM:
    """Stands in for the benchmark's ``generate``: records what it is sent and
    answers with the next scripted reply."""

    def __init__(self, replies: list[str]):
        self.replies = list(replies)
        self.calls: list[list[dict]] = []

    def __call__(self, model, messages, tools=None, **kwargs):
        from vita.data_model.message import AssistantMessage

        self.calls.append([as_dict(message) for message in messages])
        content = self.replies.pop(0) if self.replies else ""
        return AssistantMessage(role="assistant", content=content)


# ------------------------------------------------------------------ judge


def run_judge(request: dict) -> dict:
    import vita.evaluator.evaluator_traj as evaluator
    from vita.data_model.tasks import Task

    tasks = load_tasks(request["task_file"])
    results = []
    for case in request["cases"]:
        record = case.get("record") or tasks[case["task_id"]]
        llm = ScriptedLLM(case["replies"])
        evaluator.generate = llm  # the judge model is the scripted replies
        result: dict = {"task_id": case["task_id"]}
        try:
            reward = evaluator.TrajectoryEvaluator.calculate_reward(
                task=Task.model_validate(record),
                full_trajectory=official_messages(case["messages"]),
                final_state={},
                llm_evaluator="scripted",
                llm_args_evaluator={},
                language=LANGUAGE[request["language"]],
            )
            result["reward"] = reward.reward
            result["rubrics"] = [
                {"met": check.met, "justification": check.justification}
                for check in reward.nl_rubrics or []
            ]
            result["rubric_score"] = next(iter((reward.reward_breakdown or {}).values()), None)
            result["info"] = reward.info
        except Exception as exc:  # the comparison needs the benchmark's failures too
            result["error"] = type(exc).__name__
        result["windows"] = [
            {"system": call[0]["content"], "user": call[1]["content"]} for call in llm.calls
        ]
        results.append(result)
    return {"results": results}


# ------------------------------------------------------------------ user, agent


def run_user(request: dict) -> dict:
    import vita.user.user_simulator as simulator
    from vita.data_model.message import AssistantMessage
    from vita.orchestrator.orchestrator import get_default_first_agent_message

    tasks = load_tasks(request["task_file"])
    language = LANGUAGE[request["language"]]
    results = []
    for case in request["cases"]:
        task = tasks[case["task_id"]]
        messages = case["messages"]  # greeting first, as stored
        user_turns = [m["content"] for m in messages if m["role"] == "user"]
        llm = ScriptedLLM(user_turns)
        simulator.generate = llm
        user = simulator.UserSimulator(
            instructions=str(task["instructions"]),
            persona=str(task["user_scenario"]["user_profile"]),
            llm="scripted",
            llm_args={},
            language=language,
        )
        state = user.get_init_state()
        for index, message in enumerate(messages):
            if message["role"] != "assistant" or message.get("tool_calls"):
                continue
            if index + 1 >= len(messages) or messages[index + 1]["role"] != "user":
                continue  # the user answers only a text message that it is shown
            if index == 0:
                incoming = get_default_first_agent_message(language)
            else:
                incoming = AssistantMessage(role="assistant", content=message["content"])
            _, state = user.generate_next_message(incoming, state)
        results.append({"task_id": case["task_id"], "contexts": llm.calls})
    return {"results": results}


def run_agent(request: dict) -> dict:
    from vita.agent.llm_agent import LLMAgent
    from vita.environment.environment import get_agent_policy

    tasks = load_tasks(request["task_file"])
    language = LANGUAGE[request["language"]]
    prompts = {}
    for task_id in request["task_ids"]:
        agent = LLMAgent(
            tools=[],
            domain_policy=get_agent_policy(language),
            llm="scripted",
            llm_args={},
            time=tasks[task_id]["environment"]["time"],
            language=language,
        )
        prompts[task_id] = agent.system_prompt
    return {"prompts": prompts}


COMMANDS = {"tools": run_tools, "judge": run_judge, "user": run_user, "agent": run_agent}


def main() -> None:
    request_path, answer_path = sys.argv[1], sys.argv[2]
    with open(request_path, encoding="utf-8") as handle:
        request = json.load(handle)
    from loguru import logger

    logger.remove()  # the benchmark logs every tool call at debug level
    read_prompts_once()
    answer = COMMANDS[request["command"]](request)
    with open(answer_path, "w", encoding="utf-8") as handle:
        json.dump(answer, handle, ensure_ascii=False)


if __name__ == "__main__":
    main()
