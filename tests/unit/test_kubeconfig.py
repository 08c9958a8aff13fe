"""Context resolution against real kubeconfig samples, with kubectl's merge rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from ktop.sources.kubeconfig import KubeconfigError, resolve_context

FIXTURES = Path(__file__).parent.parent / "fixtures"
DOCS = FIXTURES / "kubeconfig_k8s-docs_config-demo_view.yaml"
JS = FIXTURES / "kubeconfig_k8s-client-js_testdata.yaml"


def test_current_context_is_used_when_none_is_given() -> None:
    ctx = resolve_context(str(JS), None, env={})
    assert (ctx.name, ctx.cluster, ctx.user, ctx.namespace) == (
        "context2",
        "cluster2",
        "user2",
        "namespace2",
    )
    assert ctx.server == "http://example2.com"


def test_named_context_and_default_namespace() -> None:
    ctx = resolve_context(str(JS), "context1", env={})
    assert (ctx.server, ctx.namespace) == ("http://example.com", "default")


def test_no_current_context_asks_for_one() -> None:
    with pytest.raises(KubeconfigError, match="no current context"):
        resolve_context(str(DOCS), None, env={})


def test_unknown_context_lists_the_known_ones() -> None:
    with pytest.raises(KubeconfigError) as err:
        resolve_context(str(DOCS), "prod-cell-a", env={})
    assert "'prod-cell-a' not found" in str(err.value)
    assert "dev-frontend, dev-storage, exp-test" in str(err.value)


def test_kubeconfig_env_merges_first_definition_wins() -> None:
    env = {"KUBECONFIG": f"{DOCS}:{JS}"}
    # DOCS sets current-context "" so the first non-empty one (JS) wins.
    assert resolve_context(None, None, env=env).name == "context2"
    assert resolve_context(None, "exp-test", env=env).server == "https://5.6.7.8"


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match="no kubeconfig found"):
        resolve_context(str(tmp_path / "nope"), None, env={})


def test_invalid_yaml_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "config"
    bad.write_text("contexts: [unclosed")
    with pytest.raises(KubeconfigError, match="not valid YAML"):
        resolve_context(str(bad), None, env={})


def test_credentials_never_appear_in_the_result() -> None:
    ctx = resolve_context(str(JS), "passwd", env={})
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
        resolve_context(str(path), None, env={})
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
        resolve_context(str(path), None, env={})
