"""Subcommands of the harness command line that live in modules of their own."""
