"""Seeds from files (-i FILE, -i -), options from a TOML file (--config), and
`crawler config DIR`, which writes a crawl's settings back as such a file."""
import json
import subprocess
import sys

import pytest

from demosite import Response

PAGES = {"/": b'<a href="/a">a</a><a href="/b">b</a>', "/a": b"<p>page a</p>", "/b": b"<p>page b</p>"}


def site(request):
    if request.path in PAGES:
        return Response(200, {"Content-Type": "text/html"}, b"<html><body>" + PAGES[request.path]
                        + f"<h1>{request.path}</h1></body></html>".encode())
    return Response(404, {"Content-Type": "text/plain"}, b"")


def crawler(*args, cwd, stdin=None):
    return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                          text=True, timeout=60, cwd=cwd, input=stdin)


def settings(directory):
    return json.loads((directory / "state" / "settings.json").read_text(encoding="utf-8"))


@pytest.fixture
def url(serve):
    with serve(site) as (base, log):
        yield base


def test_seeds_from_a_file_and_from_standard_input_are_merged_with_the_command_line(url, tmp_path):
    (tmp_path / "seeds.txt").write_text(f"# the course's seeds\n\n{url}a\n   {url}b#top  \n")
    done = crawler("crawl", url, "-i", "seeds.txt", "-i", "-", "--out", "o", "--delay", "0",
                   "--max-depth", "0", "-q", cwd=tmp_path, stdin=f"{url}\n# again\n")
    assert done.returncode == 0, done.stderr
    assert settings(tmp_path / "o")["seeds"] == [url, url + "a", url + "b"]


def test_a_bad_seed_line_names_the_file_and_line_and_writes_nothing(tmp_path):
    (tmp_path / "seeds.txt").write_text("http://127.0.0.1:9/\n\nftp://example.org/\n")
    done = crawler("crawl", "-i", "seeds.txt", "--out", "o", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "-i seeds.txt line 3: 'ftp://example.org/' is not an http(s) URL" in done.stderr
    assert not (tmp_path / "o").exists()


def test_a_config_file_sets_seeds_and_limits_and_the_command_line_wins(url, tmp_path):
    (tmp_path / "course.toml").write_text(
        f'seeds = ["{url}"]\nmax-depth = 1\nmax-pages = 2\ndelay = 0\nquiet = true\n'
        f'user-agent = "course-bot/1.0"\ndrop-param = ["utm_*"]\nignore-robots = true\n')
    done = crawler("crawl", "--config", "course.toml", "--out", "o", "--max-pages", "3",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    saved = settings(tmp_path / "o")
    assert (saved["seeds"], saved["max_depth"], saved["max_pages"], saved["delay"]) == \
        ([url], 1, 3, 0.0)
    assert (saved["user_agent"], saved["drop_params"], saved["obey_robots"]) == \
        ("course-bot/1.0", ["utm_*"], False)


@pytest.mark.parametrize("text, words", [
    ("max-dept = 2\n", "unknown key 'max-dept'"),
    ("max-depth = -2\n", "max-depth = -2: -2 is not in the range"),
    ("scope = 'planet'\n", "scope = 'planet'"),
    ("seeds = 'http://x/'\n", "seeds must be a list of URLs"),
    ("max-depth = \n", "not valid TOML"),
    ("resume = true\n", "unknown key 'resume'"),
])
def test_a_bad_config_file_is_one_line_naming_file_and_key(tmp_path, text, words):
    (tmp_path / "bad.toml").write_text(text)
    done = crawler("crawl", "http://127.0.0.1:9/", "--config", "bad.toml", "--out", "o",
                   cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--config bad.toml: " in done.stderr and words in done.stderr
    assert not (tmp_path / "o").exists()


def test_crawler_config_round_trips_a_crawls_settings(url, tmp_path):
    first = crawler("crawl", url, "--out", "one", "--max-depth", "1", "--delay", "0",
                    "--workers", "3", "--exclude", "/b$", "--text", "main", "--extract",
                    "title=css:h1", "--content-dedup", "near", "--ignore-robots", "-q", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    exported = crawler("config", "one", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    (tmp_path / "again.toml").write_text(exported.stdout)
    again = crawler("crawl", "--config", "again.toml", "--out", "two", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    one, two = settings(tmp_path / "one"), settings(tmp_path / "two")
    assert {k: v for k, v in one.items() if k != "out"} == {k: v for k, v in two.items() if k != "out"}


def test_resume_keeps_a_config_files_values(url, tmp_path):
    (tmp_path / "c.toml").write_text(f'seeds = ["{url}"]\ndelay = 0\nmax-pages = 1\nquiet = true\n')
    assert crawler("crawl", "--config", "c.toml", "--out", "o", cwd=tmp_path).returncode == 0
    done = crawler("crawl", "--out", "o", "--resume", "--config", "c.toml", "--max-pages", "3",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    stats = json.loads((tmp_path / "o" / "stats.json").read_text(encoding="utf-8"))
    assert (stats["settings"]["max_pages"], stats["settings"]["delay"]) == (3, 0)
    assert len((tmp_path / "o" / "index.csv").read_text().splitlines()) == 4


def test_config_of_a_directory_without_a_crawl_is_one_line(tmp_path):
    done = crawler("config", "nothing-here", cwd=tmp_path)
    assert done.returncode == 2 and "settings.json cannot be read" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("seed, problem", [
    ("http:///only-a-path", "has no host after 'http://'"),
    ("https://:8443/x", "has no host after 'https://'"),
    ("http:/one-slash/x", "has no '//' after 'http:'"),
])
def test_a_seed_typed_without_a_host_is_a_usage_error_as_in_wget(tmp_path, seed, problem):
    done = crawler("crawl", seed, "--out", "o", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert f"{seed!r} {problem}" in done.stderr
    assert not (tmp_path / "o").exists()


def test_a_seed_without_a_host_is_refused_from_a_seed_file_and_a_config_file(tmp_path):
    (tmp_path / "seeds.txt").write_text("http://127.0.0.1:9/\nhttp:///only-a-path\n")
    done = crawler("crawl", "-i", "seeds.txt", "--out", "o", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "-i seeds.txt line 2: 'http:///only-a-path' has no host after 'http://'" in done.stderr
    (tmp_path / "c.toml").write_text('seeds = ["http:///only-a-path"]\n')
    done = crawler("crawl", "--config", "c.toml", "--out", "o", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "'http:///only-a-path' has no host after 'http://'" in done.stderr
    assert not (tmp_path / "o").exists()

def test_a_seed_with_a_password_in_it_is_refused_and_the_password_not_shown(tmp_path):
    """A seed is written to index.csv and the settings: a password in it
    would be too, so it is a usage error, and the line masks it."""
    for args in (["http://ana:s3cret-pw@127.0.0.1:9/"], ["-i", "seeds.txt"]):
        (tmp_path / "seeds.txt").write_text("http://ana:s3cret-pw@127.0.0.1:9/\n")
        done = crawler("crawl", *args, "--out", "o", cwd=tmp_path)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "'http://ana@127.0.0.1:9/' has a password in it" in done.stderr
        assert "--http-user" in done.stderr and "s3cret-pw" not in done.stderr
        assert not (tmp_path / "o").exists()
