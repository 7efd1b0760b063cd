"""Tools that only read a crawl directory: reports, plots, exports.

They never write into the crawl they read and never touch the network, so
they are safe on a finished, a running and a killed crawl alike. The crawl
engine (the rest of controller/) never imports them; controller/cli.py is
where the two meet.
"""

# What the command line offers `crawler report` and `crawler export`, here so
# that controller/cli.py offers it without loading either reader (a crawl's
# start would pay for them).
REPORT_FORMATS = ("text", "markdown", "json")
TOP_LINKS = 10   # pages listed by in-links and by out-links
EXPORT_FORMATS = ("jsonl", "parquet")
