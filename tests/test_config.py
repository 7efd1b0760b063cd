"""CrawlConfig checks itself: every field's type, range or choice, the User-Agent
rule, the patterns, and the seeds, which it normalizes as links are."""
import dataclasses
from pathlib import Path

import pytest

from controller.config import (DEFAULT_USER_AGENT, RANGES, ConfigError, CrawlConfig,
                               user_agent_problem)
from urlfilter import normalize


def config(**settings):
    return CrawlConfig(**{"seeds": ("http://127.0.0.1:8000/",), "out": Path("out"), **settings})


@pytest.mark.parametrize("settings, words", [
    (dict(content_dedup="bogus"), "content_dedup: 'bogus' is not one of off, exact, near"),
    (dict(text_mode="all"), "text_mode: 'all' is not one of plain, main"),
    (dict(scope="planet"), "scope: 'planet' is not one of host, domain, any"),
    (dict(dedup="list"), "dedup: 'list' is not one of "),
    (dict(extractor="html5lib"), "extractor: 'html5lib' is not one of bs4, lxml, regex"),
    (dict(max_pages=-5), "max_pages: must be an integer >= 0, not -5"),
    (dict(max_depth=2.5), "max_depth: must be an integer >= 0, not 2.5"),
    (dict(max_pages="10"), "max_pages: must be an integer >= 0, not '10'"),
    (dict(workers=0), "workers: must be an integer >= 1, not 0"),
    (dict(workers=True), "workers: must be an integer >= 1, not True"),
    (dict(per_host=0), "per_host: must be an integer >= 1"),
    (dict(max_bytes=0), "max_bytes: must be an integer >= 1"),
    (dict(delay=-0.5), "delay: must be a number >= 0, not -0.5"),
    (dict(delay=float("nan")), "delay: must be a number >= 0, not nan"),
    (dict(timeout=0), "timeout: must be a number > 0, not 0"),
    (dict(bloom_error=0), "bloom_error: must be a number strictly between 0 and 1, not 0"),
    (dict(bloom_error=1.0), "bloom_error: must be a number strictly between 0 and 1, not 1.0"),
    (dict(simhash_distance=9), "simhash_distance: must be an integer between 0 and 8, not 9"),
    (dict(simhash_distance=-1), "simhash_distance: must be an integer between 0 and 8, not -1"),
    (dict(warc=1), "warc: must be True or False, not 1"),
    (dict(extract_from=None), "extract_from: must be a string, not None"),
    (dict(include="a|b"), "include: must be a list or tuple of strings, not 'a|b'"),
    (dict(include=("(",)), "include: '(' is not a valid regular expression"),
    (dict(exclude=["[a-"]), "exclude: '[a-' is not a valid regular expression"),
    (dict(extract=("t=css:h1",), extract_from="(unclosed"), "extract_from: '(unclosed' is not a valid"),
    (dict(drop_params=("a=b",)), "--drop-param 'a=b': give a parameter name only"),
    (dict(extract=("title",)), "extract: extraction pattern 'title' has no '='"),
    (dict(extract=("t=css:h1[",)), "extract: "),
    (dict(extract_jsonl=True), "extract: nothing is extracted, so extract_jsonl would do nothing"),
    (dict(out=3), "out: must be a path (str or pathlib.Path), not 3"),
    (dict(seeds=()), "seeds: none given"),
    (dict(seeds="http://a/"), "seeds: must be a list or tuple of strings"),
    (dict(seeds=("ftp://example.org/",)), "seeds: 'ftp://example.org/' is not an http(s) URL"),
    (dict(seeds=("example.org",)), "did you mean http://example.org/ ?"),
    (dict(seeds=("http:///only-a-path",)), "seeds: 'http:///only-a-path' has no host after 'http://'"),
    (dict(seeds=("http:/a/b",)), "seeds: 'http:/a/b' has no '//' after 'http:'"),
    (dict(sitemap_urls=("http:///sitemap.xml",)), "--sitemap: 'http:///sitemap.xml' has no host after 'http://'"),
    (dict(user_agent=""), "user_agent: '' is empty"),
])
def test_a_bad_value_is_a_one_line_error_naming_the_field(settings, words):
    with pytest.raises(ConfigError) as caught:
        config(**settings)
    message = str(caught.value)
    assert words in message and "\n" not in message
    assert isinstance(caught.value, ValueError)


