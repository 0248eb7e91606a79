"""Importing the sandbox changes nothing in moto; starting a sandbox applies the patches."""

from __future__ import annotations

import json
import subprocess
import sys

from dzlineage_dagster.sandbox.moto_patches import MOTO_PATCHES

# Run in a fresh interpreter: this test session has started sandboxes already.
PROBE = """
import importlib, json, pkgutil, sys
patches = [(p["module"], p["attribute"]) for p in json.loads(sys.argv[1])]

def value(module, attribute):
    owner = importlib.import_module(module)
    for name in attribute.split("."):
        owner = getattr(owner, name)
    return owner if isinstance(owner, (int, str)) else owner.__qualname__

def values():
    return [value(m, a) for m, a in patches]

shipped = values()
import dzlineage_dagster.sandbox as sandbox
imported = sorted(
    info.name for info in pkgutil.walk_packages(sandbox.__path__, "dzlineage_dagster.sandbox.")
)
for name in imported:
    importlib.import_module(name)
after_import = values()

from dzlineage_dagster.sandbox.server.app import Sandbox
with Sandbox():
    started = values()
with Sandbox():
    started_twice = values()
print(json.dumps({"imported": imported, "shipped": shipped, "after_import": after_import,
                  "started": started, "started_twice": started_twice}))
"""


def test_importing_every_sandbox_module_leaves_moto_as_shipped():
    patches = [{"module": p.module, "attribute": p.attribute} for p in MOTO_PATCHES]
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(patches)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert "dzlineage_dagster.sandbox.moto_patches.gaps" in seen["imported"]
    assert "dzlineage_dagster.sandbox.commands" in seen["imported"]
    assert seen["after_import"] == seen["shipped"]
    wanted = [
        p.value if isinstance(p.value, (int, str)) else p.value.__qualname__ for p in MOTO_PATCHES
    ]
    for shipped, patched in zip(seen["shipped"], wanted, strict=True):
        assert shipped != patched, "moto already ships AWS's value: drop the patch"
    assert seen["started"] == wanted
    assert seen["started_twice"] == wanted


def test_the_glue_limits_raise_the_accounts_schema_version_cap_and_a_reset_restores_it(sandbox):
    import pytest
    from botocore.exceptions import ClientError

    def schema_with_versions(glue, name: str, versions: int) -> None:
        glue.create_schema(
            RegistryId={"RegistryName": "r"},
            SchemaName=name,
            DataFormat="AVRO",
            Compatibility="NONE",
            SchemaDefinition=json.dumps({"type": "record", "name": "v0", "fields": []}),
        )
        for version in range(1, versions):
            glue.register_schema_version(
                SchemaId={"RegistryName": "r", "SchemaName": name},
                SchemaDefinition=json.dumps(
                    {"type": "record", "name": f"v{version}", "fields": []}
                ),
            )

    sandbox.control.reset()
    sandbox.control.set_glue_limits(schemas=10, schema_versions=2)
    glue = sandbox.client("glue")
    glue.create_registry(RegistryName="r")
    schema_with_versions(glue, "a", 2)
    with pytest.raises(ClientError) as refused:
        schema_with_versions(glue, "b", 2)
    assert refused.value.response["Error"]["Code"] == "ResourceNumberLimitExceededException"

    sandbox.control.reset()
    glue.create_registry(RegistryName="r")
    schema_with_versions(glue, "a", 3)
