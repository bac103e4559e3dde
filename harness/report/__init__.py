"""Results rendered for people: leaderboards in every format (``leaderboard``),
comparison tables (``compare``), figures (``plots``), a paper's table, appendix
and run labels (``paper_table``, ``appendix``, ``labels``), and the self-contained
HTML report (``html``, its sample store ``samples`` and its ``assets``).
Only the commands use it.
"""
