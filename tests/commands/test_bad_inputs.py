"""Every bad input is one line on stderr and exit code 2, never a traceback.

A table of bad commands across every subcommand (values, URLs, folders, suite
schema, config files, run folders of the wrong shape), run in-process through
``harness.cli.main``; a few run as a real process. Each must fail before any
work starts: no run folder is created by a refused command.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fake_runs import make_run, record
from support import TESTS

from harness.cli import main
from harness.errors import ConfigError

UNWRITABLE = Path("/proc/harness-cannot-write-here")  # not creatable, even by root
BINARY = bytes(range(256)) * 4

SUITE_OK = "name: toy\nentries:\n  - benchmark: toy\n    subsets: [easy]\n"
ENTRY = "name: toy\nentries:\n  - benchmark: toy\n"

# Suite files: each a schema error (name -> file content).
BAD_SUITES = {
    "malformed_yaml": "name: toy\nentries: [\n  - benchmark: {toy\n",
    "tab_indent_yaml": "name: toy\nentries:\n\t- benchmark: toy\n",
    "empty": "",
    "a_list": "- benchmark: toy\n",
    "a_string": "just text\n",
    "entries_not_list": "name: toy\nentries: toy\n",
    "entries_empty": "name: toy\nentries: []\n",
    "entry_not_mapping": "name: toy\nentries:\n  - toy\n",
    "entry_no_benchmark": "name: toy\nentries:\n  - subsets: [easy]\n",
    "benchmark_unknown": "name: toy\nentries:\n  - benchmark: nosuchbench\n",
    "benchmark_a_list": "name: toy\nentries:\n  - benchmark: [toy]\n",
    "benchmark_a_number": "name: toy\nentries:\n  - benchmark: 5\n",
    "subsets_number": ENTRY + "    subsets: 5\n",
    "subsets_numbers": ENTRY + "    subsets: [1, 2]\n",
    "subsets_unknown": ENTRY + "    subsets: [nosuch]\n",
    "subsets_empty": ENTRY + "    subsets: []\n",
    "limit_zero": ENTRY + "    limit: 0\n",
    "limit_text": ENTRY + "    limit: many\n",
    "limit_bool": ENTRY + "    limit: true\n",
    "limit_float": ENTRY + "    limit: 2.5\n",
    "ids_number": ENTRY + "    ids: 5\n",
    "ids_mapping": ENTRY + "    ids: {a: 1}\n",
    "ids_nested": ENTRY + "    ids: [[1, 2]]\n",
    "options_list": ENTRY + "    options: [1]\n",
    "entry_unknown_key": ENTRY + "    sample: 1\n",
    "trials_zero": "name: toy\ntrials: 0\nentries:\n  - benchmark: toy\n",
    "trials_text": "name: toy\ntrials: '2'\nentries:\n  - benchmark: toy\n",
    "trials_bool": "name: toy\ntrials: true\nentries:\n  - benchmark: toy\n",
    "trials_huge": "name: toy\ntrials: 100000000\nentries:\n  - benchmark: toy\n",
    "user_model_number": "name: toy\nuser_model: 5\nentries:\n  - benchmark: toy\n",
    "judge_model_list": "name: toy\njudge_model: [a]\nentries:\n  - benchmark: toy\n",
    "name_mapping": "name: {a: 1}\nentries:\n  - benchmark: toy\n",
    "unknown_top_key": "name: toy\nentries:\n  - benchmark: toy\nsamples: 3\n",
    "duplicate_anchor_alias": "name: *nothing\nentries:\n  - benchmark: toy\n",
    "control_character": "name: x\x1b\nentries: []\n",
}

MODEL_CONFIGS = {
    "not_a_url": "replicas:\n  - url: notaurl\n",
    "ftp": "replicas:\n  - url: ftp://127.0.0.1/v1\n",
    "bad_port": "replicas:\n  - url: http://127.0.0.1:99999/v1\n",
    "empty_replicas": "replicas: []\n",
    "concurrency_zero": "replicas:\n  - url: http://127.0.0.1:8000/v1\n    max_concurrency: 0\n",
    "malformed": "replicas: [\n",
    "a_list": "- http://127.0.0.1:8000/v1\n",
    "unknown_key": "replicas:\n  - url: http://127.0.0.1:8000/v1\nflavour: x\n",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Files and run folders the bad commands point at."""
    root = tmp_path_factory.mktemp("bad")
    env = pytest.MonkeyPatch()
    env.setenv("HARNESS_ADAPTERS", "toy=toy_adapter:ToyAdapter")
    env.delenv("OPENAI_API_KEY", raising=False)
    env.chdir(root)
    paths: dict[str, str] = {"root": str(root), "unwritable": str(UNWRITABLE)}
    suite = root / "toy.yaml"
    suite.write_text(SUITE_OK)
    paths["suite"] = str(suite)
    for name, text in BAD_SUITES.items():
        (root / f"suite_{name}.yaml").write_text(text)
    (root / "suite_binary.yaml").write_bytes(BINARY)
    (root / "suite_latin1.yaml").write_bytes("name: caf\xe9\nentries: []\n".encode("latin-1"))
    for name, text in MODEL_CONFIGS.items():
        (root / f"mc_{name}.yaml").write_text(text)
    (root / "mc_binary.yaml").write_bytes(BINARY)
    (root / "a_file").write_text("not a folder\n")
    (root / "binary.yaml").write_bytes(BINARY)
    (root / "list.yaml").write_text("- 1\n- 2\n")
    (root / "malformed.yaml").write_text("a: [\n")
    (root / "strategy_inf.yaml").write_text("temperature: .inf\n")
    # A real run (the null model), then copies of it broken in different ways.
    good = root / "good"
    assert (
        main(["run", "--suite", str(suite), "--model", "null", "--quiet", "--out", str(good)]) == 0
    )
    paths["good"] = str(good)

    def broken(name: str, manifest: str | bytes | None = None, samples: str | None = None) -> None:
        folder = root / name
        shutil.copytree(good, folder)
        if manifest is not None:
            target = folder / "manifest.json"
            if isinstance(manifest, bytes):
                target.write_bytes(manifest)
            else:
                target.write_text(manifest)
        if samples is not None:
            (folder / "samples.jsonl").write_text(samples)
        paths[name] = str(folder)

    manifest = json.loads((good / "manifest.json").read_text())
    broken("manifest_list", "[1, 2]")
    broken("manifest_text", '"a run"')
    broken("manifest_not_json", "{not json")
    broken("manifest_binary", BINARY)
    broken("manifest_model_number", json.dumps({**manifest, "model": 5}))
    broken("manifest_suite_text", json.dumps({**manifest, "suite": "x", "suite_name": 3}))
    broken("manifest_trials_text", json.dumps({**manifest, "trials": "many"}))
    broken("manifest_versions_list", json.dumps({**manifest, "versions": [1]}))
    broken("manifest_planned_list", json.dumps({**manifest, "planned": [1]}))
    broken("manifest_strategy_number", json.dumps({**manifest, "strategy": 7}))
    broken("samples_list_line", samples="[1, 2]\n")
    broken("samples_key_number", samples=json.dumps({"key": 5}) + "\n")
    broken("samples_missing_fields", samples=json.dumps({"key": "toy/easy/easy-0#0"}) + "\n")
    good_record = json.loads((good / "samples.jsonl").read_text().splitlines()[0])
    broken(
        "samples_trial_text",
        samples=json.dumps({**good_record, "trial": "zero"}) + "\n",
    )
    broken(
        "samples_unknown_benchmark",
        samples=json.dumps({**good_record, "benchmark": "nosuchbench"}) + "\n",
    )
    broken("samples_score_list", samples=json.dumps({**good_record, "score": [1]}) + "\n")
    # A run's file names taken by folders (an OS error on every rerun before).
    for name, taken in (
        ("samples_a_folder", "samples.jsonl"),
        ("manifest_a_folder", "manifest.json"),
    ):
        broken(name)
        (root / name / taken).unlink()
        (root / name / taken).mkdir()
    (root / "only_samples_folder" / "samples.jsonl").mkdir(parents=True)
    paths["only_samples_folder"] = str(root / "only_samples_folder")
    broken("samples_trajectory_text", samples=json.dumps({**good_record, "trajectory": "x"}) + "\n")
    for name, text in {
        "scores_list": "[1]",
        "scores_not_json": "{nope",
        "scores_benchmarks_list": json.dumps({"benchmarks": [1], "records": {}}),
    }.items():
        broken(name)
        (root / name / "scores.json").write_text(text)
    # Records without a manifest: refused unless adopted.
    orphan = root / "orphan"
    orphan.mkdir()
    shutil.copy(good / "samples.jsonl", orphan / "samples.jsonl")
    paths["orphan"] = str(orphan)
    # A run folder of another run for the different-run check.
    other = root / "other"
    assert (
        main(["run", "--suite", str(suite), "--model", "oracle", "--quiet", "--out", str(other)])
        == 0
    )
    paths["other"] = str(other)
    # A BFCL-shaped run for export-bfcl, and a toy run sharing no task with good.
    bfcl = make_run(
        root, "bfcl_run", [record("bfcl", "simple_python", "simple_python_0")], {"bfcl": {}}
    )
    paths["bfcl_run"] = str(bfcl)
    traversal = make_run(
        root, "bfcl_unknown_subset", [record("bfcl", "../../x", "x_0")], {"bfcl": {}}
    )
    paths["bfcl_unknown_subset"] = str(traversal)
    disjoint = make_run(root, "disjoint", [record("toy", "hard", "hard-9")], {"toy": {}})
    paths["disjoint"] = str(disjoint)
    (root / "not_a_run").mkdir()
    (root / "dangling").symlink_to(root / "nowhere")
    paths["not_a_run"] = str(root / "not_a_run")
    yield paths
    env.undo()


