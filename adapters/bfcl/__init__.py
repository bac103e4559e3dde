"""BFCL-v4 (Berkeley Function-Calling Leaderboard) behind the harness task interface."""

from .adapter import BFCLAdapter
from .export import export_bfcl

__all__ = ["BFCLAdapter", "export_bfcl"]
