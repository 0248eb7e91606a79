"""`dzlineage relay`: the OpenLineage HTTP endpoint that forwards events to DataZone; its
server (the `relay` extra) is imported only when the command runs."""

from __future__ import annotations

import argparse

MISSING_EXTRA = (
    "dzlineage relay: needs the `relay` extra (werkzeug): pip install 'dzlineage-dagster[relay]'"
)


def cmd_relay(args: argparse.Namespace) -> int:
    import logging

    try:
        import werkzeug  # noqa: F401 (only to tell a missing extra from other import errors)
    except ImportError:
        raise SystemExit(MISSING_EXTRA) from None
    from dzlineage_dagster.relay.server import serve

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    # One log line per posted event would drown the log; /status counts them instead.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    return serve(args.host, args.port)


def add_relay_command(commands: argparse._SubParsersAction) -> None:
    relay = commands.add_parser(
        "relay",
        help="serve the OpenLineage HTTP endpoint that forwards events to DataZone",
        description="Accept OpenLineage events (POST /api/v1/lineage, as the OpenLineage HTTP "
        "transport sends them) from Debezium, Spark, Airflow, ... and post them to DataZone "
        "with PostLineageEvent, spooling them on disk while DataZone is unavailable. Settings "
        "come from the DZLINEAGE_* variables (see docs/relay.md).",
    )
    relay.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    relay.add_argument("--port", type=int, default=5000, help="port to listen on (default 5000)")
    relay.set_defaults(handler=cmd_relay)
