"""The bfcl_eval import isolation: our project root, no vendor SDKs, working checkers."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

# Parity with the official evaluator: marked slow, so in `make test-slow` (and CI).
pytestmark = pytest.mark.slow

VENDOR_SDKS = [
    "openai",
    "anthropic",
    "google",
    "cohere",
    "mistralai",
    "boto3",
    "botocore",
    "writerai",
    "zhipuai",
    "qwen_agent",
    "soundfile",
    "torch",
    "transformers",
    "vllm",
    "litellm",
]

CHILD = r"""
import json, os, sys
vendors = json.loads(sys.argv[1])
import harness.adapters.bfcl as bfcl
adapter = bfcl.BFCLAdapter()
adapter.subsets(); adapter.unavailable_reason("memory_kv")
cheap = not any(name.startswith("bfcl_eval") for name in sys.modules)

from harness.adapters.bfcl import official
official.prepare()
from bfcl_eval.constants import eval_config
from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker  # noqa: F401
from bfcl_eval.eval_checker.agentic_eval.agentic_checker import agentic_checker
import bfcl_eval.model_handler.utils  # noqa: F401
import bfcl_eval.utils  # noqa: F401

doc = [{"name": "math.factorial", "description": "n!", "parameters": {
    "type": "dict", "properties": {"number": {"type": "integer", "description": "n"}},
    "required": ["number"]}}]
answer = [{"math.factorial": {"number": [5]}}]
# A dotted name makes the checker consult the model registry (our stand-in entry).
good = ast_checker(doc, [{"math_factorial": {"number": 5}}], answer, Language.PYTHON,
                   "simple_python", official.FC_REGISTRY_NAME)
bad = ast_checker(doc, [{"math_factorial": {"number": 6}}], answer, Language.PYTHON,
                  "simple_python", official.FC_REGISTRY_NAME)
prompt = ast_checker(doc, [{"math.factorial": {"number": 5}}], answer, Language.PYTHON,
                     "simple_python", official.PROMPT_REGISTRY_NAME)
print(json.dumps({
    "cheap_import": cheap,
    "vendors": sorted({m.split(".")[0] for m in sys.modules} & set(vendors)),
    "project_root": str(eval_config.PROJECT_ROOT),
    "registry_module": type(sys.modules["bfcl_eval.constants.model_config"]).__name__,
    "stand_in": "Stand-in" in (sys.modules["bfcl_eval.constants.model_config"].__doc__ or ""),
    "good": good["valid"], "bad": bad["valid"], "prompt": prompt["valid"],
    "agentic": agentic_checker("{'answer': 'Paris'}", ["paris"])["valid"],
}))
"""


def run_child(tmp_path: Path, code: str = CHILD) -> dict:
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(VENDOR_SDKS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_checkers_import_without_vendor_sdks_and_work(tmp_path):
    result = run_child(tmp_path)
    assert result["cheap_import"], "importing the adapter must not import bfcl_eval"
    assert result["vendors"] == []
    assert result["stand_in"]
    assert result["good"] is True and result["bad"] is False and result["prompt"] is True
    assert result["agentic"] is True
    root = Path(result["project_root"])
    assert root == tmp_path / "cache" / "bfcl"
    assert (root / "result").is_dir() and (root / "score").is_dir()
    site_packages = Path(sysconfig.get_paths()["purelib"]).resolve()
    assert site_packages not in root.resolve().parents


def test_an_already_loaded_registry_is_left_alone(tmp_path):
    code = r"""
import json, sys, types
real = types.ModuleType("bfcl_eval.constants.model_config")
real.MODEL_CONFIG_MAPPING = {"marker": None}
sys.modules["bfcl_eval.constants.model_config"] = real
from harness.adapters.bfcl import official
official.prepare()
print(json.dumps({"kept": sys.modules["bfcl_eval.constants.model_config"] is real}))
"""
    assert run_child(tmp_path, code)["kept"]