def run_args(*extra: str) -> list[str]:
    return ["run", "--suite", "{suite}", "--model", "null", "--quiet", "--out", "{root}/x", *extra]


def remote(*extra: str) -> list[str]:
    return [
        "run",
        "--suite",
        "{suite}",
        "--model",
        "openai/m",
        "--quiet",
        "--out",
        "{root}/x",
        *extra,
    ]


def serve(*extra: str) -> list[str]:
    return ["run", "--suite", "{suite}", "--quiet", "--out", "{root}/x", "--serve", *extra]


CASES: list[tuple[str, list[str]]] = [
    # -- run: values -------------------------------------------------------------------
    ("trials_0", run_args("--trials", "0")),
    ("trials_negative", run_args("--trials", "-1")),
    ("trials_huge", run_args("--trials", "100000000")),
    ("trials_text", run_args("--trials", "abc")),
    ("episode_timeout_0", run_args("--episode-timeout", "0")),
    ("episode_timeout_negative", run_args("--episode-timeout", "-5")),
    ("episode_timeout_nan", run_args("--episode-timeout", "nan")),
    ("timeout_0", run_args("--timeout", "0")),
    ("timeout_negative", run_args("--timeout", "-1")),
    ("timeout_inf", run_args("--timeout", "inf")),
    ("max_attempts_0", run_args("--max-attempts", "0")),
    ("max_attempts_negative", run_args("--max-attempts", "-3")),
    ("retry_delay_negative", run_args("--retry-delay", "-1")),
    ("retry_delay_nan", run_args("--retry-delay", "nan")),
    ("concurrency_0", run_args("--concurrency", "0")),
    ("concurrency_negative", run_args("--concurrency", "-2")),
    ("concurrency_huge", run_args("--concurrency", "100000000")),
    ("limit_0", run_args("--limit", "0")),
    ("temperature_negative", run_args("--temperature", "-0.5")),
    ("temperature_nan", run_args("--temperature", "nan")),
    ("top_p_above_1", run_args("--top-p", "1.5")),
    ("top_p_negative", run_args("--top-p", "-0.1")),
    ("max_tokens_0", run_args("--max-tokens", "0")),
    ("max_tokens_negative", run_args("--max-tokens", "-1")),
    ("seed_text", run_args("--seed", "x")),
    ("shard_zero", run_args("--shard", "0/2")),
    ("shard_above", run_args("--shard", "3/2")),
    ("shard_text", run_args("--shard", "x")),
    ("shard_of_zero", run_args("--shard", "1/0")),
    ("ids_empty", run_args("--ids", "")),
    ("ids_commas", run_args("--ids", " , ")),
    ("ids_unknown", run_args("--ids", "nosuch-1")),
    ("strategy_unknown", run_args("--strategy", "bogus")),
    ("strategy_zero", run_args("--strategy", "rehearsal-parallel:0")),
    ("strategy_text_count", run_args("--strategy", "rehearsal-parallel:x")),
    ("strategy_negative", run_args("--strategy", "self-consistency:-1")),
    ("strategy_opt_no_value", run_args("--strategy-opt", "novalue")),
    ("strategy_opt_no_key", run_args("--strategy-opt", "=x")),
    ("strategy_config_missing", run_args("--strategy-config", "{root}/missing.yaml")),
    ("strategy_config_binary", run_args("--strategy-config", "{root}/binary.yaml")),
    ("strategy_config_list", run_args("--strategy-config", "{root}/list.yaml")),
    ("strategy_config_malformed", run_args("--strategy-config", "{root}/malformed.yaml")),
    ("strategy_config_folder", run_args("--strategy-config", "{root}")),
    ("env_feedback_unknown", run_args("--env-feedback", "weird")),
    ("client_unknown", remote("--client", "bogus")),
    ("client_direct_no_api_base", remote("--client", "direct")),
    ("model_missing", ["run", "--suite", "{suite}", "--quiet"]),
    ("model_needs_key", ["run", "--suite", "{suite}", "--model", "openai/gpt-4.1", "--quiet"]),
    ("model_empty", run_args("--model", "")),
    ("model_unknown_bare", run_args("--model", "nosuch-model-xyz")),
    ("model_unknown_provider", run_args("--model", "nosuchprovider/m")),
    (
        "model_name_too_long_for_a_folder",
        [
            "run",
            "--suite",
            "{suite}",
            "--model",
            "openai/" + "m" * 300,
            "--quiet",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--no-preflight",
        ],
    ),  # fmt: skip
    ("user_model_empty", run_args("--user-model", "")),
    ("judge_model_empty", run_args("--judge-model", "")),
    ("api_base_empty", remote("--api-base", "")),
    (
        "strategy_config_inf",
        run_args(
            "--strategy", "self-consistency:2", "--strategy-config", "{root}/strategy_inf.yaml"
        ),
    ),
    ("data_dir_a_file", run_args("--data-dir", "{root}/a_file")),
    ("cache_dir_a_file", run_args("--cache-dir", "{root}/a_file")),
    ("cache_dir_unwritable", run_args("--cache-dir", "{unwritable}/cache")),
    ("unknown_flag", run_args("--bogus-flag")),
    ("suite_missing", ["run", "--model", "null"]),
    ("suite_unknown", ["run", "--suite", "nosuchsuite", "--model", "null"]),
    ("suite_a_folder", ["run", "--suite", "{root}", "--model", "null"]),
    # -- run: the suite schema -----------------------------------------------------------
    *[
        (f"suite_{name}", ["run", "--suite", f"{{root}}/suite_{name}.yaml", "--model", "null"])
        for name in [*BAD_SUITES, "binary", "latin1"]
    ],
    # -- run: URLs -------------------------------------------------------------------------
    ("api_base_not_a_url", remote("--api-base", "notaurl")),
    ("api_base_ftp", remote("--api-base", "ftp://127.0.0.1/v1")),
    ("api_base_port_99999", remote("--api-base", "http://127.0.0.1:99999/v1")),
    ("api_base_port_0", remote("--api-base", "http://127.0.0.1:0/v1")),
    ("api_base_port_text", remote("--api-base", "http://127.0.0.1:abc/v1")),
    ("api_base_no_host", remote("--api-base", "http://:8000/v1")),
    ("api_base_bad_ipv6", remote("--api-base", "http://[::1/v1")),
    ("api_base_space", remote("--api-base", "http://local host:8000/v1")),
    ("api_base_empty_replica", remote("--api-base", "http://127.0.0.1:8000/v1,")),
    ("api_base_replica_twice", remote("--api-base", "http://a:8000/v1,http://a:8000/v1")),
    ("api_base_one_bad_replica", remote("--api-base", "http://a:8000/v1,ftp://b/v1")),
    *[
        (f"model_config_{name}", remote("--model-config", f"{{root}}/mc_{name}.yaml"))
        for name in [*MODEL_CONFIGS, "binary"]
    ],
    ("model_config_missing", remote("--model-config", "{root}/missing.yaml")),
    (
        "model_config_and_api_base",
        remote("--model-config", "{root}/mc_ftp.yaml", "--api-base", "http://127.0.0.1:8000/v1"),
    ),  # fmt: skip
    # -- run: serving a checkpoint -----------------------------------------------------------
    (
        "serve_command_unbalanced_quote",
        serve("custom", "--checkpoint", "{root}", "--serve-command", "server --port {port} 'oops"),
    ),
    (
        "serve_command_bad_placeholder",
        serve("custom", "--checkpoint", "{root}", "--serve-command", "server --port {nope}"),
    ),
    ("serve_command_empty", serve("custom", "--checkpoint", "{root}", "--serve-command", " ")),
    ("serve_custom_without_command", serve("custom", "--checkpoint", "{root}")),
    ("serve_without_checkpoint", serve("custom", "--serve-command", "s --port {port}")),
    ("serve_unknown_kind", serve("bogus")),
    ("serve_command_without_serve", run_args("--serve-command", "s --port {port}")),
    ("checkpoint_without_serve", run_args("--checkpoint", "{root}")),
    (
        "serve_tp_zero",
        serve(
            "custom",
            "--checkpoint",
            "{root}",
            "--serve-command",
            "s --port {port}",
            "--tensor-parallel-size",
            "0",
        ),
    ),
    (
        "serve_timeout_zero",
        serve(
            "custom",
            "--checkpoint",
            "{root}",
            "--serve-command",
            "s --port {port}",
            "--serve-timeout",
            "0",
        ),
    ),
    (
        "serve_timeout_nan",
        serve(
            "custom",
            "--checkpoint",
            "{root}",
            "--serve-command",
            "s --port {port}",
            "--serve-timeout",
            "nan",
        ),
    ),
    (
        "serve_lora_not_pair",
        serve(
            "custom",
            "--checkpoint",
            "{root}",
            "--serve-command",
            "s --port {port}",
            "--lora",
            "nopath",
        ),
    ),
    ("serve_llamacpp_not_a_file", serve("llamacpp", "--checkpoint", "{root}/missing.gguf")),
    (
        "serve_with_api_base",
        serve(
            "custom",
            "--checkpoint",
            "{root}",
            "--serve-command",
            "s --port {port}",
            "--api-base",
            "http://127.0.0.1:1/v1",
        ),
    ),
    # -- run: folders ----------------------------------------------------------------------------
    ("out_a_file", run_args("--out", "{root}/a_file")),
    ("out_empty", run_args("--out", "")),
    ("out_samples_a_folder", run_args("--out", "{samples_a_folder}")),
    ("out_manifest_a_folder", run_args("--out", "{manifest_a_folder}")),
    ("out_only_samples_a_folder", run_args("--out", "{only_samples_folder}")),
    ("out_under_a_file", run_args("--out", "{root}/a_file/run")),
    ("out_unwritable", run_args("--out", "{unwritable}/run")),
    ("out_holds_another_run", run_args("--out", "{other}")),
    ("out_records_without_manifest", run_args("--out", "{orphan}")),
    *[
        (f"out_{name}", run_args("--out", f"{{{name}}}"))
        for name in [
            "manifest_list",
            "manifest_text",
            "manifest_not_json",
            "manifest_binary",
            "manifest_model_number",
            "manifest_suite_text",
            "manifest_strategy_number",
            "samples_list_line",
            "samples_key_number",
            "samples_missing_fields",
            "samples_trial_text",
        ]
    ],
    # -- score ------------------------------------------------------------------------------------
    ("score_missing_folder", ["score", "{root}/missing"]),
    ("score_a_file", ["score", "{root}/a_file"]),
    ("score_not_a_run", ["score", "{not_a_run}"]),
    ("score_records_without_manifest", ["score", "{orphan}"]),
    *[
        (f"score_{name}", ["score", f"{{{name}}}"])
        for name in [
            "manifest_list",
            "manifest_binary",
            "manifest_model_number",
            "manifest_trials_text",
            "samples_list_line",
            "samples_key_number",
            "samples_missing_fields",
            "samples_trial_text",
            "samples_unknown_benchmark",
            "samples_score_list",
            "samples_trajectory_text",
        ]
    ],
    ("score_no_rescore_bad_manifest", ["score", "{manifest_versions_list}", "--no-rescore"]),
    ("score_no_folder", ["score"]),
    ("score_samples_a_folder", ["score", "{samples_a_folder}"]),
    ("score_option_malformed", ["score", "{good}", "--option", "toy.x=["]),
    (
        "score_option_benchmark_not_in_run",
        ["score", "{good}", "--option", "tau2.malformed_calls=explode"],
    ),
    ("score_option_control_character", ["score", "{good}", "--option", "toy.mode=\x1b"]),
    ("leaderboard_samples_a_folder", ["leaderboard", "{samples_a_folder}"]),
    # -- leaderboard ------------------------------------------------------------------------------
    ("leaderboard_missing", ["leaderboard", "{root}/missing"]),
    ("leaderboard_not_a_run", ["leaderboard", "{not_a_run}"]),
    ("leaderboard_format", ["leaderboard", "{good}", "--format", "xml"]),
    ("leaderboard_n_boot_negative", ["leaderboard", "{good}", "--n-boot", "-1"]),
    ("leaderboard_n_boot_0", ["leaderboard", "{good}", "--n-boot", "0"]),
    ("leaderboard_n_boot_1", ["leaderboard", "{good}", "--n-boot", "1"]),
    ("leaderboard_n_boot_huge", ["leaderboard", "{good}", "--n-boot", "100000000000"]),
    ("leaderboard_reference_unknown", ["leaderboard", "{good}", "--with-reference", "nosuch"]),
    (
        "leaderboard_reference_binary",
        ["leaderboard", "{good}", "--with-reference", "{root}/binary.yaml"],
    ),  # fmt: skip
    (
        "leaderboard_reference_malformed",
        ["leaderboard", "{good}", "--with-reference", "{root}/malformed.yaml"],
    ),  # fmt: skip
    (
        "leaderboard_reference_list",
        ["leaderboard", "{good}", "--with-reference", "{root}/list.yaml"],
    ),  # fmt: skip
    ("leaderboard_manifest_list", ["leaderboard", "{manifest_list}"]),
    ("leaderboard_manifest_model_number", ["leaderboard", "{manifest_model_number}"]),
    ("leaderboard_manifest_strategy_number", ["leaderboard", "{manifest_strategy_number}"]),
    ("leaderboard_scores_list", ["leaderboard", "{scores_list}"]),
    ("leaderboard_scores_not_json", ["leaderboard", "{scores_not_json}"]),
    ("leaderboard_scores_benchmarks_list", ["leaderboard", "{scores_benchmarks_list}"]),
    ("leaderboard_seed_text", ["leaderboard", "{good}", "--seed", "x"]),
    # -- compare ----------------------------------------------------------------------------------
    ("compare_missing", ["compare", "{good}", "{root}/missing"]),
    ("compare_one_folder", ["compare", "{good}"]),
    ("compare_n_boot_negative", ["compare", "{good}", "{other}", "--n-boot", "-1"]),
    ("compare_max_flips_text", ["compare", "{good}", "{other}", "--max-flips", "x"]),
    ("compare_max_flips_negative", ["compare", "{good}", "{other}", "--max-flips", "-1"]),
    ("compare_format", ["compare", "{good}", "{other}", "--format", "xml"]),
    ("compare_bad_manifest", ["compare", "{good}", "{manifest_list}"]),
    ("compare_bad_scores", ["compare", "{good}", "{scores_list}"]),
    ("compare_no_shared_tasks", ["compare", "{good}", "{disjoint}"]),
    # -- plot -------------------------------------------------------------------------------------
    ("plot_no_out", ["plot", "{good}"]),
    ("plot_out_a_file", ["plot", "{good}", "--out", "{root}/a_file"]),
    ("plot_out_unwritable", ["plot", "{good}", "--out", "{unwritable}/figs"]),
    ("plot_kind_unknown", ["plot", "{good}", "--out", "{root}/figs", "--kind", "bogus"]),
    ("plot_format_unknown", ["plot", "{good}", "--out", "{root}/figs", "--format", "gif"]),
    ("plot_n_boot_negative", ["plot", "{good}", "--out", "{root}/figs", "--n-boot", "-1"]),
    ("plot_x_unknown", ["plot", "{good}", "--out", "{root}/figs", "--x", "bogus"]),
    ("plot_missing_run", ["plot", "{root}/missing", "--out", "{root}/figs"]),
    ("plot_bad_manifest", ["plot", "{manifest_model_number}", "--out", "{root}/figs"]),
    # -- report -----------------------------------------------------------------------------------
    ("report_out_a_folder", ["report", "{good}", "--out", "{root}"]),
    ("report_out_under_a_file", ["report", "{good}", "--out", "{root}/a_file/r.html"]),
    ("report_out_unwritable", ["report", "{good}", "--out", "{unwritable}/r.html"]),
    ("report_n_boot_negative", ["report", "{good}", "--out", "{root}/r.html", "--n-boot", "-1"]),
    (
        "report_max_chars_negative",
        ["report", "{good}", "--out", "{root}/r.html", "--max-chars", "-1"],
    ),  # fmt: skip
    ("report_missing_run", ["report", "{root}/missing", "--out", "{root}/r.html"]),
    ("report_bad_manifest", ["report", "{manifest_list}", "--out", "{root}/r.html"]),
    ("report_bad_samples", ["report", "{samples_trajectory_text}", "--out", "{root}/r.html"]),
    (
        "report_baseline_unknown",
        ["report", "{good}", "--out", "{root}/r.html", "--baseline", "nosuch"],
    ),  # fmt: skip
    (
        "report_reference_unknown",
        ["report", "{good}", "--out", "{root}/r.html", "--with-reference", "nosuch"],
    ),  # fmt: skip
    # -- paper ------------------------------------------------------------------------------------
    (
        "paper_baseline_not_listed",
        ["paper", "{good}", "--baseline", "{other}", "--out", "{root}/pack"],
    ),  # fmt: skip
    # -- export-bfcl ------------------------------------------------------------------------------
    ("export_into_a_file", ["export-bfcl", "{bfcl_run}", "{root}/a_file"]),
    ("export_under_a_file", ["export-bfcl", "{bfcl_run}", "{root}/a_file/out"]),
    ("export_unwritable", ["export-bfcl", "{bfcl_run}", "{unwritable}/out"]),
    ("export_missing_run", ["export-bfcl", "{root}/missing", "{root}/exp"]),
    ("export_no_bfcl_records", ["export-bfcl", "{good}", "{root}/exp"]),
    ("export_trial_negative", ["export-bfcl", "{bfcl_run}", "{root}/exp", "--trial", "-1"]),
    ("export_trial_absent", ["export-bfcl", "{bfcl_run}", "{root}/exp", "--trial", "7"]),
    (
        "export_model_name_underscore",
        ["export-bfcl", "{bfcl_run}", "{root}/exp", "--model-name", "my_model"],
    ),  # fmt: skip
    ("export_bad_manifest", ["export-bfcl", "{manifest_binary}", "{root}/exp"]),
    ("export_one_argument", ["export-bfcl", "{bfcl_run}"]),
    ("export_out_dangling_symlink", ["export-bfcl", "{bfcl_run}", "{root}/dangling"]),
    ("export_unknown_subset", ["export-bfcl", "{bfcl_unknown_subset}", "{root}/exp_subset"]),
    # -- sweep ------------------------------------------------------------------------------------
    ("sweep_no_checkpoints", ["sweep", "--suite", "{suite}"]),
    ("sweep_matches_nothing", ["sweep", "--suite", "{suite}", "--checkpoints", "{root}/none_*"]),
    (
        "sweep_parts_zero",
        ["sweep", "--suite", "{suite}", "--checkpoints", "{root}", "--parts", "0"],
    ),  # fmt: skip
    (
        "sweep_executor_unknown",
        ["sweep", "--suite", "{suite}", "--checkpoints", "{root}", "--executor", "bogus"],
    ),  # fmt: skip
    (
        "sweep_trials_zero",
        ["sweep", "--suite", "{suite}", "--checkpoints", "{root}", "--trials", "0"],
    ),  # fmt: skip
    (
        "sweep_timeout_zero",
        ["sweep", "--suite", "{suite}", "--checkpoints", "{root}", "--timeout", "0"],
    ),  # fmt: skip
    (
        "sweep_out_a_file",
        ["sweep", "--suite", "{suite}", "--checkpoints", "{root}", "--out", "{root}/a_file"],
    ),  # fmt: skip
    (
        "sweep_suite_broken",
        ["sweep", "--suite", "{root}/suite_binary.yaml", "--checkpoints", "{root}"],
    ),  # fmt: skip
    # -- merge ------------------------------------------------------------------------------------
    ("merge_no_out", ["merge", "{good}"]),
    ("merge_out_a_file", ["merge", "{good}", "--out", "{root}/a_file"]),
    ("merge_out_unwritable", ["merge", "{good}", "--out", "{unwritable}/m"]),
    ("merge_missing_shard", ["merge", "{root}/missing", "--out", "{root}/m"]),
    ("merge_shard_twice", ["merge", "{good}", "{good}", "--out", "{root}/m"]),
    ("merge_out_is_a_shard", ["merge", "{good}", "--out", "{good}"]),
    ("merge_bad_manifest", ["merge", "{manifest_list}", "--out", "{root}/m"]),
    ("merge_bad_samples", ["merge", "{samples_missing_fields}", "--out", "{root}/m"]),
    ("merge_different_runs", ["merge", "{good}", "{other}", "--out", "{root}/m"]),
    # -- list and the command itself ----------------------------------------------------------------
    ("list_extra_argument", ["list", "extra"]),
    ("list_unknown_flag", ["list", "--bogus"]),
    ("no_command", []),
    ("unknown_command", ["frobnicate"]),
]


