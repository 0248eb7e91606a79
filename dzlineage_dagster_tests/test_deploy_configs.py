"""deploy/'s configurations for spreading runs out (docs/scaling-out.md), checked by the schemas of
the software that reads them, so that a wrong key fails here and not at deploy time: the ECS and
Kubernetes dagster.yaml by Dagster's instance schema and their coordinator's and launcher's
own config types, the Dagster+ dagster_cloud.yaml by dagster-cloud-cli's model, its container
contexts by dagster-aws's (and dagster-k8s's). An instance built from the file, but for its
storage and launcher, then dequeues a queue of scoped runs with Dagster's own run coordinator
daemon, to show the limits do what the files say."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from dagster import DagsterRunStatus
from dagster._config import process_config
from dagster._core.errors import DagsterInvalidConfigError
from dagster._core.instance.config import dagster_instance_config, get_concurrency_config
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.test_utils import (
    InProcessTestWorkspaceLoadTarget,
    create_run_for_test,
    create_test_daemon_workspace_context,
    instance_for_test,
)
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import (
    QueuedRunCoordinatorDaemon,
)
from dagster._serdes.config_class import class_from_code_pointer
from dagster_aws.ecs.container_context import EcsContainerContext
from dagster_cloud_cli.config.models import load_dagster_cloud_yaml

from dzlineage_dagster.core.scopes import SCOPE_TAG
from dzlineage_dagster.jobs import CATALOG_CHECKS_JOB, CATALOG_SYNC_JOB
from dzlineage_dagster_tests.test_packaging import CODE_LOCATION_NAME, DEFINITIONS_MODULE

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
ECS_INSTANCE = DEPLOY / "ecs" / "dagster.yaml"
K8S_INSTANCE = DEPLOY / "kubernetes" / "dagster.yaml"
DAGSTER_PLUS_LOCATIONS = DEPLOY / "dagster-plus" / "dagster_cloud.yaml"
DAGSTER_PLUS_SETTINGS = DEPLOY / "dagster-plus" / "deployment-settings.yaml"


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def check_configurable_class(section: dict) -> None:
    """A ``module``/``class``/``config`` entry of dagster.yaml names a class that exists, and
    its config passes that class's own config type."""
    configurable = class_from_code_pointer(section["module"], section["class"])
    result = process_config(configurable.config_type(), section.get("config") or {})
    if not result.success:
        raise DagsterInvalidConfigError(
            f"{section['class']}'s config", result.errors, section.get("config")
        )


@pytest.mark.parametrize("path", [ECS_INSTANCE, K8S_INSTANCE], ids=lambda p: p.parent.name)
def test_the_instance_files_pass_dagsters_instance_schema(path, tmp_path):
    shutil.copy(path, tmp_path / "dagster.yaml")
    config, custom_instance_class = dagster_instance_config(str(tmp_path))
    assert custom_instance_class is None
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"
    check_configurable_class(config["run_coordinator"])
    # The sync's runs ask for run retries (their dagster/max_retries tag); the instance must
    # enable them, and watch the run workers whose task or pod dies.
    assert config["run_retries"]["enabled"] is True
    assert config["run_monitoring"]["enabled"] is True


def test_the_ecs_launcher_config_passes_ecs_run_launchers_own_config_type():
    launcher = load(ECS_INSTANCE)["run_launcher"]
    assert launcher["class"] == "EcsRunLauncher"
    check_configurable_class(launcher)
    assert SCOPE_TAG in launcher["config"]["propagate_tags"]["allow_list"]


def test_the_kubernetes_launcher_config_passes_k8s_run_launchers_own_config_type():
    # dagster-k8s is no dependency of this project: checked where it is installed.
    pytest.importorskip("dagster_k8s")
    launcher = load(K8S_INSTANCE)["run_launcher"]
    assert launcher["class"] == "K8sRunLauncher"
    check_configurable_class(launcher)


def test_a_wrong_key_fails_the_checks(tmp_path):
    """The checks above can fail: a misspelt key of each kind is refused."""
    instance = load(ECS_INSTANCE)
    instance["concurrency"]["runs"]["tag_concurrency_limits"][0]["value"] = {
        "applyLimitPerUniqueValues": True
    }
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(instance))
    with pytest.raises(DagsterInvalidConfigError):
        dagster_instance_config(str(tmp_path))
    launcher = load(ECS_INSTANCE)["run_launcher"]
    launcher["config"]["run_resource"] = launcher["config"].pop("run_resources")
    with pytest.raises(DagsterInvalidConfigError, match="run_resource"):
        check_configurable_class(launcher)
    locations = load(DAGSTER_PLUS_LOCATIONS)
    locations["locations"][0]["agent_queues"] = locations["locations"][0].pop("agent_queue")
    with pytest.raises(ValueError, match="agent_queues"):
        load_dagster_cloud_yaml(yaml.safe_dump(locations))


def test_every_deployment_limits_runs_per_scope_alike():
    """One run queue policy, written where each kind of deployment reads it: the two
    instances' concurrency blocks and the Dagster+ deployment settings are the same, and the
    settings pass Dagster's schema for that block."""
    settings = load(DAGSTER_PLUS_SETTINGS)
    assert set(settings) == {"concurrency"}
    result = process_config(get_concurrency_config().config_type, settings["concurrency"])
    assert result.success, result.errors
    assert load(ECS_INSTANCE)["concurrency"] == settings["concurrency"]
    assert load(K8S_INSTANCE)["concurrency"] == settings["concurrency"]


