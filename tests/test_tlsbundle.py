"""The environment's CA bundle, checked on a thread while the crawler loads
(getpage/tlsbundle.py): the answer is the one a check in line gives, and a
bundle mended since is read again."""
import shutil

import certifi

from getpage import tlsbundle


def test_a_check_started_ahead_answers_as_one_in_line_and_once(tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate\n")
    tlsbundle.check_ahead({"CURL_CA_BUNDLE": str(bundle), "SSL_CERT_FILE": "/nonexistent"})
    assert tlsbundle.problem(str(bundle)) == \
        f"{str(bundle)!r} holds no PEM certificate; give a PEM file of CA certificates"
    shutil.copy(certifi.where(), bundle)   # mended: read again, not the answer kept
    assert tlsbundle.problem(str(bundle)) == ""


def test_an_unreadable_bundle_and_which_variable_names_it(tmp_path):
    missing = str(tmp_path / "missing.pem")
    tlsbundle.check_ahead({"REQUESTS_CA_BUNDLE": missing})
    assert tlsbundle.problem(missing).startswith(f"{missing!r} cannot be read (")
    named = {"SSL_CERT_FILE": "c", "CURL_CA_BUNDLE": "b", "REQUESTS_CA_BUNDLE": "a"}
    assert tlsbundle.tls_verification(True, "", named) == "a"   # requests' own variable first
    assert tlsbundle.tls_verification(True, "", {}) is True      # none: certifi's CAs
