"""FinMCP-Bench: financial tool calling over a recorded MCP server (DianJin/FinMCP-Bench)."""

from .adapter import FinMCPAdapter

__all__ = ["FinMCPAdapter"]
