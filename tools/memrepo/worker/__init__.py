"""Offline work off the hook path: the job queue, the detached worker, bootstrap, the sweep.

May import: the standard library, `memrepo.errors`, `memrepo.proc`, and the layers below
(`base` … `importers`). `jobs` and `bootstrap` are imported by hooks: they load the heavier
layers only inside the worker process, never at import time.
"""
