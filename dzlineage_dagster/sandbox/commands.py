"""The ``dzlineage sandbox`` and ``dzlineage demo`` commands.

The product's CLI (:mod:`dzlineage_dagster.cli`) reaches them through :func:`run`, lazily: this
module imports nothing outside the standard library until a command runs, so it can say which
extra is missing instead of failing on an import.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from dzlineage_dagster.sandbox.server.ambiguities import CHOICES

#: The code location the demo serves; pyproject's [tool.dagster] and dagster_cloud.yaml say the
#: same (a test holds them to it).
DEFINITIONS_MODULE = "dzlineage_dagster.definitions"
CODE_LOCATION_NAME = "dzlineage_dagster"
#: The demo's second code location: a team's asset downstream of a CDC table (by its key).
DOWNSTREAM_MODULE = "dzlineage_dagster.sandbox.demo.downstream"
DOWNSTREAM_LOCATION = "shop_analytics"
#: Where `dzlineage demo` writes its environment unless told otherwise: not ./.env, which
#: `dagster dev` would load, but a file a second shell can `source`.
DEMO_ENV_FILE = ".dzlineage-demo.env"
EXTRA = "sandbox"
#: Warnings the demo's own choices cause, silenced in every Dagster process it starts (as
#: ``PYTHONWARNINGS`` message prefixes, so no process imports dagster just to filter them):
#: `dagster dev -w` is how the demo serves its workspace of two code locations (`dg dev` serves
#: one project), and the sensor names its owner, a parameter Dagster calls beta.
OWN_WARNINGS = (
    "ignore:Function `dev_command` is superseded",
    "ignore:Parameter `owners` of initializer `SensorDefinition.__init__` is currently in beta",
    # Dagster's own repository code re-wraps the asset checks of merged Definitions (the
    # platform graph component's) with a beta parameter.
    "ignore:Parameter `execution_type` of function `AssetsDefinition.__init__` is currently in beta",
    # connector_topology is observed (read from the connectors), with Dagster's decorator for it.
    "ignore:Function `multi_observable_source_asset` is currently in beta",
    # schema_change_is_compatible is checked per topic: a partitioned check, in preview.
    "ignore:Specifying a partitions_def on an AssetCheckSpec is currently in preview",
)
#: What each command imports beyond the product: the modules the `sandbox` extra installs.
NEEDED_MODULES = {
    "sandbox": ("moto", "werkzeug"),
    "demo": ("moto", "werkzeug", "dagster_webserver"),
}


def missing_extra(command: str) -> str | None:
    """One line naming the extra to install when a module ``command`` needs is absent."""
    missing = [name for name in NEEDED_MODULES[command] if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"dzlineage {command}: needs the '{EXTRA}' extra ({', '.join(missing)} missing): "
        f"pip install 'dzlineage-dagster[{EXTRA}]'"
    )


def add_sandbox_options(parser: argparse.ArgumentParser, default_port: int = 4566) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    parser.add_argument(
        "--port", type=int, default=default_port, help=f"port to listen on (default {default_port})"
    )
    parser.add_argument(
        "--latency",
        default="0",
        metavar="MS|aws",
        help="service time of every call: milliseconds, or 'aws' for a per-operation model "
        "(reads tens of ms, writes more; see docs/sandbox.md). Default 0",
    )
    parser.add_argument(
        "--quotas",
        default="off",
        metavar="off|aws|RATES|FILE.json",
        help="answer calls over per-account rates with ThrottlingException: 'aws' = the "
        "product's pacing table (DataZone 20 TPS for CreateAsset, Search, ...), or figures of "
        "your own, independent of it ('datazone.CreateAsset=10,ssm.GetParameters=40' or a JSON "
        "file of them), which the sandbox's Service Quotas API reports too; GET "
        "/_sandbox/quotas lists them",
    )
    parser.add_argument(
        "--lineage-processing-seconds",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="how long DataZone takes to process an accepted lineage event, as on AWS where "
        "PostLineageEvent is asynchronous (default 0: nodes appear at once)",
    )
    parser.add_argument(
        "--glue-lineage-processing-seconds",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="how long the Glue Data Catalog takes to process a lineage event (PostLineageEvent, "
        "and the lineage of a CreateTable), as on AWS where it is asynchronous (default 0)",
    )
    parser.add_argument(
        "--listing-processing-seconds",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="how long DataZone takes to publish an asset to the catalog, as on AWS where a "
        "listing is CREATING before it is ACTIVE (default 0: listed at once)",
    )
    parser.add_argument(
        "--ownership-transfer-seconds",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="how long DataZone takes to move an asset to another project (UpdateAssetOwner), "
        "as on AWS where the transfer is IN_PROGRESS before it SUCCEEDED (default 0: at once)",
    )
    parser.add_argument(
        "--type-recreation",
        choices=CHOICES["type_recreation"],
        default="revision",
        help="CreateFormType/CreateAssetType with an existing name and a changed model: "
        "'revision' makes a new revision (CloudFormation's reading, default), 'conflict' "
        "answers ConflictException (the API reference's reading)",
    )
    parser.add_argument(
        "--schema-updated-time",
        choices=CHOICES["schema_updated_time"],
        default="moves",
        help="whether the registry's UpdatedTime (ListSchemas, GetSchema) moves when a version "
        "is registered or deleted: 'moves' (default) or 'frozen' (AWS documents neither)",
    )
    parser.add_argument(
        "--search-lag-seconds",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="how long DataZone's Search takes to see an asset's creation or revision "
        "(default 0; AWS documents no bound: docs/sandbox.md)",
    )
    parser.add_argument(
        "--lineage-conflict",
        choices=CHOICES["lineage_conflict"],
        default="duplicate",
        help="what a 409 from PostLineageEvent means: 'duplicate' (default) the token's event "
        "is held already, 'other' a conflict that stored nothing (the first post of each "
        "event is refused so; AWS documents only 'a conflict')",
    )
    parser.add_argument(
        "--accounts",
        choices=("one", "two"),
        default="one",
        help="'two' seeds the data side (registry, Glue catalog, MSK, MSK Connect) in account "
        "111111111111 and DataZone in account 222222222222, and prints both sides' role "
        "variables (DZLINEAGE_DATA_ROLE_ARN, DZLINEAGE_GOVERNANCE_ROLE_ARN, their external "
        "ids); a call with the wrong side's credentials then fails as on AWS (default 'one')",
    )
    parser.add_argument(
        "--scopes",
        choices=("one", "two"),
        default="one",
        help="'two' also seeds a second CDC platform (billing: its own MSK cluster, registry, "
        "connectors, Glue database and, with --change-queue, change queue) in account "
        "333333333333 and eu-west-1, reached by its own role, and prints DZLINEAGE_SCOPES "
        "naming both scopes, which share the one DataZone domain (docs/many-registries.md; "
        "default 'one')",
    )
    parser.add_argument(
        "--domain-version",
        choices=("V1", "V2"),
        default="V1",
        help="the seeded DataZone domain: 'V1' (default) or 'V2', an Amazon SageMaker Unified "
        "Studio domain, whose authorization policies the demo's project is granted "
        "(docs/sagemaker-unified-studio.md)",
    )
    parser.add_argument(
        "--glue-node-naming",
        choices=CHOICES["glue_node_naming"],
        default="documented",
        help="which lineage node a dataset named with OpenLineage's Glue naming lands on: "
        "'documented' (default) <namespace>/<name> as DataZone's guide reads, 'colon-join' "
        "the table's ARN (no AWS document says so)",
    )
    parser.add_argument(
        "--glue-lineage-repost",
        choices=CHOICES["glue_lineage_repost"],
        default="same-run",
        help="what Glue's PostLineageEvent (no client token) does with an event posted again: "
        "'same-run' (default) nothing, the run is its job's and run id's; 'new-event' it is one "
        "more event of the run (AWS documents neither)",
    )
    parser.add_argument(
        "--run-event-merge",
        choices=CHOICES["run_event_merge"],
        default="merge",
        help="what a job run's lineage node shows when its events name different datasets: "
        "'merge' (default) all of them, 'latest' only its latest event's (AWS documents neither)",
    )
    parser.add_argument(
        "--node-schema",
        choices=CHOICES["node_schema"],
        default="last-writer",
        help="which schema a dataset lineage node shows when several events gave it one: "
        "'last-writer' (default), 'first-writer' or 'merged' (AWS documents none)",
    )
    parser.add_argument(
        "--change-queue",
        action="store_true",
        help="also create the EventBridge rules and the SQS queue of the platform's changes "
        "(what deploy/change-events.yaml creates on AWS) and print DZLINEAGE_CHANGE_QUEUE_URL: "
        "change_queue_sensor then syncs each change as its event arrives (docs/change-events.md)",
    )
    seeding = parser.add_mutually_exclusive_group()
    seeding.add_argument(
        "--empty", action="store_true", help="start with no resources (no demo platform)"
    )
    seeding.add_argument(
        "--seed",
        type=Path,
        metavar="FILE",
        help="platform file to seed from (default: the bundled demo CDC platform; copy "
        "dzlineage_dagster/sandbox/demo/demo_platform.yaml to start your own)",
    )


def build_parser(command: str) -> argparse.ArgumentParser:
    """The options of ``dzlineage sandbox`` or ``dzlineage demo``."""
    if command == "sandbox":
        parser = argparse.ArgumentParser(
            prog="dzlineage sandbox",
            description="Serve one local HTTP endpoint that plays AWS (Glue, SSM, MSK, STS "
            "through moto; DataZone and MSK Connect through the project's emulators), seeded "
            "with the demo CDC platform, and print the AWS_* and DZLINEAGE_* variables that "
            "point the project at it. Admin paths under /_sandbox/ read the call log, inject "
            "faults and list who answers which operation (/_sandbox/operations).",
        )
        add_sandbox_options(parser)
        parser.add_argument(
            "--env-file",
            metavar="PATH",
            help="also write the environment to PATH as `export` lines (a shell can `source` "
            "it; Dagster reads ./.env)",
        )
        return parser
    parser = argparse.ArgumentParser(
        prog="dzlineage demo",
        description="Start the seeded sandbox and `dagster dev` with its environment; the "
        "registry sensor then syncs every demo topic into DataZone, and the change queue "
        "sensor each later change as its CloudTrail event arrives. The sandbox's environment "
        "is printed and written to a file a second shell can `source`.",
    )
    add_sandbox_options(parser)
    # The demo runs on events, as a deployment at scale does (docs/change-events.md).
    parser.set_defaults(change_queue=True)
    parser.add_argument(
        "--no-change-queue",
        dest="change_queue",
        action="store_false",
        help="no change queue: the registry sensor lists the registry every minute instead",
    )
    parser.add_argument(
        "--env-file",
        metavar="PATH",
        default=DEMO_ENV_FILE,
        help=f"where to write the environment as `export` lines (default ./{DEMO_ENV_FILE}); "
        "removed when the demo stops",
    )
    parser.add_argument("--dagster-host", default="127.0.0.1", help="address of the Dagster UI")
    parser.add_argument("--dagster-port", type=int, default=3000, help="port of the Dagster UI")
    parser.add_argument(
        "--dagster-home",
        metavar="DIR",
        help="DAGSTER_HOME to use (default: a fresh temporary folder, as the sandbox is fresh, "
        "removed when the demo stops)",
    )
    return parser


def run(command: str, argv: Sequence[str]) -> int:
    """Parse ``argv`` for ``command`` and run it; Ctrl-C and SIGTERM stop it quietly."""
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if args.empty and args.scopes == "two":
        parser.error("--scopes two seeds a second platform beside the first; --empty seeds none")
    problem = missing_extra(command)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    # SIGTERM (a service manager, `kill`) stops the command the way Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    # A shell starts a background job (`scripts/demo &`, nohup) with SIGINT ignored, and an
    # ignored signal stays ignored across exec: `dagster dev`, which also answers SIGTERM with
    # its SIGINT handler, could then only be killed. Only an explicit `kill -INT` reaches a
    # background job, so answering SIGINT again changes nothing at the terminal.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return cmd_sandbox(args) if command == "sandbox" else cmd_demo(args)
    except KeyboardInterrupt:  # during start-up, before a command waits for it
        return 130


def export_lines(environment: dict[str, str]) -> str:
    """``export NAME=value`` lines: a shell can source them and dotenv readers accept them."""
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in environment.items())


def _seconds(text: str) -> float:
    """A command-line number of seconds, >= 0."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0")
    return seconds


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def _start_sandbox(args: argparse.Namespace) -> tuple[object, dict[str, str]]:
    """Serve the sandbox on the given address, seeded unless --empty; returns its environment."""
    from dzlineage_dagster.sandbox.demo.seed import seed_platform
    from dzlineage_dagster.sandbox.server.app import Sandbox
    from dzlineage_dagster.sandbox.server.control import SandboxControl, sandbox_environment
    from dzlineage_dagster.sandbox.server.pacing import Latency, Quotas

    try:
        pacing = (Latency.parse(args.latency), Quotas.parse(args.quotas))
    except ValueError as error:
        raise SystemExit(f"dzlineage: {error}") from None
    try:
        sandbox = Sandbox(
            args.host,
            args.port,
            args.lineage_processing_seconds,
            listing_processing_seconds=args.listing_processing_seconds,
            ownership_transfer_seconds=args.ownership_transfer_seconds,
            glue_lineage_processing_seconds=args.glue_lineage_processing_seconds,
        ).start()
    except OSError as error:
        raise SystemExit(f"dzlineage: cannot listen on {args.host}:{args.port}: {error}") from None
    environment = sandbox_environment(sandbox.endpoint_url)
    # Before seeding: the demo platform's schemas are registered under the chosen behaviour.
    SandboxControl(sandbox.endpoint_url).set_ambiguities(
        type_recreation=args.type_recreation,
        schema_updated_time=args.schema_updated_time,
        glue_node_naming=args.glue_node_naming,
        search_lag_seconds=args.search_lag_seconds,
        lineage_conflict=args.lineage_conflict,
        glue_lineage_repost=args.glue_lineage_repost,
        run_event_merge=args.run_event_merge,
        node_schema=args.node_schema,
    )
    if not args.empty:
        # The bundled demo also shows nested, enum, $ref and Protobuf columns (docs/columns.md).
        environment.update(
            seed_platform(
                sandbox.endpoint_url,
                args.seed,
                two_accounts=args.accounts == "two",
                column_showcase=args.seed is None,
                domain_version=args.domain_version,
                change_queue=args.change_queue,
            )
        )
        if args.scopes == "two":
            from dzlineage_dagster.sandbox.demo.second_scope import seed_second_scope

            environment.update(
                seed_second_scope(
                    sandbox.endpoint_url,
                    environment,
                    region=environment["AWS_REGION"],
                    change_queue=args.change_queue,
                )
            )
        # The seeding calls are set-up, not the project's: start the call log afresh.
        SandboxControl(sandbox.endpoint_url).clear_calls()
    # Seeding is set-up: it runs at full speed, the pacing applies from the first real call.
    sandbox.app.pace(*pacing)
    if args.env_file:
        Path(args.env_file).write_text(export_lines(environment))
    return sandbox, environment


