"""Test-time strategies: how a model is driven through one sample."""