def test_the_dagster_plus_location_is_the_repositorys_with_an_agent_queue_and_run_sizes():
    shipped = load_dagster_cloud_yaml((ROOT / "dagster_cloud.yaml").read_text())
    routed = load_dagster_cloud_yaml(DAGSTER_PLUS_LOCATIONS.read_text())
    (location,) = routed.locations
    assert location.agent_queue
    assert location.model_dump(exclude={"agent_queue", "container_context"}) == (
        shipped.locations[0].model_dump(exclude={"agent_queue", "container_context"})
    )
    context = location.container_context or {}
    ecs = EcsContainerContext.create_from_config(context)
    assert ecs.run_resources == load(ECS_INSTANCE)["run_launcher"]["config"]["run_resources"]
    k8s_resources = context["k8s"]["run_k8s_config"]["container_config"]["resources"]
    assert k8s_resources == load(K8S_INSTANCE)["run_launcher"]["config"]["resources"]


def test_the_dagster_plus_kubernetes_context_passes_dagster_k8s_own_schema():
    pytest.importorskip("dagster_k8s")
    from dagster_k8s.container_context import K8sContainerContext

    (location,) = load_dagster_cloud_yaml(DAGSTER_PLUS_LOCATIONS.read_text()).locations
    K8sContainerContext.create_from_config(location.container_context)


def _tag_limit(limits: list[dict], *, per_value: bool) -> int:
    (limit,) = (
        entry["limit"]
        for entry in limits
        if entry["key"] == SCOPE_TAG and isinstance(entry.get("value"), dict) == per_value
    )
    return limit


def test_the_run_queue_launches_one_run_per_scope_and_bounds_the_scopes_together():
    """Dagster's own QueuedRunCoordinatorDaemon, on an instance built from the ECS file (its
    storage and launcher swapped for a test's), dequeues queued runs of the code location's
    jobs as the limits say: at most the per-scope limit of each scope's catalog_sync runs, at
    most the all-scopes limit of them together, and the unscoped runs (the checks) beside them
    up to the overall limit."""
    instance_config = load(ECS_INSTANCE)
    limits = instance_config["concurrency"]["runs"]["tag_concurrency_limits"]
    per_scope = _tag_limit(limits, per_value=True)
    all_scopes = _tag_limit(limits, per_value=False)
    overall = instance_config["concurrency"]["runs"]["max_concurrent_runs"]
    scopes = [f"scope-{n}" for n in range(all_scopes + 2)]
    unscoped = overall - all_scopes - 1
    assert per_scope < all_scopes < all_scopes + unscoped < overall
    overrides = {
        key: value
        for key, value in instance_config.items()
        if key not in ("storage", "run_launcher")
    }
    overrides["run_launcher"] = {"module": "dagster._core.test_utils", "class": "MockedRunLauncher"}
    location = InProcessTestWorkspaceLoadTarget(
        InProcessCodeLocationOrigin(
            LoadableTargetOrigin(module_name=DEFINITIONS_MODULE, working_directory=str(ROOT)),
            location_name=CODE_LOCATION_NAME,
        )
    )
    with (
        instance_for_test(overrides=overrides) as instance,
        create_test_daemon_workspace_context(location, instance) as context,
    ):
        repository = (
            context.create_request_context()
            .get_code_location(CODE_LOCATION_NAME)
            .get_repository("__repository__")
        )

        def queue(job_name: str, tags: dict[str, str]) -> None:
            job = repository.get_full_job(job_name)
            create_run_for_test(
                instance,
                job_name=job_name,
                remote_job_origin=job.get_remote_origin(),
                job_code_origin=job.get_python_origin(),
                status=DagsterRunStatus.QUEUED,
                tags=tags,
            )

        def dequeue() -> list:
            list(QueuedRunCoordinatorDaemon(interval_seconds=1).run_iteration(context))
            return list(instance.run_launcher.queue())

        for _ in range(per_scope + 2):
            for scope in scopes:
                queue(CATALOG_SYNC_JOB.name, {SCOPE_TAG: scope})
        for _ in range(unscoped):
            queue(CATALOG_CHECKS_JOB.name, {})
        launched = dequeue()
        per_scope_launched = Counter(run.tags.get(SCOPE_TAG) for run in launched)
        assert per_scope_launched.pop(None) == unscoped
        assert sum(per_scope_launched.values()) == all_scopes
        assert set(per_scope_launched.values()) == {per_scope}
        # First in, first out: the first scopes got their runs, the later ones wait.
        assert set(per_scope_launched) == set(scopes[: all_scopes // per_scope])

        # A finished run's place goes to the scope that has waited longest, not to the
        # finished scope's next run: a scope's backlog does not hold the others back.
        instance.report_run_failed(instance.get_run_by_id(launched[0].run_id))
        (next_run,) = dequeue()[len(launched) :]
        assert next_run.tags[SCOPE_TAG] == scopes[all_scopes // per_scope]
