"""The episode: the loop every benchmark and strategy runs through (``loop``), the
attempts a benchmark's own runner would run again (``attempts``), and the tap that
lets an environment see the actor's conversation (``tap``)."""
