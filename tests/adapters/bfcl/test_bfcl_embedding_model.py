"""memory_vector's embedding model from the bundled package, laid out as a hub cache."""

import importlib.util
import json
import os

import pytest

from harness.adapters.bfcl import embedding_model


def _fake_model(folder):
    folder.mkdir(parents=True)
    (folder / "modules.json").write_text(json.dumps([{"idx": 0, "type": "x"}]))
    (folder / "config.json").write_text("{}")
    return folder


def test_hub_cache_layout_resolves_the_bundled_files(tmp_path):
    files = _fake_model(tmp_path / "bundle" / "model")
    cache = embedding_model.lay_out_hub_cache(tmp_path / "cache", files)
    entry = cache / "models--sentence-transformers--all-MiniLM-L6-v2"
    snapshot = (entry / "refs" / "main").read_text()
    assert (entry / "snapshots" / snapshot / "modules.json").read_text() == (
        files / "modules.json"
    ).read_text()
    # Idempotent, and a moved bundle replaces the old link.
    embedding_model.lay_out_hub_cache(cache, files)
    moved = _fake_model(tmp_path / "other" / "model")
    (moved / "config.json").write_text('{"moved": true}')
    embedding_model.lay_out_hub_cache(cache, moved)
    assert (entry / "snapshots" / snapshot / "config.json").read_text() == '{"moved": true}'


@pytest.mark.skipif(
    importlib.util.find_spec("huggingface_hub") is None, reason="needs huggingface_hub"
)
def test_hub_client_finds_the_model_offline(tmp_path):
    from huggingface_hub import try_to_load_from_cache

    files = _fake_model(tmp_path / "bundle" / "model")
    cache = embedding_model.lay_out_hub_cache(tmp_path / "cache", files)
    found = try_to_load_from_cache(embedding_model.HUB_REPO, "modules.json", cache_dir=cache)
    assert isinstance(found, str) and json.loads(open(found).read())[0]["type"] == "x"


def test_user_cache_choice_is_kept(tmp_path, monkeypatch):
    files = _fake_model(tmp_path / "bundle" / "model")
    monkeypatch.setattr(embedding_model, "bundled_model_files", lambda: files)
    monkeypatch.setenv(embedding_model.CACHE_VARIABLE, "/somewhere/else")
    assert embedding_model.use_bundled_model(tmp_path / "cache") is False
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv(embedding_model.CACHE_VARIABLE)
    assert embedding_model.use_bundled_model(tmp_path / "cache") is True
    assert os.environ[embedding_model.CACHE_VARIABLE] == str(tmp_path / "cache")
    monkeypatch.setattr(embedding_model, "bundled_model_files", lambda: None)
    monkeypatch.delenv(embedding_model.CACHE_VARIABLE)
    assert embedding_model.use_bundled_model(tmp_path / "cache2") is False


@pytest.mark.skipif(
    importlib.util.find_spec(embedding_model.BUNDLE_PACKAGE) is None,
    reason="needs the extra memory-vector",
)
def test_installed_bundle_is_found():
    files = embedding_model.bundled_model_files()
    assert files is not None and (files / "model.safetensors").is_file()
