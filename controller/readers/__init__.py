"""Tools that only read a crawl directory: reports, plots, exports.

They never write into the crawl they read and never touch the network, so
they are safe on a finished, a running and a killed crawl alike. The crawl
engine (the rest of controller/) never imports them; controller/cli.py is
where the two meet.
"""
