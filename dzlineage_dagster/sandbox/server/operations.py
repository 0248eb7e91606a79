"""Who answers each operation of a service: moto, moto patched, one of our emulators, or nobody.

Read from the routing tables the server itself uses, never written down by hand: the emulators'
operation tables (:data:`~dzlineage_dagster.sandbox.server.app.EMULATOR_FACTORIES`), the patch
registry (:data:`~dzlineage_dagster.sandbox.moto_patches.gaps.GAP_HANDLERS`) and moto's own
dispatch (a moto service answers an operation when the response class its URL map routes to has
the operation's snake_case method, which is how moto's ``call_action`` picks it). The botocore
model of the service gives the full list of operations, so the unanswered ones are named too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Any

from moto.backend_index import backend_url_patterns
from moto.core.utils import camelcase_to_underscores, get_service_model, method_names_from_class

from dzlineage_dagster.sandbox.moto_patches.gaps import GAP_HANDLERS

MOTO = "moto"
MOTO_PATCHED = "moto-patched"
EMULATOR = "emulator"

#: The services the project calls; ``GET /_sandbox/operations`` details these by default.
PROJECT_SERVICES = ("datazone", "glue", "kafka", "kafkaconnect", "ssm", "sts")


def moto_services() -> list[str]:
    """Every service moto serves (its backend index), by moto's name for it."""
    return sorted({name for name, _ in backend_url_patterns})


def moto_operations(service: str) -> set[str]:
    """The operations of ``service`` that moto's own dispatch answers (empty when moto has none)."""
    try:
        urls = importlib.import_module(f"moto.{service}.urls")
    except ModuleNotFoundError:
        return set()
    response_classes = {getattr(view, "__self__", None) for view in urls.url_paths.values()} - {
        None
    }
    methods = {name for cls in response_classes for name in method_names_from_class(cls)}
    return {
        operation
        for operation in get_service_model(service).operation_names
        if camelcase_to_underscores(operation) in methods
    }


def operations_of(
    service: str, emulator_operations: Callable[[str], Iterable[str] | None]
) -> dict[str, Any]:
    """``{"operations": {name: who answers}, "unanswered": [...]}`` for one service.

    ``emulator_operations(service)`` gives an emulator's operation table, or None when no
    emulator plays the service (then moto answers, patched where the registry says so).
    """
    model_operations = get_service_model(service).operation_names
    emulated = emulator_operations(service)
    if emulated is not None:
        answered = dict.fromkeys(sorted(emulated), EMULATOR)
    else:
        patched = {operation for svc, operation in GAP_HANDLERS if svc == service}
        answered = {
            operation: MOTO_PATCHED if operation in patched else MOTO
            for operation in sorted(moto_operations(service) | patched)
        }
    return {
        "operations": answered,
        "unanswered": sorted(set(model_operations) - set(answered)),
    }
