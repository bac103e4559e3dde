"""Every tau2 test starts with no replay outcome kept from another test's transcripts."""

import pytest

from harness.adapters.tau2 import replay_memo


@pytest.fixture(autouse=True)
def no_kept_replays():
    replay_memo.clear()
    yield
    replay_memo.clear()
