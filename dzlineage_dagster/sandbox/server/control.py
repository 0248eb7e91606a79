"""Client for the sandbox's admin paths: the call log, fault rules and reset.

It talks HTTP, so tests, benchmarks and a user's shell drive an in-process sandbox and a
``dzlineage sandbox`` in another terminal the same way.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections import Counter
from typing import Any

from dzlineage_dagster.sandbox.server.faults import CallRecord, FaultRule, count_calls

#: Dummy credentials: moto accepts any, and SigV4 signing needs some.
SANDBOX_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}
SANDBOX_REGION = "us-east-1"
#: Where the admin paths live on the sandbox endpoint (no AWS service uses this path).
ADMIN_PREFIX = "/_sandbox/"


def sandbox_environment(endpoint_url: str, region: str = SANDBOX_REGION) -> dict[str, str]:
    """The AWS variables that point boto3 (and so the whole project) at the sandbox."""
    return {
        "AWS_ENDPOINT_URL": endpoint_url,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        **SANDBOX_CREDENTIALS,
    }


class SandboxControl:
    def __init__(self, endpoint_url: str) -> None:
        self.endpoint_url = endpoint_url.rstrip("/")

    def _call(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(
            f"{self.endpoint_url}{ADMIN_PREFIX}{path}", data=data, method=method
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def healthy(self) -> bool:
        return self._call("GET", "health").get("status") == "ok"

    def calls(self) -> list[CallRecord]:
        return [CallRecord(**c) for c in self._call("GET", "calls")["calls"]]

    def call_counts(self) -> Counter[tuple[str, str | None]]:
        return count_calls(self.calls())

    def clear_calls(self) -> None:
        self._call("DELETE", "calls")

    def set_faults(self, *rules: FaultRule) -> None:
        self._call("PUT", "faults", {"rules": [r.describe() for r in rules]})

    def clear_faults(self) -> None:
        self._call("PUT", "faults", {"rules": []})

    def held(self) -> list[dict[str, Any]]:
        """Calls a ``hold`` or ``hold-after`` rule keeps waiting (service, operation, stage)."""
        return self._call("GET", "held")["held"]

    def release_held(self) -> None:
        self._call("POST", "held/release")

    def operations(self, service: str | None = None) -> dict[str, Any]:
        """Who answers which operation: the project's services, or ``service`` alone."""
        query = f"?{urllib.parse.urlencode({'service': service})}" if service else ""
        return self._call("GET", f"operations{query}")

    def quotas(self) -> dict[str, float]:
        """The rates the sandbox enforces, by ``service.Operation`` (empty: no quotas)."""
        return self._call("GET", "quotas")["quotas"]

    def quota_buckets(self) -> dict[str, str]:
        """The bucket each quota's operation draws from (SSM's reads share one under ``aws``)."""
        return self._call("GET", "quotas")["buckets"]

    def set_pacing(self, latency: str = "0", quotas: str = "off") -> dict[str, Any]:
        """Service time (``"aws"`` or milliseconds) and quotas (``"aws"``, ``"off"``, or figures
        of one's own: ``"datazone.CreateAsset=10,..."`` or a JSON file the sandbox can read)."""
        return self._call("PUT", "pacing", {"latency": latency, "quotas": quotas})

    def set_client_tokens(self, **changes: Any) -> dict[str, Any]:
        """How the emulated services honour a clientToken: ``window_seconds`` (default AWS's 8
        hours), ``other_parameters`` (``"conflict"``, AWS's generic answer, or ``"replay"``)."""
        return self._call("PUT", "client-tokens", changes)

    def set_ambiguities(self, **switches: Any) -> dict[str, Any]:
        """Which reading of an undocumented AWS behaviour the services answer:
        ``type_recreation`` (``"revision"`` or ``"conflict"``), ``schema_updated_time``
        (``"moves"`` or ``"frozen"``), ``policy_ancestry`` (``"cascade"`` or ``"intersect"``),
        ``glue_node_naming`` (``"documented"`` or ``"colon-join"``), ``search_omits`` (asset
        ids Search leaves out), ``search_lag_seconds``, ``lineage_conflict`` (``"duplicate"`` or
        ``"other"``), ``glue_lineage_repost`` (``"same-run"`` or ``"new-event"``),
        ``run_event_merge`` (``"merge"`` or ``"latest"``), ``node_schema`` (``"last-writer"``,
        ``"first-writer"`` or ``"merged"``); see :mod:`.ambiguities`. No switches: the current
        ones."""
        return self._call("PUT", "ambiguities", switches)

    def set_ssm_limits(self, **caps: int) -> dict[str, Any]:
        """The account's SSM parameter caps per Region: ``standard_parameters`` (AWS: 10,000),
        ``advanced_parameters`` (AWS: 100,000); reset restores AWS's."""
        return self._call("PUT", "ssm-limits", caps)

    def set_glue_limits(self, schemas: int, schema_versions: int | None = None) -> None:
        """Schemas the account may hold per Region, as after a quota increase (AWS's default:
        10,000; adjustable), and optionally the schema versions of the whole account (moto's
        cap: 100,000 by default, every schema's first version counted); reset restores both."""
        versions = {} if schema_versions is None else {"schema_versions": schema_versions}
        self._call("PUT", "glue-limits", {"schemas": schemas, **versions})

    def reset(self) -> None:
        self._call("POST", "reset")
