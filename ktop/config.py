"""The user's configuration directory and ``config.toml``: defaults for command-line options.

The directory is the platform's (``platformdirs``): ``~/.config/ktop`` on Linux,
``~/Library/Application Support/ktop`` on macOS, ``%APPDATA%\\ktop`` on Windows;
``KTOP_CONFIG_DIR`` overrides it. ``config.toml`` holds one key per long option
(``theme = "ktop-light"``, ``refresh = 2``, ``rack-label = "..."``); user themes
live in its ``themes/`` subdirectory.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from platformdirs import user_config_dir

from ktop.files import CONFIG, FileRefusedError, read_text_bounded
from ktop.scrub import scrub_shapes
from ktop.structured import InputRefusedError, load_toml

APP_NAME = "ktop"
CONFIG_FILE = "config.toml"
ENV_CONFIG_DIR = "KTOP_CONFIG_DIR"


class ConfigError(ValueError):
    """A configuration file that cannot be used; the message names the file and the key.

    The message is scrubbed as it is made (it may quote a value, such as a URL with a
    password in its user information), of the shapes of secrets only: the config file is
    read as the command line is parsed, before any credential is.
    """

    def __init__(self, message: str) -> None:
        super().__init__(scrub_shapes(message))


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The directory that holds ``config.toml`` and user ``themes/``."""
    env = os.environ if environ is None else environ
    override = env.get(ENV_CONFIG_DIR)
    return Path(override) if override else Path(user_config_dir(APP_NAME, appauthor=False))


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where ``config.toml`` is read from."""
    return config_dir(environ) / CONFIG_FILE


def user_themes_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where user themes (``*.toml``) are picked up from."""
    return config_dir(environ) / "themes"


@dataclass(frozen=True, slots=True)
class Config:
    """Option defaults read from a file: ``dest`` name -> raw TOML value."""

    path: Path | None
    values: Mapping[str, Any]


def read_config(path: Path) -> Config:
    """Read ``path``; a missing file is an empty config, a broken one a :class:`ConfigError`."""
    try:
        text = read_text_bounded(path, CONFIG)
    except (FileNotFoundError, NotADirectoryError):
        return Config(None, {})
    except FileRefusedError as exc:
        raise ConfigError(str(exc)) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        data = load_toml(text, str(path))
    except InputRefusedError as exc:
        raise ConfigError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    values: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            raise ConfigError(f"{path}: {key}: tables are not options; write `{key} = value`")
        values[key.replace("-", "_")] = value
    return Config(path, values)
