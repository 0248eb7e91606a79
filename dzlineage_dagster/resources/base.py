"""The boto3 client factory every AWS resource of the project shares.

It extends dagster_aws's boto3 configuration (region, endpoint, profile, keys, retries) with the
retry mode and an optional role to assume, for a governance account that is not the one the
code runs in. Assumed-role credentials refresh themselves: credentials fetched once at load
time expire after an hour on a long-lived code server.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Literal

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import AssumeRoleCredentialFetcher, DeferredRefreshableCredentials
from dagster_aws.utils import ResourceWithBoto3Configuration
from pydantic import Field, PrivateAttr

RetryMode = Literal["standard", "adaptive", "legacy"]


class AwsClientResource(ResourceWithBoto3Configuration):
    """Hands out real boto3 clients; subclasses add pagination, never business logic."""

    service_names: ClassVar[tuple[str, ...]] = ()

    retry_mode: RetryMode = Field(
        default="standard",
        description=(
            "botocore retry mode: `standard` (exponential backoff with jitter, retries "
            "throttling and 5xx) or `adaptive` (standard plus client-side rate limiting)."
        ),
    )
    role_arn: str | None = Field(
        default=None,
        description="IAM role to assume for every call (cross-account governance account).",
    )
    role_session_name: str = Field(
        default="dzlineage-dagster", description="Session name used when assuming `role_arn`."
    )
    role_external_id: str | None = Field(
        default=None, description="External id required by the trust policy of `role_arn`."
    )

    _clients: dict[str, Any] = PrivateAttr(default_factory=dict)
    _api_calls: Counter = PrivateAttr(default_factory=Counter)
    _api_attempts: Counter = PrivateAttr(default_factory=Counter)

    def _session(self) -> boto3.session.Session:
        base = boto3.session.Session(
            profile_name=self.profile_name,
            region_name=self.region_name,
            aws_access_key_id=self.aws_access_key_id,
            aws_secret_access_key=self.aws_secret_access_key,
            aws_session_token=self.aws_session_token,
        )
        if not self.role_arn:
            return base
        extra_args = {"RoleSessionName": self.role_session_name}
        if self.role_external_id:
            extra_args["ExternalId"] = self.role_external_id
        fetcher = AssumeRoleCredentialFetcher(
            client_creator=base._session.create_client,
            source_credentials=base.get_credentials(),
            role_arn=self.role_arn,
            extra_args=extra_args,
        )
        assumed = botocore.session.Session()
        assumed._credentials = DeferredRefreshableCredentials(
            refresh_using=fetcher.fetch_credentials, method="assume-role"
        )
        return boto3.session.Session(botocore_session=assumed, region_name=base.region_name)

    def client(self, service_name: str | None = None) -> Any:
        """A boto3 client for ``service_name`` (default: the resource's first service).

        Clients are built once per resource instance, and each counts the API calls it makes
        (see :attr:`api_calls`), so a run can report exactly what it cost against real AWS too.
        """
        name = service_name or self.service_names[0]
        if name not in self._clients:
            client = self._session().client(
                name,
                endpoint_url=self.endpoint_url,
                use_ssl=self.use_ssl,
                verify=self.verify,
                config=Config(
                    retries={"mode": self.retry_mode, "total_max_attempts": self.max_attempts}
                ),
            )
            client.meta.events.register("before-call", self._count_call)
            client.meta.events.register("before-send", self._count_attempt)
            self._clients[name] = client
        return self._clients[name]

    def _count_call(self, model: Any, context: Any = None, **_: Any) -> None:
        operation = f"{model.service_model.service_name}.{model.name}"
        self._api_calls[operation] += 1
        if context is not None:
            context["dzlineage_operation"] = operation

    def _count_attempt(self, request: Any = None, **_: Any) -> None:
        # Every HTTP attempt, the retries botocore decided on included.
        context = getattr(request, "context", None) or {}
        self._api_attempts[context.get("dzlineage_operation", "?")] += 1

    @property
    def api_retries(self) -> Counter:
        """Attempts botocore retried (throttling, a 5xx, a dropped connection), by operation."""
        retries = self._api_attempts - self._api_calls
        return +retries

    @property
    def api_calls(self) -> Counter:
        """Operations called through this resource's clients so far (attempts, not retries)."""
        return self._api_calls

    def paginate(
        self,
        service_name: str,
        operation: str,
        result_key: str,
        page_size: int | None = None,
        **params: Any,
    ) -> list:
        """Every item of a paginated operation, through botocore's own paginator.

        ``page_size`` asks for the API's largest page, so listing N items costs N/size calls.
        """
        paginator = self.client(service_name).get_paginator(operation)
        config = {"PageSize": page_size} if page_size else {}
        pages = paginator.paginate(**params, PaginationConfig=config)
        return [item for page in pages for item in page.get(result_key, [])]