def cmd_sandbox(args: argparse.Namespace) -> int:
    sandbox, environment = _start_sandbox(args)
    try:
        print(f"# dzlineage sandbox listening on {sandbox.endpoint_url} (Ctrl-C stops it)")
        print("# Use it from another shell by exporting:")
        print(export_lines(environment), end="", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    finally:
        sandbox.stop()
    return 0


def _port_taken(host: str, port: int) -> bool:
    with socket.socket() as probe:
        # As a server binds it: a port in TIME_WAIT only is free to `dagster dev` too.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def _demo_workspace(dagster_home: Path) -> Path:
    """The workspace `dagster dev` loads, from any directory: the project's code location, and
    a team's location whose asset depends on a CDC Iceberg table by key."""
    locations = {DEFINITIONS_MODULE: CODE_LOCATION_NAME, DOWNSTREAM_MODULE: DOWNSTREAM_LOCATION}
    workspace = dagster_home / "workspace.yaml"
    workspace.write_text(
        "load_from:\n"
        + "".join(
            f"  - python_module:\n      module_name: {module}\n      location_name: {name}\n"
            for module, name in locations.items()
        )
    )
    return workspace


def cmd_demo(args: argparse.Namespace) -> int:
    # Checked first: `dagster dev` without its port keeps its daemon running headless, which
    # looks like a demo but shows nothing.
    if _port_taken(args.dagster_host, args.dagster_port):
        raise SystemExit(
            f"dzlineage demo: the Dagster UI port {args.dagster_host}:{args.dagster_port} is "
            "taken; stop what uses it or pass --dagster-port"
        )
    sandbox, environment = _start_sandbox(args)
    env_file = Path(args.env_file).resolve()
    temporary_home = args.dagster_home is None
    dagster_home = Path(args.dagster_home or tempfile.mkdtemp(prefix="dzlineage-dagster-home-"))
    try:
        return _run_dagster(args, sandbox.endpoint_url, environment, dagster_home, env_file)
    finally:
        sandbox.stop()
        env_file.unlink(missing_ok=True)
        if temporary_home:
            shutil.rmtree(dagster_home, ignore_errors=True)


def _run_dagster(
    args: argparse.Namespace,
    endpoint_url: str,
    environment: dict[str, str],
    dagster_home: Path,
    env_file: Path,
) -> int:
    dagster_home.mkdir(parents=True, exist_ok=True)
    instance_yaml = dagster_home / "dagster.yaml"
    if not instance_yaml.exists():
        # The sandbox needs no network; neither should the demo's Dagster instance. Run retries
        # let a sensor-launched sync retry topics that failed transiently.
        instance_yaml.write_text("telemetry:\n  enabled: false\nrun_retries:\n  enabled: true\n")
    warning_filters = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), *OWN_WARNINGS]))
    env = {
        **os.environ,
        **environment,
        "DAGSTER_HOME": str(dagster_home),
        "PYTHONWARNINGS": warning_filters,
    }
    dagster = Path(sys.executable).with_name("dagster")
    command = [
        str(dagster), "dev", "-w", str(_demo_workspace(dagster_home)),
        "--host", args.dagster_host, "--port", str(args.dagster_port),
    ]  # fmt: skip
    print(f"# sandbox (seeded demo CDC platform) on {endpoint_url}")
    print(f"# Dagster UI on http://{args.dagster_host}:{args.dagster_port} (Ctrl-C stops both)")
    print(f"# From a second shell: source {shlex.quote(str(env_file))}   (or export:)")
    print(export_lines(environment), end="", flush=True)
    # In DAGSTER_HOME, not here: `dagster dev` loads ./.env over the environment it is given,
    # and a .env left by `dzlineage sandbox --env-file` would point it at another sandbox.
    # Its own process group, so that stopping reaches every process Dagster starts (daemon,
    # webserver, code servers, run workers), however they are parented.
    process = subprocess.Popen(command, env=env, cwd=dagster_home, start_new_session=True)
    try:
        return process.wait()
    except KeyboardInterrupt:
        # Further interrupts must not cut Dagster's shutdown short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return 0
    finally:
        # Run workers outlive `dagster dev` by a moment and write into DAGSTER_HOME until they
        # end: the sandbox and the home go only once the whole group has.
        _stop_process_group(process)


