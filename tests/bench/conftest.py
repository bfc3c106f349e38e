"""Benchmarks are scripts run by hand (see their --help), never collected as tests."""

collect_ignore_glob = ["*.py"]
