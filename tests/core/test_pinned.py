"""Files of an official checkout verified by git blob id (harness.boundary.pinned)."""

from __future__ import annotations

import subprocess

from harness.boundary.pinned import blob_id, first_difference


def test_the_blob_ids_are_gits(tmp_path):
    sample = tmp_path / "f.txt"
    sample.write_bytes(b"tau\n\x00binary")
    expected = subprocess.run(
        ["git", "hash-object", str(sample)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert blob_id(sample) == expected


def test_the_first_missing_or_different_file_is_named(tmp_path):
    (tmp_path / "a").write_text("one")
    (tmp_path / "b").write_text("two")
    pinned = [("a", blob_id(tmp_path / "a")), ("b", blob_id(tmp_path / "b")), ("c", "0" * 40)]
    assert first_difference(tmp_path, pinned[:2]) is None
    assert first_difference(tmp_path, pinned) == "c is missing"
    (tmp_path / "b").write_text("two!")
    assert first_difference(tmp_path, pinned) == "b differs"


def test_a_closed_folder_holds_the_listed_files_and_nothing_else(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "task_001.json").write_text("{}")
    pinned = [("tasks/task_001.json", blob_id(folder / "task_001.json"))]
    assert first_difference(tmp_path, pinned, ["tasks"]) is None
    (folder / "task_000.json").write_text('{"id": "evil_000"}')
    assert first_difference(tmp_path, pinned, ["tasks"]) == (
        "tasks/task_000.json is not part of the release (an extra file)"
    )
    assert first_difference(tmp_path, pinned) is None  # an open folder: only the listed files


def test_a_large_file_is_hashed_without_reading_it_whole(tmp_path):
    import tracemalloc

    large = tmp_path / "large.bin"
    with large.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of zeros, written at once
        handle.seek(-4, 2)
        handle.write(b"tail")
    expected = subprocess.run(
        ["git", "hash-object", str(large)], capture_output=True, text=True, check=True
    ).stdout.strip()
    tracemalloc.start()
    try:
        assert blob_id(large) == expected
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak:,} bytes"
