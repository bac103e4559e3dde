"""The texts VitaBench's three language models read, in Chinese and English.

Fixed interface strings (the greeting, the weekday names) are VitaBench's own.
The three system prompts (the agent's rules, the user simulator's guidelines, the
judge's instructions) come from one of two sources, recorded as
``prompt_source``:

- ``official``: the benchmark's own templates, read at run time from a VitaBench
  checkout named as the data folder or from the installed ``vita`` package
  (official.py); the texts equal what its code sends;
- ``harness``: this project's wording of the same behaviour, used when neither
  is there (or when asked for with the ``prompts`` option). Not the benchmark's
  prompts: every table marks such a number (harness.results.nonstandard).

Both sources use the benchmark's placeholder names, so one formatting step
serves both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness.errors import ConfigError

from .official import CLONE_HINT, official_templates, prompt_origin

PROMPT_SOURCES = ("auto", "official", "harness")

# The assistant's opening line. It starts the stored conversation and is the user
# simulator's first input, but the agent model never sees it.
GREETING = {
    "zh": "你好，请问需要什么服务？",
    "en": "Hello, how can I help you?",
}

WEEKDAYS = {
    "zh": ["星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日"],
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
}


def time_with_weekday(time: str, language: str) -> str:
    """``"2025-06-21 11:20:00"`` -> ``"2025-06-21 11:20:00 Saturday"`` (or 星期六)."""
    try:
        moment = datetime.strptime(time, "%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(time)
    return f"{time} {WEEKDAYS[language][moment.weekday()]}"


AGENT_SYSTEM = {
    "en": """# Environment
The current time is {time}.

# Using tools
- Before calling a tool, make sure you know every argument it requires. Take the values from the conversation, or ask the user for what is missing.
- If the user cannot give you a piece of information, first try to find it with the tools.
- Respect the preconditions and postconditions written in each tool's description.

# Talking with the user
- Base every answer on information that is already in the conversation or that a tool returned. Never make up facts.
- Stay on what the user asked for and do not push the user toward other needs.
- When the request is fully handled, ask the user whether they need anything else. If they say no, reply with ###STOP###.""",
    "zh": """# 环境
当前时间：{time}。

# 工具使用
- 调用工具之前，先确认已经掌握它需要的全部参数。参数从对话中获取，缺少的向用户询问。
- 用户提供不了的信息，先尝试用工具查到。
- 遵守每个工具描述中写明的前置条件和后置条件。

# 与用户交流
- 只依据对话中已有的信息或工具返回的结果作答，绝不编造事实。
- 围绕用户提出的需求办事，不要引导用户产生新的需求。
- 需求全部办完后，询问用户是否还需要其他帮助；如果用户表示不需要，回复 ###STOP###。""",
}


