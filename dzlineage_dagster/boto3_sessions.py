"""boto3 sessions that share botocore's parsed service models across the process.

botocore's loader parses a service's model, its endpoint rules and the partition files (a few
MB of JSON for DataZone and Glue) once per session: it caches what it parsed on itself. The
project builds a session for each client it builds (a resource's clients, with their own
credentials or role, once a run), so a Dagster code server, the relay, `dzlineage doctor` and
the sandbox's seeder parsed the same files again for every client: 0.1 to 0.5 s each, most of a
short run's time. Sessions built here keep their own credentials, configuration and handlers;
only the loader's cache of parsed files is one per data path (``AWS_DATA_PATH``).
botocore's loaded models are read-only by design: one session already hands the same ones to
every client it builds.
"""

from __future__ import annotations

import threading
from typing import Any

import boto3
import botocore.loaders
import botocore.session

#: data path -> the parsed files, keyed as botocore's ``instance_cache`` keys them.
_PARSED: dict[str | None, dict[tuple, Any]] = {}
_PARSED_LOCK = threading.Lock()


def new_botocore_session(profile: str | None = None) -> botocore.session.Session:
    """A new botocore session (``profile``: a named profile) whose loader shares the process's
    parsed files."""
    session = botocore.session.Session(profile=profile)
    data_path = session.get_config_variable("data_path")
    loader = botocore.loaders.create_loader(data_path)
    with _PARSED_LOCK:
        # The store of botocore's @instance_cache, which every loading method goes through.
        loader._cache = _PARSED.setdefault(data_path, {})
    session.register_component("data_loader", loader)
    return session


def new_session(**options: Any) -> boto3.session.Session:
    """``boto3.session.Session(**options)``, sharing the process's parsed files."""
    return boto3.session.Session(
        botocore_session=new_botocore_session(options.get("profile_name")), **options
    )
