"""Model clients: everything that turns a conversation into an assistant turn."""
