"""The engine: how a graph runs, one step at a time (docs/architecture.md §4-§6).

``graph`` declares nodes, edges and pause kinds; ``runtime`` admits, executes
and commits a step; ``context`` is what a node sees; ``effects`` journals what
a step did outside the trace; ``pause_kinds`` says what a pause asks and
``waits`` owns the pause and resume protocol (the approval record, committing a
pause, checking a decision, resuming, the customer wait). ``tools``,
``bindings`` and ``guards`` bound what a model's answer may do.
"""
