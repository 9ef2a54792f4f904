"""The runtime of a run: its settings, the clients of the APIs it calls, its task runner and its record, built
once where a flow starts (:class:`runtime.run.Run`) and handed down. The composition root of postflows: the
layer between the flows, which only orchestrate, and the tasks, which only do one step."""
