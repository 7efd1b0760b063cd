"""`python smallsieve.py crawler-args...`: the crawler with a tiny sieve (a
buffer of 8 URLs, a RAM run of 32), so a small test site spills the URL-seen
set to disk many times and every lookup path of urlfilter/sieve.py runs in a
real crawl."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import urlfilter.sieve as sieve  # noqa: E402
from controller.cli import main  # noqa: E402

sieve.BUFFER_SIZE, sieve.RUN_SIZE = 8, 32
sys.exit(main(sys.argv[1:]))
