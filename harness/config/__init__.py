"""What one run is asked to do: ``RunConfig`` and ``ServeConfig`` (``run_config``),
the shard of a run's work (``shard``), suites (``suites``), where benchmark data
lives (``data_dirs``) and the checks of command-line values (``validate``).
"""