def test_every_number_field_has_a_range_and_its_default_is_in_it():
    numbers = [f.name for f in dataclasses.fields(CrawlConfig) if f.type in ("int", "float")]
    assert sorted(numbers) == sorted(RANGES)
    defaults = config()
    for name, rule in RANGES.items():
        assert rule.problem(getattr(defaults, name)) == "", name


def test_the_range_edges_are_accepted():
    edge = config(max_pages=0, max_depth=0, workers=1, processes=0, delay=0, timeout=0.001,
                  bloom_error=0.999, simhash_distance=8, max_seconds=0.0)
    assert (edge.max_pages, edge.simhash_distance, edge.timeout) == (0, 8, 0.001)
    assert config(simhash_distance=0, delay=2).delay == 2


def test_seeds_are_normalized_deduplicated_and_kept_in_order():
    made = config(seeds=["HTTP://127.0.0.1:8000", "http://b.example/x", "http://127.0.0.1:8000/",
                         "http://B.example:80/x#top"])
    assert made.seeds == ("http://127.0.0.1:8000/", "http://b.example/x")


def test_seeds_are_normalized_with_the_configs_own_url_flags():
    made = config(seeds=("http://www.example.org/a?utm_source=x&id=1",), fold_www=True,
                  drop_params=["utm_*"])
    assert made.seeds == ("http://example.org/a?id=1",)
    assert made.drop_params == ("utm_*",)
    assert config(seeds=("http://example.org/a?b=1",), drop_query=True).seeds == ("http://example.org/a",)


def test_normalizing_twice_changes_nothing():
    made = config(seeds=("HTTP://Example.ORG/a/../b/%7euser",))
    assert made.seeds == (normalize("HTTP://Example.ORG/a/../b/%7euser"),)
    assert dataclasses.replace(made) == made


def test_paths_and_lists_from_a_settings_file_are_made_into_path_and_tuples():
    made = config(out="some/dir", include=["/a/"], exclude=["/b/"], extract=["t=css:h1"],
                  extract_exclude=["css:div.ad"])
    assert made.out == Path("some/dir")
    assert (made.include, made.exclude, made.extract, made.extract_exclude) == \
        (("/a/",), ("/b/",), ("t=css:h1",), ("css:div.ad",))


@pytest.mark.parametrize("agent", [
    DEFAULT_USER_AGENT, "bfs-crawler/0.1 (+url)", "mybot", "mybot/1.0", "my_bot-2/1.0",
    "bot (+https://example.org/bot)",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "curl/8.5.0", "a/1 b/2 c/3",
])
def test_these_user_agents_are_accepted(agent):
    assert user_agent_problem(agent) == ""
    assert config(user_agent=agent).user_agent == agent


@pytest.mark.parametrize("agent, words", [
    ("", "is empty"),
    ("   ", "is empty"),
    ("bot\n", "one line of printable ASCII"),
    ("bot/1.0\r\nX-Evil: 1", "one line of printable ASCII"),
    ("bot/1.0\t(x)", "one line of printable ASCII"),
    ("bøt/1.0", "one line of printable ASCII"),
    (" bot/1.0", "leading or trailing spaces"),
    ("bot/1.0 ", "leading or trailing spaces"),
    ("a b/1", "reads as a name with a space"),
    ("my bot", "write the name as one token (my-bot)"),
    ("bot/", "does not begin with a product"),
    ("/1.0", "does not begin with a product"),
    ("bot/1.0(x)", "does not begin with a product"),
    ("b(o)t/1", "does not begin with a product"),
    ("2bot/1", "must start with a letter"),
])
def test_these_user_agents_are_refused_with_the_reason(agent, words):
    assert words in user_agent_problem(agent)
    with pytest.raises(ConfigError, match="^user_agent: "):
        config(user_agent=agent)


def test_two_spellings_of_one_seed_are_fetched_once(tmp_path, serve):
    from controller.engine import Crawl
    with serve(lambda request: (200, {"Content-Type": "text/html"}, b"<p>home</p>")) as (url, log):
        shouting = url.replace("http://", "HTTP://").rstrip("/")
        made = CrawlConfig(seeds=(shouting, url), out=tmp_path / "out", obey_robots=False,
                           delay=0, processes=0, progress=False)
        stats = Crawl(made).run()
        assert [r.path for r in log.snapshot()] == ["/"]
    assert stats["urls"] == 1