def fill(text: str, paths: dict[str, str]) -> str:
    """``{name}`` replaced by the fixture's path of that name (other braces kept)."""
    for name, value in paths.items():
        text = text.replace("{" + name + "}", value)
    return text


def test_the_table_is_large_and_ids_are_unique():
    assert len(CASES) >= 120
    names = [name for name, _ in CASES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name,argv", CASES, ids=[name for name, _ in CASES])
def test_a_bad_input_is_one_line_and_exit_code_2(world, name, argv, capsys):
    args = [fill(part, world) for part in argv]
    created = Path(world["root"]) / "x"
    code = main(args)
    out, err = capsys.readouterr()
    left_behind = created.exists()
    shutil.rmtree(created, ignore_errors=True)  # so that one failure does not fail the rest
    assert "Traceback" not in err + out
    assert code == 2, f"{name}: exit {code}; stderr: {err[-500:]}"
    lines = (out + err).strip().splitlines()  # nothing on stdout either: the refusal is all
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), out + err
    assert not left_behind, "a refused run created its folder"


def test_a_read_only_working_folder_is_one_line(world, capsys, monkeypatch):
    """With no --out the run folder goes under results/ of the working folder."""
    monkeypatch.chdir("/proc")
    assert main(["run", "--suite", world["suite"], "--model", "null", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not writable" in err


def test_records_without_a_manifest_are_adopted_when_asked(world, tmp_path, capsys):
    orphan = tmp_path / "orphan"
    shutil.copytree(world["orphan"], orphan)
    before = len((orphan / "samples.jsonl").read_text().splitlines())
    argv = ["run", "--suite", world["suite"], "--model", "null", "--quiet", "--out", str(orphan)]
    assert main(argv) == 2
    assert "--adopt" in capsys.readouterr().err
    assert main([*argv, "--adopt"]) == 0
    # Adopted: the records were kept and counted as done, nothing ran twice.
    assert "0 ran, 5 already done" in capsys.readouterr().err
    assert len((orphan / "samples.jsonl").read_text().splitlines()) == before
    assert (orphan / "manifest.json").is_file()


SUBPROCESS_CASES = [
    ["run", "--suite", "{root}/suite_binary.yaml", "--model", "null"],
    ["run", "--suite", "{root}/suite_malformed_yaml.yaml", "--model", "null"],
    ["run", "--suite", "{suite}", "--model", "null", "--trials", "100000000", "--out", "{root}/y"],
    ["report", "{good}", "--out", "{root}"],
]


@pytest.mark.slow
@pytest.mark.parametrize("argv", SUBPROCESS_CASES, ids=["binary", "yaml", "trials", "report"])
def test_bad_inputs_as_a_real_process(world, argv):
    env = {**os.environ, "PYTHONPATH": str(TESTS), "HARNESS_ADAPTERS": "toy=toy_adapter:ToyAdapter"}
    result = subprocess.run(
        [sys.executable, "-m", "harness.cli", *[fill(a, world) for a in argv]],
        capture_output=True,
        text=True,
        env=env,
        cwd=world["root"],
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# -- YAML aliases ----------------------------------------------------------------------------


def alias_bomb(indent: int, levels: int = 9, width: int = 9) -> str:
    """YAML mappings a0..a8, each a list of ``width`` aliases of the one before:
    a few hundred bytes that expand to ``width ** levels`` nodes."""
    pad = " " * indent
    lines = [f"{pad}a0: &a0 [{', '.join(['x'] * width)}]"]
    for level in range(1, levels):
        aliases = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"{pad}a{level}: &a{level} [{aliases}]")
    return "\n".join(lines) + "\n"


ALIAS_BOMBS = {
    "suite": ENTRY + "    options:\n" + alias_bomb(6),
    "model_config": "replicas: [http://127.0.0.1:8000/v1]\n" + alias_bomb(0),
    "strategy_config": alias_bomb(0),
}


# Before aliases were bounded, each of these ran at 100% CPU past 1 GB for minutes.
@pytest.mark.timeout(10)
@pytest.mark.parametrize("where", sorted(ALIAS_BOMBS))
def test_a_yaml_alias_bomb_is_refused_at_once(world, where, tmp_path, capsys):
    import time

    text = ALIAS_BOMBS[where]
    assert len(text.encode()) < 600
    path = tmp_path / f"{where}.yaml"
    path.write_text(text)
    argv = {
        "suite": ["run", "--suite", str(path), "--model", "null", "--quiet"],
        "model_config": remote("--model-config", str(path)),
        "strategy_config": run_args("--strategy-config", str(path)),
    }[where]
    argv = [fill(part, world) for part in argv] + ["--out", str(tmp_path / "run")]
    started = time.monotonic()
    code = main(argv)
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 2 and elapsed < 2.0, (code, elapsed)
    lines = (out + err).strip().splitlines()
    assert len(lines) == 1 and "YAML aliases expand" in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_yaml_anchors_for_shared_defaults_still_load():
    from harness.config.validate import parse_yaml

    text = "base: &base {temperature: 0.5, max_examples: 4}\nrun: {<<: *base, max_examples: 8}\n"
    assert parse_yaml(text, "t") == {
        "base": {"temperature": 0.5, "max_examples": 4},
        "run": {"temperature": 0.5, "max_examples": 8},
    }
    with pytest.raises(ConfigError, match="alias refers to a node that contains it"):
        parse_yaml("a: &a [*a]\n", "t")


def test_every_yaml_read_goes_through_the_bounded_loader():
    """yaml.safe_load and its relatives expand aliases without a bound: only
    harness.config.validate.parse_yaml may parse YAML in the harness and its adapters."""
    import re

    pattern = re.compile(r"yaml\.(safe_load|load|full_load|unsafe_load|load_all|safe_load_all)\(")
    offenders = [
        str(path.relative_to(TESTS.parent))
        for folder in ("harness", "adapters")
        for path in sorted((TESTS.parent / folder).rglob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


# -- values of flags, for every command ----------------------------------------------------------


def command_actions() -> list[tuple[str, argparse.Action]]:
    """(command, action) for every argument of every command (adapters' included)."""
    from harness.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [
        (name, action)
        for name, sub in commands.choices.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction)
    ]


def test_every_number_flag_refuses_nan_inf_and_negative_values(world, capsys):
    flags = [
        (command, "/".join(action.option_strings))
        for command, action in command_actions()
        if action.option_strings and action.type is float
    ]
    # The enumeration finds them (so a new float flag is covered without a new case).
    assert {("run", "--serve-timeout"), ("sweep", "--gpus-per-job"), ("run", "--top-p")} <= set(
        flags
    )
    for command, flag in flags:
        for value in ("nan", "inf", "-inf", "-1", "1e400"):
            assert main([command, f"{flag}={value}"]) == 2, (command, flag, value)
            out, err = capsys.readouterr()
            assert (out + err).strip().splitlines() == [
                f"harness: error: argument {flag}: must be a finite number >= 0 (got {value})"
            ], (command, flag, value)
        main([command, f"{flag}=0.5"])  # fails for the missing arguments, not for this one
        assert f"argument {flag}:" not in capsys.readouterr().err


def test_no_text_or_path_value_may_be_empty(world, capsys):
    """An empty value is an unset shell variable: ``--out ''`` was the working
    folder, ``--user-model ''`` the default user model."""
    flags = [
        (command, "/".join(action.option_strings) if action.option_strings else None, action)
        for command, action in command_actions()
        if action.type in (None, Path) and action.nargs != 0
    ]
    optional = {(command, flag) for command, flag, _ in flags if flag}
    assert {("run", "--out"), ("run", "--user-model"), ("paper", "--baseline")} <= optional
    firsts = {}
    for command, flag, action in flags:
        if flag is None:  # a positional: the first one of its command
            firsts.setdefault(command, action)
            continue
        count = action.nargs if isinstance(action.nargs, int) else 1
        for value in ("", "  "):
            assert main([command, flag, *[value] * count]) == 2, (command, flag)
            out, err = capsys.readouterr()
            assert (out + err).strip().splitlines() == [
                f"harness: error: argument {flag}: empty value"
            ], (command, flag)
    assert {"score", "compare", "leaderboard", "export-bfcl"} <= set(firsts)
    for command in firsts:
        assert main([command, ""]) == 2, command
        out, err = capsys.readouterr()
        lines = (out + err).strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith(": empty value"), (command, lines)


# -- models ------------------------------------------------------------------------------------------


def test_a_model_litellm_cannot_route_is_refused_unless_a_server_is_named():
    from harness.models.settings import ModelSettings, check_model

    for name in ("nosuch-model-xyz", "nosuchprovider/m"):
        with pytest.raises(ConfigError, match=f"model '{name}': litellm knows no provider"):
            check_model(ModelSettings(name=name))
    # An OpenAI-compatible server serves any name; the built-in models need nothing.
    check_model(ModelSettings(name="nosuch-model-xyz", api_base="http://127.0.0.1:9/v1"))
    check_model(ModelSettings(name="my-org/my-model", api_base="http://127.0.0.1:9/v1"))
    for name in ("oracle", "null"):
        check_model(ModelSettings(name=name))


# -- HARNESS_ADAPTERS ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "bogus:::",
        "toy",
        "toy=toy_adapter",
        "=toy_adapter:ToyAdapter",
        "toy=:ToyAdapter",
        "toy=toy_adapter:ToyAdapter,other",
        "toy=no_such_module_xyz:ToyAdapter",
        "toy=no_such_package_xyz.adapter:ToyAdapter",
    ],
)
def test_a_malformed_or_missing_harness_adapters_entry_is_one_line(value, monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_ADAPTERS", value)
    assert main(["list"]) == 2
    out, err = capsys.readouterr()
    lines = (out + err).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: HARNESS_ADAPTERS: "), lines


def test_harness_adapters_takes_spaces_and_a_trailing_comma(monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_ADAPTERS", " toy = toy_adapter:ToyAdapter , ")
    assert main(["list"]) == 0
    assert "  toy: easy, hard" in capsys.readouterr().out


def test_an_adapter_class_that_is_not_there_is_one_line(world, tmp_path, monkeypatch, capsys):
    from harness.task.registry import get_adapter

    monkeypatch.setenv("HARNESS_ADAPTERS", "toy=toy_adapter:NoSuchAdapter")
    get_adapter.cache_clear()  # one adapter per process: the real toy is already made
    argv = ["run", "--suite", world["suite"], "--model", "null", "--out", str(tmp_path / "x")]
    try:
        assert main(argv) == 2
    finally:
        get_adapter.cache_clear()
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == ["harness: error: adapter 'toy': module toy_adapter has no NoSuchAdapter"]


# -- run folders -------------------------------------------------------------------------------------


def test_a_samples_file_that_is_a_folder_is_refused_on_every_rerun(world, tmp_path, capsys):
    run = tmp_path / "run"
    (run / "samples.jsonl").mkdir(parents=True)
    argv = ["run", "--suite", world["suite"], "--model", "null", "--quiet", "--out", str(run)]
    for _ in range(2):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert (out + err).strip().splitlines() == [
            f"harness: error: {run / 'samples.jsonl'} is a folder; a run folder's samples.jsonl "
            "must be a file (move it away, or use another --out folder)"
        ]
    assert (run / "samples.jsonl").is_dir() and sorted(p.name for p in run.iterdir()) == [
        "samples.jsonl"
    ]


# -- one line, stdout included ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ["false {port}", "no-such-server-program-xyz --port {port}"])
def test_a_server_that_cannot_start_is_one_line_under_quiet(world, tmp_path, capsys, command):
    argv = ["run", "--suite", world["suite"], "--quiet", "--out", str(tmp_path / "run")]
    argv += ["--serve", "custom", "--checkpoint", world["root"], "--serve-command", command]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = (out + err).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), lines
    assert "custom server" in lines[0]
