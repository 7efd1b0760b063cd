"""Which CA bundle verifies TLS certificates, and whether it can be used.

A CA bundle named by the environment (REQUESTS_CA_BUNDLE, say) is checked
before a crawl writes anything, so that a bad one is a usage error, not an
error on every https page. Checking means loading it as OpenSSL will: about
150 certificates, 20-35 ms here. OpenSSL lets go of the GIL meanwhile, so
``check_ahead`` starts that check on a thread of its own while the crawler's
modules are still loading, and ``problem`` waits for its answer.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Mapping

CA_BUNDLE_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE")

_lock = threading.Lock()
_checks: dict[str, tuple[threading.Event, list[str]]] = {}   # path -> (done, [problem])


def tls_verification(check_certificate: bool, ca_certificate: str,
                     environ: Mapping[str, str]) -> bool | str:
    """What the session verifies TLS certificates with: False (not at all),
    a CA bundle's path (``--ca-certificate``, else the first of
    CA_BUNDLE_VARIABLES set in ``environ``), or True (certifi's CAs)."""
    if not check_certificate:
        return False
    if ca_certificate:
        return ca_certificate
    for name in CA_BUNDLE_VARIABLES:
        if environ.get(name):
            return environ[name]
    return True


def check_ahead(environ: Mapping[str, str] = os.environ) -> None:
    """Start checking the environment's CA bundle, if it names one."""
    bundle = tls_verification(True, "", environ)
    if isinstance(bundle, str):
        _start(bundle, in_thread=True)


def problem(path: str) -> str:
    """What keeps ``path`` from being used as a CA bundle; "" if nothing.
    A check started ahead answers once; the next call checks again (the
    file may have been mended since)."""
    done, answer = _start(path, in_thread=False)
    done.wait()
    with _lock:
        _checks.pop(path, None)
    return answer[0]


def _start(path: str, in_thread: bool) -> tuple[threading.Event, list[str]]:
    with _lock:
        if path in _checks:
            return _checks[path]
        check = _checks[path] = (threading.Event(), [""])
    if in_thread:
        threading.Thread(target=_check, args=(path, *check), daemon=True,
                         name="ca-bundle-check").start()
    else:
        _check(path, *check)
    return check


def _check(path: str, done: threading.Event, answer: list[str]) -> None:
    import ssl   # not on the way to a crawl's first request when no bundle is named
    try:
        ssl.create_default_context(cafile=path)
    except ssl.SSLError:   # an OSError too: first
        answer[0] = f"{path!r} holds no PEM certificate; give a PEM file of CA certificates"
    except (OSError, ValueError) as exc:   # ValueError: a NUL in the path
        answer[0] = (f"{path!r} cannot be read ({getattr(exc, 'strerror', None) or exc}); "
                     f"give a PEM file of CA certificates")
    finally:
        done.set()
