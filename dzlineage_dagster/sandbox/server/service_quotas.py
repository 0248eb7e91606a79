"""The Service Quotas API (``servicequotas``) for the services the product calls: what
``dzlineage doctor`` reads to compare an account's quotas with the product's pacing.

moto 5.2.5 answers Service Quotas for ``vpc`` only. Here:

- ``ListServiceQuotas``, ``ListAWSDefaultServiceQuotas``, ``GetServiceQuota``,
  ``GetAWSDefaultServiceQuota`` for ``datazone`` and ``ssm``: the API rate quotas AWS's documents
  publish (:data:`PUBLISHED_RATE_QUOTAS`, the sandbox's own reading of those documents, not the
  product's pacing table), each at the rate the sandbox enforces when ``--quotas`` gives it one
  (so an account with a lower quota is a ``--quotas datazone.CreateAsset=10`` away), else at
  the published default. ``glue`` has none (Glue publishes no per-operation rates): an empty
  list. Another service code: ``NoSuchResourceException``, as for a service Service Quotas
  does not know. The quota codes are the sandbox's own (``sandbox-...``): the codes AWS gives
  these quotas, if any, could not be confirmed, so ``doctor`` matches a quota by the operation
  its name names, never by code.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from werkzeug.wrappers import Request, Response

from dzlineage_dagster.sandbox.protocol.aws import aws_error_response
from dzlineage_dagster.sandbox.server.pacing import Quotas

#: Service code -> (quota name, the operations it covers, the published default in TPS).
#: Sources: the DataZone user guide, "Quotas for Amazon DataZone", API rate limits; the AWS
#: General Reference, "AWS Systems Manager endpoints and quotas", Parameter Store's max
#: throughput (shared by GetParameter, GetParameters and GetParametersByPath).
PUBLISHED_RATE_QUOTAS: dict[str, list[tuple[str, tuple[str, ...], float]]] = {
    "datazone": [
        (f"Rate of {operation} requests", (operation,), 20.0)
        for operation in (
            "CreateAsset",
            "CreateAssetRevision",
            "DeleteAsset",
            "ListAssetRevisions",
            "CreateAssetType",
            "CreateFormType",
            "Search",
            "SearchTypes",
        )
    ],
    "ssm": [
        (
            "Max throughput of GetParameter, GetParameters and GetParametersByPath (standard)",
            ("GetParameter", "GetParameters", "GetParametersByPath"),
            40.0,
        )
    ],
    "glue": [],
}
SERVICE_NAMES = {
    "datazone": "Amazon DataZone",
    "ssm": "AWS Systems Manager",
    "glue": "AWS Glue",
}

_TARGET_PREFIX = "ServiceQuotasV20190624."
_BOTOCORE_NAME = "service-quotas"


def answer_service_quotas(
    request: Request, quotas: Quotas, region: str, account_id: str
) -> Response:
    """The answer to one Service Quotas call, with the rates ``quotas`` enforces."""
    operation = request.headers.get("X-Amz-Target", "").removeprefix(_TARGET_PREFIX)
    params = json.loads(request.get_data() or b"{}")
    service = params.get("ServiceCode", "")
    if operation not in _OPERATIONS:
        return aws_error_response(
            _BOTOCORE_NAME, "UnknownOperationException", f"{operation} is not answered", 400
        )
    if service not in PUBLISHED_RATE_QUOTAS:
        return aws_error_response(
            _BOTOCORE_NAME,
            "NoSuchResourceException",
            f"The request failed because the specified service {service!r} does not exist.",
            400,
        )
    applied = not operation.startswith(("ListAWSDefault", "GetAWSDefault"))
    listed = [
        _quota(service, name, operations, default, quotas if applied else None, region, account_id)
        for name, operations, default in PUBLISHED_RATE_QUOTAS[service]
    ]
    if operation.startswith("List"):
        return _json({"Quotas": listed})
    found = next((q for q in listed if q["QuotaCode"] == params.get("QuotaCode")), None)
    if found is None:
        return aws_error_response(
            _BOTOCORE_NAME,
            "NoSuchResourceException",
            f"The request failed because the specified quota {params.get('QuotaCode')!r} "
            f"does not exist for service {service!r}.",
            400,
        )
    return _json({"Quota": found})


_OPERATIONS = (
    "ListServiceQuotas",
    "ListAWSDefaultServiceQuotas",
    "GetServiceQuota",
    "GetAWSDefaultServiceQuota",
)


def _quota(
    service: str,
    name: str,
    operations: tuple[str, ...],
    default: float,
    quotas: Quotas | None,
    region: str,
    account_id: str,
) -> dict[str, Any]:
    code = f"sandbox-{service}-{operations[0]}"
    enforced = [
        quotas.rates[f"{service}.{operation}"]
        for operation in operations
        if quotas is not None and f"{service}.{operation}" in quotas.rates
    ]
    return {
        "ServiceCode": service,
        "ServiceName": SERVICE_NAMES[service],
        "QuotaArn": f"arn:aws:servicequotas:{region}:{account_id}:{service}/{code}",
        "QuotaCode": code,
        "QuotaName": name,
        "Value": min(enforced) if enforced else default,
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
        "Period": {"PeriodValue": 1, "PeriodUnit": "SECOND"},
    }


def _json(payload: dict[str, Any]) -> Response:
    return Response(
        json.dumps(payload),
        status=200,
        content_type="application/x-amz-json-1.1",
        headers={"x-amzn-RequestId": str(uuid.uuid4())},
    )
