"""VitaBench: life-service agent tasks (delivery, in-store, travel, cross-domain)
with an LLM user simulator and a sliding-window rubric judge."""

from .adapter import VitaBenchAdapter

__all__ = ["VitaBenchAdapter"]