USER_SYSTEM = {
    "en": """You are a customer talking with a customer-service assistant of a life-services platform (food delivery, in-store services, travel). Play the person described in the persona, and through natural conversation get across everything the instructions describe.

<persona>
{persona}
</persona>

<instructions>
{instructions}
</instructions>

How to talk:
- Write one line per message.
- Describe your situation first, then say what you need.
- When something has to be chosen, tell the assistant your conditions and preferences and ask which option it suggests.
- Let the persona's character show in your tone and choice of words.

What to reveal and when:
- Break the instructions into separate facts and bring them up gradually over several messages; never say everything in your first message.
- Keep every fact as it is, but say it in your own voice.
- Every detail must come up at some point, background details included.

How to answer:
- Answer from the persona or the instructions. If neither says, reply that you don't know or don't remember.
- Give requested information right away.
- Never make anything up, such as order numbers. If asked who you are, give your user id.
- Do not assume, widen, swap or summarise the requirements you were given.
- When the assistant offers to place an order for you, accept; do not say you will do it yourself.
- Keep relying on the assistant until the job is done.
- Hold on to your requirements if the assistant tries to talk you out of them.
- If the assistant asks the same question you already answered more than three times, show impatience and refuse to repeat yourself.

Do not end the conversation:
- before you have stated every need and constraint;
- before the assistant has done every task in the instructions, with nothing left out;
- while the assistant's results are wrong or incomplete.

You may end the conversation when everything has been done correctly, or when you have stated all your needs and the assistant says it cannot fulfil them for technical reasons.""",
    "zh": """你是一名顾客，正在和生活服务平台（外卖、到店、出行）的客服助手对话。请扮演人设中描述的人，通过自然的对话把任务说明里的全部内容传达给助手。

<persona>
{persona}
</persona>

<instructions>
{instructions}
</instructions>

说话方式：
- 每条消息只写一行。
- 先描述自己的情况，再说出需求。
- 需要做选择时，把你的条件和偏好告诉助手，并问它推荐哪一个。
- 语气和用词要体现人设的性格。

信息透露：
- 把任务说明拆成一条条事实，分几轮逐步说出来，第一轮绝不能全部说完。
- 保持事实原样，但用你自己的口吻表达。
- 每个细节最终都要提到，包括背景细节。

回答方式：
- 根据人设或任务说明回答；两者都没有提到的，就说不知道或不记得。
- 对方索要信息时及时提供。
- 绝不编造任何信息，例如订单号。被问到身份时，告诉对方你的用户ID。
- 不要臆测、放宽、替换或概括给定的要求。
- 助手提出帮你下单时要接受，不要说自己来下单。
- 在任务完成之前一直依靠助手。
- 助手试图劝你放弃要求时，坚持自己的要求。
- 如果助手把你已经回答过的问题重复问了三次以上，表现出不耐烦并拒绝再次回答。

以下情况不要结束对话：
- 你还没有说完全部需求和限制条件；
- 助手还没有把任务说明中的每一项任务都办完、毫无遗漏；
- 助手给出的结果有错误或不完整。

当所有事情都已正确办完，或者你已说清全部需求而助手表示因技术原因无法办理时，可以结束对话。""",
}


JUDGE_SYSTEM = {
    "en": """You are grading a conversation between a user and an assistant of a life-services platform. Lines that start with `tool` are the results of the assistant's tool calls.

Environment: {env_info}

The user's full task:
<instructions>
{user_instruction}
</instructions>

The task has been split into rubrics; decide for each rubric whether the assistant met it.

The conversation is long, so you see it in windows of 10 turns, each overlapping the previous one by 2 turns. This is window {window_idx} of {total_windows}. The rubric states you receive are the result of the earlier windows; update them with what happens in this window.

Rules:
1. Set a rubric from false to true only if the assistant achieved it within this window. Set a rubric from true to false only if the assistant, within this window, undid an outcome that was correct before. A later change that the user asked for (for example cancelling after ordering) does not undo an earlier success.
2. Judge the assistant's replies and tool calls. What the user says is only a hint.
3. Tool results are visible only to the assistant; they count only through what the assistant tells the user. The assistant must not invent results.
4. A rubric about an order requires a tool call that really succeeded. A failed call, or the user saying they will do it themselves, does not meet it.
5. Quantities and times must match exactly. The user accepting less or later does not rescue a mismatch.
6. Addresses and notes are judged by whether they mean the same thing.
7. Leave rubrics that this window does not touch as they are; note partial evidence in their justification.
8. Add evidence to a justification with turn numbers in brackets, like [3]. If a state does not change, restate the previous reason.

Reply with a JSON array inside a ```json code block, one object per rubric with the keys "rubric_idx", "rubric", "justification" and "meetExpectation" (true or false).""",
    "zh": """你在评判用户与生活服务平台助手之间的一段对话。以 `tool` 开头的行是助手调用工具得到的结果。

环境信息：{env_info}

用户的完整任务：
<instructions>
{user_instruction}
</instructions>

任务已拆分成若干评分项（rubric），请逐项判断助手是否达成。

对话较长，按窗口分段给出：每个窗口 10 轮，相邻窗口重叠 2 轮。当前是第 {window_idx} 个窗口，共 {total_windows} 个。你收到的评分项状态是之前窗口的结果，请根据本窗口的内容更新。

规则：
1. 只有助手在本窗口内达成了某项目标，才把该项从 false 改为 true；只有助手在本窗口内推翻了之前正确的结果，才把该项从 true 改为 false。用户后来主动提出的变更（例如下单后又取消）不会抵消之前的成功。
2. 依据助手的回复和工具调用来判断，用户的说法只作参考。
3. 工具结果只有助手能看到，只有助手转告给用户的内容才算数；助手不得编造结果。
4. 涉及订单的评分项，必须有真正成功的工具调用。调用失败，或用户说自己去办，都不算达成。
5. 数量和时间必须严格一致，用户的让步（“少一点也行”“晚一点也行”）不能弥补不一致。
6. 地址和备注按含义是否等同来判断。
7. 本窗口没有涉及的评分项保持原状，部分证据记在其理由中。
8. 在理由中追加证据并注明轮次编号，如 [3]；状态不变时复述之前的理由。

请在 ```json 代码块中输出一个 JSON 数组，每个评分项一个对象，包含键 "rubric_idx"、"rubric"、"justification" 和 "meetExpectation"（true 或 false）。""",
}


