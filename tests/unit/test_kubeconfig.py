"""Context resolution against real kubeconfig samples, with kubectl's merge rules."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ktop.scrub import Secrets
from ktop.sources.kubeconfig import KubeconfigError, load_context, resolve_context

FIXTURES = Path(__file__).parent.parent / "fixtures"
DOCS = FIXTURES / "kubeconfig_k8s-docs_config-demo_view.yaml"
JS = FIXTURES / "kubeconfig_k8s-client-js_testdata.yaml"


def test_current_context_is_used_when_none_is_given() -> None:
    ctx = resolve_context(str(JS), None, env={}, secrets=Secrets())
    assert (ctx.name, ctx.cluster, ctx.user, ctx.namespace) == (
        "context2",
        "cluster2",
        "user2",
        "namespace2",
    )
    assert ctx.server == "http://example2.com"


def test_named_context_and_default_namespace() -> None:
    ctx = resolve_context(str(JS), "context1", env={}, secrets=Secrets())
    assert (ctx.server, ctx.namespace) == ("http://example.com", "default")


def test_no_current_context_asks_for_one() -> None:
    with pytest.raises(KubeconfigError, match="no current context"):
        resolve_context(str(DOCS), None, env={}, secrets=Secrets())


def test_unknown_context_lists_the_known_ones() -> None:
    with pytest.raises(KubeconfigError) as err:
        resolve_context(str(DOCS), "prod-cell-a", env={}, secrets=Secrets())
    assert "'prod-cell-a' not found" in str(err.value)
    assert "dev-frontend, dev-storage, exp-test" in str(err.value)


def test_kubeconfig_env_merges_first_definition_wins() -> None:
    env = {"KUBECONFIG": f"{DOCS}:{JS}"}
    # DOCS sets current-context "" so the first non-empty one (JS) wins.
    assert resolve_context(None, None, env=env, secrets=Secrets()).name == "context2"
    assert resolve_context(None, "exp-test", env=env, secrets=Secrets()).server == "https://5.6.7.8"


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="no kubeconfig found"):
        resolve_context(str(tmp_path / "nope"), None, env={}, secrets=Secrets())


def test_invalid_yaml_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "config"
    bad.write_text("contexts: [unclosed")
    with pytest.raises(KubeconfigError, match="not valid YAML"):
        resolve_context(str(bad), None, env={}, secrets=Secrets())


def test_credentials_never_appear_in_the_result() -> None:
    ctx = resolve_context(str(JS), "passwd", env={}, secrets=Secrets())
    assert "bar" not in repr(ctx) and "VVNFUl" not in repr(ctx)


SECRET = "abcd1234efgh5678SEKRIT7f3a9c"


@pytest.mark.parametrize(
    "text",
    [
        # A tab before `token:` (the reported leak): PyYAML quotes the whole line.
        f"apiVersion: v1\nusers:\n- name: u\n  user:\n\ttoken: {SECRET}\n",
        f'users:\n- name: u\n  user:\n    token: "{SECRET}\n',
        f"users:\n- name: u\n  user: {{token: {SECRET}\n",
        f"users:\n- name: u\n  user:\n    token: {SECRET}\n   bad: [\n",
    ],
)
def test_yaml_error_never_quotes_the_document(tmp_path: Path, text: str) -> None:
    path = tmp_path / "leak.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(KubeconfigError) as info:
        resolve_context(str(path), None, env={}, secrets=Secrets())
    message = str(info.value)
    assert "not valid YAML" in message
    assert "line " in message
    assert SECRET not in message
    assert SECRET[:8] not in message
    # Nothing chained that a traceback printer could show either.
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__


def test_not_utf8_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("users:\n- name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(KubeconfigError, match="not UTF-8"):
        resolve_context(str(path), None, env={}, secrets=Secrets())


HEAD = "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n"
USER = "users: [{name: u, user: {token: t0k3n-abc}}]\n"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("contexts: {c: 1}\n", "'contexts' is a mapping, not a list"),
        ("users: hello\n", "'users' is a string, not a list"),
        ("clusters: [5]\n", "entry 1 of 'clusters' is not a mapping"),
        (HEAD + USER + "clusters: [{name: k, cluster: {}}]\n", "cluster 'k' is empty"),
        (HEAD + USER + "clusters: [{name: k}]\n", "cluster 'k' is empty"),
        (HEAD + USER + "clusters: [{name: k, cluster: {server: 'not a url'}}]\n", "not an http"),
        (HEAD + USER + "clusters: [{name: k, cluster: {server: 'https://h:99999'}}]\n", "port"),
        (
            HEAD + USER + "clusters: [{name: k, cluster: {server: 'https://h', "
            "certificate-authority-data: 'not base64!'}}]\n",
            "certificate-authority-data of cluster 'k' is not valid base64",
        ),
        (
            HEAD + "users: [{name: u, user: {token: 12}}]\n"
            "clusters: [{name: k, cluster: {server: 'https://h'}}]\n",
            "token of user 'u' is a number",
        ),
        (
            HEAD + "users: [{name: u, user: {exec: {command: x}}}]\n"
            "clusters: [{name: k, cluster: {server: 'https://h'}}]\n",
            "has no 'apiVersion'",
        ),
        (
            HEAD + "users: [{name: u, user: {exec: {command: x, apiVersion: v, env: [1]}}}]\n"
            "clusters: [{name: k, cluster: {server: 'https://h'}}]\n",
            "exec env of user 'u'",
        ),
        ("[" * 5000 + "]" * 5000, "kubeconfig"),
    ],
)
def test_malformed_kubeconfig_is_one_line(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    with pytest.raises(KubeconfigError) as info:
        load_context(str(path), None, env={}, secrets=Secrets())
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_a_process_substitution_pipe_is_read_once() -> None:
    # `ktop --kubeconfig <(vault read ...)`: the shell passes /dev/fd/N, an anonymous pipe.
    text = HEAD + USER + "clusters: [{name: k, cluster: {server: 'https://h:6443'}}]\n"
    r, w = os.pipe()

    def writer() -> None:
        with os.fdopen(w, "w") as f:
            f.write(text)

    t = threading.Thread(target=writer)
    t.start()
    try:
        resolved = load_context(f"/dev/fd/{r}", None, env={}, secrets=Secrets())
    finally:
        t.join(timeout=5)
        os.close(r)
    assert resolved.info.server == "https://h:6443"
    assert resolved.config["users"][0]["user"]["token"] == "t0k3n-abc"
    assert "t0k3n" not in repr(resolved)


def test_a_named_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(KubeconfigError, match=r"pipe.*FIFO.*not a regular file"):
        load_context(str(fifo), None, env={}, secrets=Secrets())


def test_relative_files_are_relative_to_the_kubeconfig(tmp_path: Path) -> None:
    path = tmp_path / "dir" / "config"
    path.parent.mkdir()
    key = tmp_path / "abs" / "c.key"
    key.parent.mkdir()
    for f in (path.parent / "ca.crt", path.parent / "c.crt", key):
        f.write_text("-----BEGIN X-----\n")
    path.write_text(
        HEAD + f"users: [{{name: u, user: {{client-certificate: c.crt, client-key: {key}}}}}]\n"
        "clusters: [{name: k, cluster: {server: 'https://h', certificate-authority: ca.crt}}]\n"
    )
    cfg = load_context(str(path), None, env={}, secrets=Secrets()).config
    assert cfg["clusters"][0]["cluster"]["certificate-authority"] == str(path.parent / "ca.crt")
    assert cfg["users"][0]["user"]["client-certificate"] == str(path.parent / "c.crt")
    assert cfg["users"][0]["user"]["client-key"] == str(key)


def test_a_named_file_that_is_missing_is_named(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(
        HEAD + USER + "clusters: [{name: k, cluster: {server: 'https://h', "
        "certificate-authority: gone.crt}}]\n"
    )
    with pytest.raises(KubeconfigError, match=r"certificate-authority of cluster 'k'.*gone\.crt"):
        load_context(str(path), None, env={}, secrets=Secrets())


def test_a_huge_kubeconfig_is_refused(tmp_path: Path) -> None:
    from ktop.sources.kubeconfig import MAX_KUBECONFIG_BYTES

    path = tmp_path / "config"
    path.write_bytes(b"#" * (MAX_KUBECONFIG_BYTES + 10))
    with pytest.raises(
        KubeconfigError, match=f"over the limit of {MAX_KUBECONFIG_BYTES // 2**20} MiB"
    ):
        load_context(str(path), None, env={}, secrets=Secrets())
