"""pytest configuration for benchmarks/: never collect the harness's working files.

benchmarks/work/ holds generated sites and `git archive` exports of older
commits (--ours-commit), whose own tests must not be collected from here.
"""
collect_ignore = ["work"]
