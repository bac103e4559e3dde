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
