"""TextFilter + GetURLs: HTML text in, readable text, title and raw links out.

Pure: nothing here opens a socket or a file, and nothing imports the other
crawler packages; resolving and normalising the links is URL_Filter's job.

    parse(html, base_url, extractor="bs4") -> Parsed
    extract_links(html, extractor="bs4") -> (<base href> or None, links)
    EXTRACTORS: extractor name -> function(html) -> (<base href> or None, links)

parse(..., "bs4") reads everything from one BeautifulSoup tree (the readable
reference); parse(..., "lxml") reads everything from one lxml tree, five to
ten times faster, with the same answers (fast.py says how, and when it hands
a page back to the reference).

What else a page's text is used for, each in its own module:
    maintext.main_text(html) -> the main content block only (--text main)
    fingerprint.text_md5 / body_md5 / simhash -> a page's fingerprints
    duplicates.ContentSeen -> the crawl's memory of page contents (exact, near)
    extract.Extraction -> --extract patterns (CSS or XPath) applied to a page
    robotsmeta -> robots directives (<meta name="robots">, X-Robots-Tag) and
        <meta http-equiv="refresh"> read as the HTML Standard reads it
"""
from textfilter.links import EXTRACTORS, extract_links
from textfilter.parse import parse
from textfilter.parsed import Parsed

__all__ = ["EXTRACTORS", "Parsed", "extract_links", "parse"]
