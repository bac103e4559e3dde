"""What a run writes: one ``Record`` per (sample, trial) (``records``; its shape,
checked field by field when read, in ``shapes``), the manifest
of everything that affects a number (``manifest``) and the run folder that holds
both (``run_store``).
"""
