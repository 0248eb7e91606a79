"""What `pip install dzlineage-dagster` brings, and the one name of the code location."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import tomllib
import yaml

from dzlineage_dagster.sandbox.commands import CODE_LOCATION_NAME, DEFINITIONS_MODULE

ROOT = Path(__file__).resolve().parents[1]
#: What a wheel build reads (the rest of the worktree stays out of the build's way).
BUILD_INPUTS = ("pyproject.toml", "setup.cfg", "README.md", "dzlineage_dagster")

LOAD_DEFINITIONS = """
import importlib.util
from dagster import Definitions
from dzlineage_dagster.definitions import code_location, defs
Definitions.validate_loadable(defs)
jobs = defs.resolve_all_job_defs()
# The whole code location, the defs folder's components found through the package's dg.toml.
location = code_location()
checks = {key.name for key in location.get_repository_def().asset_checks_defs_by_key}
assert "platform_graph_is_current" in checks, checks
present = [m for m in ("moto", "werkzeug", "dagster_webserver") if importlib.util.find_spec(m)]
assert not present, f"installed without extras, yet importable: {present}"
print("loaded", len(jobs), "jobs")
"""


def test_the_wheel_without_extras_loads_the_definitions_and_names_the_sandbox_extra(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name)
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--quiet"]
    run(*pip, "wheel", "--no-deps", "--wheel-dir", str(wheels), str(source))
    (wheel,) = wheels.glob("dzlineage_dagster-*.whl")

    fresh = tmp_path / "fresh"
    # This interpreter's pip installs into the new environment (no ensurepip), and compiles no
    # bytecode there up front: the test imports a fraction of what it installs.
    venv.create(fresh, with_pip=False)
    python, dzlineage = fresh / "bin" / "python", fresh / "bin" / "dzlineage"
    run(*pip, "--python", str(python), "install", "--no-compile", str(wheel))

    assert "loaded" in run(str(python), "-c", LOAD_DEFINITIONS, cwd=tmp_path).stdout
    assert "DZLINEAGE_DOMAIN_ID" in run(str(dzlineage), "settings", cwd=tmp_path).stdout
    for command in ("sandbox", "demo"):
        refused = subprocess.run(
            [str(dzlineage), command], capture_output=True, text=True, cwd=tmp_path, timeout=60
        )
        assert refused.returncode != 0
        (line,) = refused.stderr.strip().splitlines()
        assert line.startswith(f"dzlineage {command}: needs the 'sandbox' extra"), line
        assert "pip install 'dzlineage-dagster[sandbox]'" in line


def run(*command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=600)
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}\n{result.stderr}"
    return result


def test_the_code_location_has_one_name_everywhere_it_is_declared():
    dagster = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["dagster"]
    assert dagster == {"module_name": DEFINITIONS_MODULE, "code_location_name": CODE_LOCATION_NAME}
    (location,) = yaml.safe_load((ROOT / "dagster_cloud.yaml").read_text())["locations"]
    assert location["location_name"] == CODE_LOCATION_NAME
    assert location["code_source"] == {"module_name": DEFINITIONS_MODULE}
    (workspace,) = yaml.safe_load((ROOT / "workspace.yaml").read_text())["load_from"]
    assert workspace["python_module"] == {
        "module_name": DEFINITIONS_MODULE,
        "location_name": CODE_LOCATION_NAME,
    }
    dg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["dg"]
    assert dg["project"]["code_location_target_module"] == DEFINITIONS_MODULE
    assert dg["project"]["code_location_name"] == CODE_LOCATION_NAME
    # The installed package's own dg config says the same.
    assert tomllib.loads((ROOT / "dzlineage_dagster" / "dg.toml").read_text()) == dg
