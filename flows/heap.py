"""Prefect loaded, its heap set aside from the cyclic garbage collector, and the collector paced for a run.

Every flow module imports this module before its own: Prefect makes over 100,000 objects that live as long
as the process. Once they exist they are moved out of the collector's sight (:func:`gc.freeze`), so every
full collection while the flow's own modules load, and while the run works, walks only what came after,
not Prefect's heap again: about a third of a second less to import a flow module, in a run's process (whose
engine loaded Prefect first) and in a fresh interpreter alike. The package itself imports nothing, so the
command line reading a request model loads no Prefect.

While the flow's own modules load, the youngest generation is collected only after
:data:`LOADING_THRESHOLD` new container objects: what a module makes (classes, functions, models) lives as
long as the process, so a collection among them frees nothing. A flow module makes 68,000-84,000 such
objects; at the run's pace (below) their collections took 10-20 ms of every import. When the run begins
(:func:`settle`, which :func:`flows.runs.begin_run` calls), what the modules made is set aside as Prefect's
heap was, and the youngest generation is then collected after :data:`YOUNG_THRESHOLD` new container objects
instead of CPython's 700 (the older generations keep their pace): a run makes objects by the hundred
thousand (rows, models, Prefect's states and events), nearly all freed by reference counting, so most of
those collections found nothing to free. A run of 10,000 addresses spent about 70 ms in 150 collections,
now about 13 ms in 7; one of 40, about 23 ms in 23, now 5 ms. A run's process is short-lived and its cycles
are few and small, so what waits longer for a collection is little.
"""

import gc

import prefect.main  # noqa: F401  (what ``from prefect import flow`` loads)

LOADING_THRESHOLD = 200_000
YOUNG_THRESHOLD = 10_000

gc.freeze()
_young, *_older = gc.get_threshold()
_run_pace = (max(_young, YOUNG_THRESHOLD), *_older)
_settled = False
if _young < LOADING_THRESHOLD:
    gc.set_threshold(LOADING_THRESHOLD, *_older)


def settle() -> None:
    """The flow's modules loaded and its run begun: set aside what the modules made, and collect the youngest
    generation at the run's pace from now on. Only the process's first call does anything: a process that
    runs several flows (tests, a benchmark) sets aside its modules once, not each run's leftovers."""
    global _settled
    if _settled:
        return
    _settled = True
    gc.freeze()
    gc.set_threshold(*_run_pace)
