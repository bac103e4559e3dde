"""Where the jobs of a sweep run: one after another here (local), or on a Ray cluster."""
