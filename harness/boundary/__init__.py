"""Where untrusted input and outside effects meet the harness.

Values from models, tools and files made safe to keep (``sanitise``) and to show
on a terminal (``terminal``), ``ast.parse`` behind one lock (``threadsafe_ast``),
tool code within a time budget (``tool_budget``), deadlines inside a task
(``deadline``), SIGTERM handled like Ctrl-C (``interrupts``) and files of an
official checkout verified (``pinned``), every file written whole or not at
all (``atomic``), and tool calls and results read by their schemas (``tool_checks``). Nothing here imports the rest of the harness.
"""
