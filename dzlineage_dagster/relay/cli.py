"""The `dzlineage relay` command's handler, imported only when the command runs."""

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
