"""The scripted BFCL model behind the end-to-end parity script and the official
runners' bench (scripts/bfcl_scripted_model.py) answers every entry."""

from __future__ import annotations

import sys

from support import REPO

sys.path.insert(0, str(REPO / "scripts"))

from bfcl_scripted_model import ScriptedModel, first_user_message, view_of  # noqa: E402

from harness.adapters.bfcl.data import load_entries  # noqa: E402


def test_an_irrelevance_entry_that_offers_no_function_gets_an_answer():
    # live_irrelevance holds entries with an empty function list; indexing the
    # first function made the server answer them with HTTP 500.
    empty = [entry for entry in load_entries("live_irrelevance") if not entry.functions]
    assert empty
    model = ScriptedModel(["live_irrelevance"])
    for entry in empty:
        view = view_of([{"role": "user", "content": first_user_message(entry)}], [])
        reply = model.reply(view)
        assert reply.calls == [] and reply.text