# The judge's user message, exactly as the benchmark lays it out.
JUDGE_INPUT = (
    "\n# Input\n<window_content>\n{lines}\n</window_content>\n\n"
    "<current_rubrics>\n{states}\n</current_rubrics>\n"
)

# What the scripted (offline) user says, per language.
SCRIPTED_USER = {
    "en": {
        "agree": "Yes, please go ahead with what you suggest.",
        "user_id": "My user id is {user_id}.",
        "done": "Thanks, that is everything. ###STOP###",
    },
    "zh": {
        "agree": "好的，就按你建议的办吧。",
        "user_id": "我的用户ID是{user_id}。",
        "done": "谢谢，就这些了。###STOP###",
    },
}


@dataclass(frozen=True)
class PromptSet:
    """The three system-prompt templates of one language, and where they come from."""

    source: str  # "official" or "harness"
    language: str
    agent: str
    user: str
    judge: str
    # Where the official templates were read (a checkout, the package); "" for ours.
    origin: str = ""

    def agent_system(self, time: str) -> str:
        return self.agent.format(time=time_with_weekday(time, self.language))

    def user_system(self, persona: str, instructions: str) -> str:
        return self.user.format(persona=persona, instructions=instructions)

    def judge_system(self, env_info: str, instructions: str, window: int, total: int) -> str:
        return self.judge.format(
            env_info=env_info,
            user_instruction=instructions,
            window_idx=window,
            total_windows=total,
        )


def harness_prompts(language: str) -> PromptSet:
    return PromptSet(
        "harness", language, AGENT_SYSTEM[language], USER_SYSTEM[language], JUDGE_SYSTEM[language]
    )


def prompt_set(language: str, wanted: str = "auto", data_dir: Path | None = None) -> PromptSet:
    """The prompts of a run: ``auto`` takes the official templates when a VitaBench
    checkout is the data folder or the package is installed, and ours otherwise;
    ``official`` requires one of them."""
    if wanted not in PROMPT_SOURCES:
        raise ConfigError(
            f"unknown VitaBench prompts option '{wanted}' (known: {', '.join(PROMPT_SOURCES)})"
        )
    if wanted == "harness":
        return harness_prompts(language)
    templates = official_templates(language, data_dir)
    if templates is None:
        if wanted == "official":
            raise ConfigError(
                "VitaBench prompts 'official' need the benchmark's code: a VitaBench "
                f"checkout as the data folder ({CLONE_HINT}) or its package (vita) installed"
            )
        return harness_prompts(language)
    origin = prompt_origin(data_dir)
    return PromptSet(
        "official",
        language,
        templates["agent"],
        templates["user"],
        templates["judge"],
        origin.describe() if origin is not None else "",
    )
