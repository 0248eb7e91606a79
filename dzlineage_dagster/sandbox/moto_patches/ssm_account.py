"""SSM's account-level reads ``dzlineage doctor`` makes: the parameter listing and the
Parameter Store settings.

``DescribeParameters`` without filters, paged as AWS pages it.

moto 5.2.5 ignores ``MaxResults`` (its pages hold 10 parameters, AWS's up to the 50 the API
reference allows) and reads every parameter of the account for each page, so counting an
account near Parameter Store's 10,000-parameter cap (``dzlineage doctor``) took 1,000 calls and
most of a minute. Here a page is ``MaxResults`` parameters (AWS's default when it is absent,
10, per the API reference's example) in name order after the one the token names. A call with
``Filters`` or ``ParameterFilters`` is left to moto.

``GetServiceSetting`` (moto has none): ``/ssm/parameter-store/default-parameter-tier`` is
``Standard`` and ``/ssm/parameter-store/high-throughput-enabled`` ``false``, the defaults the
Systems Manager user guide gives ("Managing parameter tiers", "Increasing Parameter Store
throughput"); another id of the API reference's list answers ``ServiceSettingNotFound``.
"""

from __future__ import annotations

import bisect
import json
from typing import Any

from moto.ssm.models import ssm_backends
from werkzeug.wrappers import Request, Response

from dzlineage_dagster.sandbox.protocol.aws import aws_error_response

PARAMETER_TIER_SETTING = "/ssm/parameter-store/default-parameter-tier"
HIGH_THROUGHPUT_SETTING = "/ssm/parameter-store/high-throughput-enabled"
SERVICE_SETTING_DEFAULTS = {PARAMETER_TIER_SETTING: "Standard", HIGH_THROUGHPUT_SETTING: "false"}

DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 50


def describe_parameters(request: Request, account_id: str, region: str) -> Response | None:
    """The page ``request`` asks for, or None when it filters (moto answers those)."""
    params = json.loads(request.get_data() or b"{}")
    if params.get("Filters") or params.get("ParameterFilters"):
        return None
    size = params.get("MaxResults") or DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        return aws_error_response(
            "ssm",
            "ValidationException",
            f"1 validation error detected: Value '{size}' at 'maxResults' failed to satisfy "
            f"constraint: Member must have value less than or equal to {MAX_PAGE_SIZE}",
            400,
        )
    backend = ssm_backends[account_id][region]
    names = sorted(backend._parameters)
    start = bisect.bisect_right(names, params["NextToken"]) if params.get("NextToken") else 0
    page = names[start : start + size]
    answer: dict[str, Any] = {
        "Parameters": [backend.get_parameter(name).describe_response_object(False) for name in page]
    }
    if start + size < len(names):
        answer["NextToken"] = page[-1]
    return _json(answer)


def answer_service_setting(request: Request) -> Response:
    """ssm GetServiceSetting for the Parameter Store settings (see the module docstring)."""
    setting_id = json.loads(request.get_data() or b"{}").get("SettingId", "")
    value = SERVICE_SETTING_DEFAULTS.get(setting_id)
    if value is None:
        return aws_error_response(
            "ssm", "ServiceSettingNotFound", f"The service setting {setting_id} was not found", 400
        )
    return _json(
        {"ServiceSetting": {"SettingId": setting_id, "SettingValue": value, "Status": "Default"}}
    )


def _json(answer: dict[str, Any]) -> Response:
    # The JSON protocol's timestamps are epoch seconds (moto's objects hold datetimes).
    body = json.dumps(answer, default=lambda value: value.timestamp())
    return Response(body, status=200, content_type="application/x-amz-json-1.1")
