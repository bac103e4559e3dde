"""VitaBench's estimate of an episode's model calls in a row (the run starts the
longest first): from the task's rubrics, the requirements its conversation meets."""

from __future__ import annotations

from harness.adapters.vitabench import VitaBenchAdapter


def test_the_estimate_grows_with_the_rubrics(shared_data):
    adapter = VitaBenchAdapter()
    data_dir = shared_data / "vitabench"
    samples = adapter.load("delivery", data_dir=data_dir, options={"language": "en"})
    samples += adapter.load("instore", data_dir=data_dir, options={"language": "en"})
    for sample in samples:
        rubrics = sample.metadata["num_rubrics"]
        assert adapter.expected_model_calls(sample) == 4 + 2 * rubrics
    # Instore tasks name more requirements than delivery ones: they start first.
    mean = {
        scenario: sum(adapter.expected_model_calls(s) for s in group) / len(group)
        for scenario in ("delivery", "instore")
        if (group := [s for s in samples if s.subset == scenario])
    }
    assert mean["instore"] > mean["delivery"]
