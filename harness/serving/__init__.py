"""Serving a checkpoint for a run: ``harness run --serve vllm --checkpoint PATH``.

One concept per module:

- ``specs``: a ``ServerSpec`` (one subclass per server kind) turns a checkpoint and
  its settings (tool-call parser, reasoning parser, LoRA adapters, parallelism,
  extra arguments) into a command line, and says what identifies the model it
  serves.
- ``process``: a ``ManagedServer`` runs such a command as a child process on a
  free port of 127.0.0.1 and stops it on every way out of its ``with`` block.
- ``checkpoints``: short names and training steps of checkpoints.
- ``client``: the client of a server the run started, known by what it serves.
- ``plan``: what ``harness run`` sees of all this: its ``--serve`` flags and the
  ``EndpointPlan``.

A managed server is known by what it serves, not by its URL: the port changes
on every start, so the manifest (which must match to resume a run) and the
response cache identify its replies by server kind, checkpoint and parsers.
"""
