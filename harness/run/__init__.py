"""One suite run: the plan and the runner (``runner``) over a pool of workers
(``worker_pool``), the model clients of every role (``clients``), what a run did
(``run_counts``), its progress bar, the context-window check before it starts
(``context_fit``), scoring of its stored trajectories (``scoring``), and the
merge of its shards into one run folder (``merge``).
"""
