"""The benchmark harness of issue 5: our crawler against Scrapy and wget on a generated site.

Not part of the installed distribution. Run it from the repository root:
    .venv/bin/python -m benchmarks.run --help
See benchmarks/README.md.
"""
