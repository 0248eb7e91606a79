"""What every command that talks to AWS shares: the errors that stop it, and the scopes it
works in (``DZLINEAGE_SCOPES``, docs/many-registries.md)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.scopes import SCOPES_VARIABLE, ScopeConfig, in_scope_terms, read_scopes
from dzlineage_dagster.settings import (
    InvalidSettings,
    LineageSettings,
    MissingSettings,
    aws_side_options,
)
from dzlineage_dagster.sync.errors import SyncError, describe_error

#: What stops a command before it can answer: settings, AWS access.
SETUP_ERRORS = (MissingSettings, InvalidSettings, SyncError, ClientError, BotoCoreError)
T = TypeVar("T")


def add_scope_option(command: argparse.ArgumentParser, what: str) -> None:
    """``--scope NAME`` (repeatable): the scopes of ``DZLINEAGE_SCOPES`` a command works in."""
    command.add_argument(
        "--scope",
        action="append",
        dest="scopes",
        metavar="NAME",
        help=f"with {SCOPES_VARIABLE} set: {what} only in this scope (repeatable; default: "
        "every scope)",
    )


def selected_scopes(
    names: list[str] | None, environ: Mapping[str, str] | None = None
) -> list[ScopeConfig] | None:
    """The scopes a command works in: every scope of ``DZLINEAGE_SCOPES``, or those ``names``
    (``--scope``) picks, in their order; None when no scopes are configured (the settings' one
    registry). :class:`InvalidSettings` names a wrong document's scope, or a name that is no
    scope together with the scopes there are."""
    scopes = read_scopes(os.environ if environ is None else environ)
    if not scopes:
        if names:
            raise InvalidSettings(
                [
                    f"--scope {names[0]}: {SCOPES_VARIABLE} is not set, so there are no scopes "
                    "(the DZLINEAGE_* settings name one registry)"
                ]
            )
        return None
    if not names:
        return scopes
    by_name = {scope.name: scope for scope in scopes}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise InvalidSettings(
            [
                f"--scope {name}: no such scope in {SCOPES_VARIABLE}; its scopes: "
                f"{', '.join(by_name)}"
                for name in unknown
            ]
        )
    return [by_name[name] for name in dict.fromkeys(names)]


def scope_settings(
    scope: ScopeConfig | None, environ: Mapping[str, str] | None = None
) -> tuple[LineageSettings, dict[str, dict[str, Any]]]:
    """The settings and each side's AWS options as ``scope`` sees them (None: the environment's
    own): its settings over the deployment's, its Region and role on the data side."""
    environ = os.environ if environ is None else environ
    scoped = scope.environ(environ) if scope is not None else environ
    settings = LineageSettings.from_env(scoped)
    options = aws_side_options(scoped)
    return settings, (scope.side_options(options) if scope is not None else options)


def in_each_scope(
    scopes: list[ScopeConfig] | None,
    attempt: Callable[[ScopeConfig | None], T],
    errors: tuple[type[Exception], ...] = SETUP_ERRORS,
) -> tuple[list[tuple[ScopeConfig | None, T]], list[ScopeFailure]]:
    """``attempt`` in each scope (``None``: once, in the settings' one registry, its errors
    raised as ever): what each scope answered, and each scope whose attempt raised one of
    ``errors``, so one broken scope does not hide the others' answers."""
    if scopes is None:
        return [(None, attempt(None))], []
    answers, failures = [], []
    for scope in scopes:
        try:
            answers.append((scope, attempt(scope)))
        except errors as error:
            failures.append(ScopeFailure(scope, error))
    return answers, failures


@dataclass(frozen=True)
class ScopeFailure:
    scope: ScopeConfig
    error: Exception

    def __str__(self) -> str:
        """The error, naming the scope, in its terms."""
        return f"scope {self.scope.name}: {in_scope_terms(self.scope, describe_error(self.error))}"