def _stop_process_group(process: subprocess.Popen) -> None:
    """Stop `dagster dev` as it expects, then whatever of its group outlives it.

    SIGINT to `dagster dev` alone first: it stops its webserver, daemon and code servers
    through their shutdown pipes, and run workers get the grace to finish their run. A
    group-wide SIGINT, as a terminal sends, kills a run worker that is just starting with a
    traceback. What still runs after that grace (a run on a busy machine) gets SIGTERM, which
    Dagster's run workers take as a termination request and which ends its helper processes
    (the compute logs' watchers) without the KeyboardInterrupt traceback a SIGINT prints in
    each; then SIGKILL.
    """
    steps = (
        (os.kill, signal.SIGINT, 30.0),
        (os.killpg, signal.SIGTERM, 10.0),
        (os.killpg, signal.SIGKILL, 5.0),
    )
    for send, sig, grace in steps:
        with contextlib.suppress(ProcessLookupError):
            send(process.pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            process.poll()  # reap `dagster dev` itself
            if not _group_alive(process.pid):
                return
            time.sleep(0.25)


def _group_alive(group: int) -> bool:
    """Whether a process of ``group`` still runs (zombies, which hold nothing open, do not)."""
    proc = Path("/proc")
    if not proc.is_dir():  # not Linux: a signal 0 reaches zombies too, close enough
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # The command name in parentheses may hold spaces: the fields after it are fixed.
            state, _parent, process_group = (
                (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
            )
        except (OSError, ValueError):
            continue
        if int(process_group) == group and state != "Z":
            return True
    return False
