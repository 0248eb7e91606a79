"""The boto3 client factory every AWS resource of the project shares.

It extends dagster_aws's boto3 configuration (region, endpoint, profile, keys, retries) with the
retry mode and an optional role to assume, for an account that is not the one the code runs
in: each resource belongs to one side (``side``, see :data:`~dzlineage_dagster.settings.AWS_SIDES`),
the data side's or the governance side's, and carries that side's role. Assumed-role
credentials refresh themselves: credentials fetched once at load time expire after an hour on
a long-lived code server.

Every client paces itself to the account's API quotas (:mod:`~dzlineage_dagster.core.aws.quotas`,
the ``rate_limits`` option): a call waits for its operation's token first, so a sync with many
threads runs at the quota instead of into it, and botocore's retries are only the net. The
buckets are shared by every client of the process, as the quotas are shared by the account.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

import boto3
from botocore.config import Config
from botocore.credentials import AssumeRoleCredentialFetcher, DeferredRefreshableCredentials
from dagster_aws.utils import ResourceWithBoto3Configuration
from pydantic import Field, PrivateAttr

from dzlineage_dagster.boto3_sessions import new_botocore_session, new_session
from dzlineage_dagster.core.aws.quotas import Quota, parse_rate_limits
from dzlineage_dagster.core.aws.rate_limit import TokenBucket
from dzlineage_dagster.core.text import shown
from dzlineage_dagster.settings import AWS_OPTION_VARIABLES, role_setting, side_role_variables

RetryMode = Literal["standard", "adaptive", "legacy"]


#: The process's client-side buckets, by (bucket name, rate, Region, role): the quotas are per
#: account and Region, and a deployment's scopes reach several (the role names the account).
_CLIENT_BUCKETS: dict[tuple[str, float, str | None, str | None], TokenBucket] = {}
_CLIENT_BUCKETS_LOCK = threading.Lock()


def client_bucket(
    quota: Quota, region: str | None = None, role_arn: str | None = None
) -> TokenBucket:
    """The process-wide bucket of ``quota`` in the account ``role_arn`` reaches (None: the
    default credentials') and ``region``; a burst of one keeps calls evenly spaced."""
    key = (quota.bucket, quota.rate, region, role_arn)
    with _CLIENT_BUCKETS_LOCK:
        if key not in _CLIENT_BUCKETS:
            _CLIENT_BUCKETS[key] = TokenBucket(quota.rate, capacity=1)
        return _CLIENT_BUCKETS[key]


class AwsClientResource(ResourceWithBoto3Configuration):
    """Hands out real boto3 clients; subclasses add pagination, never business logic."""

    service_names: ClassVar[tuple[str, ...]] = ()

    retry_mode: RetryMode = Field(
        # Adaptive: when a throttle gets through the client's own rate limits anyway (another
        # process of the account using the same quota), botocore slows the client down too.
        default="adaptive",
        description=(
            "botocore retry mode: `standard` (exponential backoff with jitter, retries "
            "throttling and 5xx) or `adaptive` (standard plus slowing down after throttling)."
        ),
    )
    side: str | None = Field(
        default=None,
        description=(
            "The side whose credentials this resource's calls carry (`data` or `governance`), "
            "named in the errors a call in the wrong account gets."
        ),
    )
    role_arn: str | None = Field(
        default=None,
        description="IAM role to assume for every call of this resource (another account's).",
    )
    role_session_name: str = Field(
        default="dzlineage-dagster", description="Session name used when assuming `role_arn`."
    )
    role_external_id: str | None = Field(
        default=None, description="External id required by the trust policy of `role_arn`."
    )

    rate_limits: str = Field(
        default="aws",
        description=(
            "Client-side rate limits: `aws` (the published per-account quotas, see docs/settings.md), "
            "`aws,<service.Operation>=<TPS>,...` to change some, or `off`."
        ),
    )

    _clients: dict[str, Any] = PrivateAttr(default_factory=dict)
    _api_calls: Counter = PrivateAttr(default_factory=Counter)
    _api_attempts: Counter = PrivateAttr(default_factory=Counter)
    #: Clients are shared by the sync's threads (boto3 clients are thread-safe; building one,
    #: with its session, is not) and so are the call counters.
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _limits: dict[str, Quota] | None = PrivateAttr(default=None)

    def _session(self) -> boto3.session.Session:
        base = new_session(
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
        assumed = new_botocore_session()
        assumed._credentials = DeferredRefreshableCredentials(
            refresh_using=fetcher.fetch_credentials, method="assume-role"
        )
        return boto3.session.Session(botocore_session=assumed, region_name=base.region_name)

    def with_options(self, **options: Any) -> AwsClientResource:
        """This resource with ``options`` changed (a scope's Region and role): a new resource,
        with clients and call counters of its own."""
        values = {field: getattr(self, field) for field in type(self).model_fields}
        return type(self)(**{**values, **options})

    def credentials_label(self) -> str:
        """Whose credentials the calls carry and the variable that sets them, for an error
        that a call in the wrong account (or with the wrong role) explains."""
        side = f"the {self.side} side's" if self.side else "the"
        own = side_role_variables(self.side)["role_arn"] if self.side else None
        if self.role_arn:
            variable = (role_setting(self.side) if self.side else None) or "role_arn"
            return f"{side} role {variable}={self.role_arn}"
        unset = " or ".join(v for v in (own, AWS_OPTION_VARIABLES["role_arn"]) if v)
        return f"{side} credentials: the default AWS credentials ({unset} unset)"

    def client(self, service_name: str | None = None) -> Any:
        """A boto3 client for ``service_name`` (default: the resource's first service).

        Clients are built once per resource instance, and each counts the API calls it makes
        (see :attr:`api_calls`), so a run can report exactly what it cost against real AWS too.
        """
        name = service_name or self.service_names[0]
        with self._lock:
            if name not in self._clients:
                self._clients[name] = self._build_client(name)
            return self._clients[name]

    def _build_client(self, name: str) -> Any:
        if self._limits is None:
            try:
                self._limits = parse_rate_limits(self.rate_limits)
            except ValueError as error:
                raise ValueError(
                    f"DZLINEAGE_CLIENT_RATE_LIMITS={shown(self.rate_limits)}: {error}"
                ) from None
        client = self._session().client(
            name,
            endpoint_url=self.endpoint_url,
            use_ssl=self.use_ssl,
            verify=self.verify,
            config=Config(
                retries={"mode": self.retry_mode, "total_max_attempts": self.max_attempts},
                # One connection per sync thread, at the default concurrency and above.
                max_pool_connections=64,
            ),
        )
        client.meta.events.register("before-call", self._before_call)
        client.meta.events.register("before-send", self._count_attempt)
        return client

    def _before_call(self, model: Any, context: Any = None, **_: Any) -> None:
        operation = f"{model.service_model.service_name}.{model.name}"
        with self._lock:
            self._api_calls[operation] += 1
        if context is not None:
            context["dzlineage_operation"] = operation
        quota = self._limits.get(operation) if self._limits else None
        if quota is not None:
            bucket = client_bucket(quota, self.region_name, self.role_arn)
            wait = bucket.reserve(time.monotonic())
            if wait > 0:
                time.sleep(wait)

    def _count_attempt(self, request: Any = None, **_: Any) -> None:
        # Every HTTP attempt, the retries botocore decided on included.
        context = getattr(request, "context", None) or {}
        with self._lock:
            self._api_attempts[context.get("dzlineage_operation", "?")] += 1

    @property
    def api_retries(self) -> Counter:
        """Attempts botocore retried (throttling, a 5xx, a dropped connection), by operation."""
        with self._lock:
            retries = self._api_attempts - self._api_calls
        return +retries

    @property
    def api_calls(self) -> Counter:
        """Operations called through this resource's clients so far (attempts, not retries)."""
        with self._lock:
            return Counter(self._api_calls)

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
        return list(self.paginate_lazily(service_name, operation, result_key, page_size, **params))

    def paginate_lazily(
        self,
        service_name: str,
        operation: str,
        result_key: str,
        page_size: int | None = None,
        **params: Any,
    ) -> Iterator[Any]:
        """:meth:`paginate`'s items as the pages arrive: a page is read when its first item is
        wanted and released once its items are, so a caller that folds them holds one page."""
        paginator = self.client(service_name).get_paginator(operation)
        config = {"PageSize": page_size} if page_size else {}
        for page in paginator.paginate(**params, PaginationConfig=config):
            yield from page.get(result_key, [])
