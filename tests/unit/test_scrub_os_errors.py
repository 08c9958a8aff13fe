"""The scrubber leaves ordinary operating-system messages alone (``cannot read
/run/token: No such file or directory`` must keep its "No") and still removes real
secrets next to them."""

from __future__ import annotations

import errno
import os

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import tests.fuzzing  # noqa: F401  (registers and loads the profile)
from ktop.scrub import MASK, Secrets, scrub_shapes

pytestmark = pytest.mark.fuzz

STRERRORS = sorted({os.strerror(code) for code in errno.errorcode})
"""The message of every errno this system knows."""
SECRET_NAMES = ["token", "password", "client-key", "secret", "authorization", "api_key"]
"""File names that are also the names of secrets' keys."""
DIRS = st.lists(st.from_regex(r"[a-z][a-z0-9._-]{0,7}", fullmatch=True), min_size=1, max_size=3)


def test_missing_token_file_keeps_its_reason() -> None:
    # As the author saw it: the reason lost its first word.
    text = "cannot read /nonexistent/token: No such file or directory"
    assert scrub_shapes(text) == text
    assert Secrets().scrub(text) == text


@given(
    code=st.sampled_from(STRERRORS),
    dirs=DIRS,
    name=st.sampled_from(SECRET_NAMES),
    sep=st.sampled_from(["/", "\\"]),
)
def test_os_errors_pass_unchanged(code: str, dirs: list[str], name: str, sep: str) -> None:
    path = sep + sep.join([*dirs, name])
    text = f"tokenFile of user 'u' in /home/u/.kube/config: cannot read {path}: {code}"
    assert Secrets().scrub(text) == text


@given(
    code=st.sampled_from(STRERRORS),
    dirs=DIRS,
    name=st.sampled_from(SECRET_NAMES),
    secret=st.from_regex(r"[A-Za-z0-9]{8,24}", fullmatch=True),
)
def test_secrets_beside_os_errors_are_still_removed(
    code: str, dirs: list[str], name: str, secret: str
) -> None:
    path = "/" + "/".join([*dirs, name])
    assume(secret not in path and secret not in code)  # a known value is masked anywhere
    known = Secrets()
    known.add(secret)
    for text in (
        f"cannot read {path}: {code}; token: {secret}",
        f"cannot read {path}: {code} (Authorization: Bearer {secret})",
        f"cannot read {path}: {code} at https://admin:{secret}@10.0.0.1:6443/x?token={secret}",
    ):
        for scrubbed in (scrub_shapes(text), known.scrub(text)):
            assert secret not in scrubbed and MASK in scrubbed
            assert f"cannot read {path}: {code}" in scrubbed
