"""Test-time strategies: how a model is driven through one sample.

``plain`` (the benchmark as published) and the research strategies
(``rehearsal``, ``self_consistency``) all end with the committed episode
(``committed``), which runs the episode loop (harness/episode/) with each
strategy's layers around it; ``registry`` turns ``--strategy`` values into them.
"""
