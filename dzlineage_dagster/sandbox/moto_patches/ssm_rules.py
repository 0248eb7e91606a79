"""What AWS Systems Manager accepts as a parameter name, as pure rules.

Sources: the PutParameter API reference and the user guide's "Requirements and constraints for
parameter names":

- only ``a-zA-Z0-9_.-`` and ``/`` (the hierarchy separator); no spaces;
- a hierarchical name must be fully qualified (start with ``/``): ``MyParameter3/L1`` is not;
- at most 15 levels: ``/Level-1/L2/.../L14/parameter-name`` is valid, one level more raises
  ``HierarchyLevelLimitExceededException``;
- not prefixed with ``aws`` or ``ssm``, case-insensitive, with or without the leading slash
  (``awsTestParameter``, ``SSM-testparameter`` and ``/aws/testparam1`` all fail);
- at most 1011 characters *counting the whole parameter ARN*: the model's 2048 includes 1037
  characters reserved for Systems Manager, and ``arn:aws:ssm:us-east-2:111122223333:parameter/``
  (45 characters) counts toward the 1011. A name with a leading slash has the same ARN as the
  name without it (``/p`` and ``p`` are one parameter), so with a 12-digit account in a
  9-character region a name may have 966 characters, plus the optional leading slash.

The error AWS answers with differs per rule (observed answers, quoted below): the ``aws``
prefix is an ``AccessDeniedException``, hierarchy depth its own exception, everything else a
``ValidationException`` whose text, for bad characters too, talks about the ``ssm`` prefix.

Two deliberate deviations, both stricter than AWS: AWS silently trims spaces at either end of
a name; here they are a problem, so a name that passes always round-trips unchanged. And reads
(GetParameter(s), GetParametersByPath) skip the reserved-prefix rules, because AWS's own public
parameters live under ``/aws/service/``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

MAX_ARN_LENGTH = 1011
MAX_HIERARCHY_LEVELS = 15
DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "123456789012"

_ALLOWED_CHARACTER = re.compile(r"[a-zA-Z0-9_.\-/]")
_RESERVED_PREFIXES = ("aws", "ssm")

# AWS's answers, quoted from real responses reported in public issue threads.
INVALID_NAME_MESSAGE = (
    'Parameter name: can\'t be prefixed with "ssm" (case-insensitive). If formed as a path, it '
    "can consist of sub-paths divided by slash symbol; each sub-path can be formed as a mix of "
    "letters, numbers and the following 3 symbols .-_"
)
NOT_FULLY_QUALIFIED_MESSAGE = "Parameter name must be a fully qualified name."
INVALID_PATH_MESSAGE = (
    "The parameter doesn't meet the parameter name requirements. The parameter name must begin "
    'with a forward slash "/". It can\'t be prefixed with "aws" or "ssm" (case-insensitive). It '
    "must use only letters, numbers, or the following symbols: . (period), - (hyphen), "
    "_ (underscore). Special characters are not allowed. All sub-paths, if specified, must use "
    'the forward slash symbol "/". Valid example: /get/parameters2-/by1./path0_.'
)
# The exception's documented text; AWS's exact wording for the next two was not found.
HIERARCHY_TOO_DEEP_MESSAGE = (
    "A hierarchy can have a maximum of 15 levels. For more information, see Requirements and "
    "constraints for parameter names in the AWS Systems Manager User Guide."
)


class NameUse(Enum):
    """How a request uses a name; the rules differ slightly."""

    #: PutParameter, DeleteParameter(s): the bare name.
    WRITE = "write"
    #: GetParameter(s): the name or its ARN, optionally with a ``:version`` or ``:label``.
    READ = "read"
    #: GetParametersByPath: a hierarchy, ``/`` alone or with a trailing slash included.
    PATH = "path"


@dataclass(frozen=True)
class NameProblem:
    """One broken rule: what is wrong, and how AWS answers it."""

    detail: str
    error_code: str
    aws_message: str


def parameter_name_problems(name: str) -> list[str]:
    """Why SSM would refuse to create a parameter called ``name`` (empty when it accepts it).

    The ARN length is counted for moto's default account in us-east-1; see
    :func:`name_problems` for another region or account.
    """
    return [problem.detail for problem in name_problems(name)]


def name_problems(
    name: str,
    use: NameUse = NameUse.WRITE,
    *,
    region: str = DEFAULT_REGION,
    account_id: str = DEFAULT_ACCOUNT_ID,
) -> list[NameProblem]:
    """Every rule ``name`` breaks for ``use``, most telling first."""
    if use is NameUse.PATH:
        return _path_problems(name)
    if use is NameUse.READ:
        name = _name_part_of_reference(name)
    problems = [] if use is NameUse.READ else _reserved_prefix_problems(name)
    problems += _character_problems(name, INVALID_NAME_MESSAGE)
    if "/" in name and not name.startswith("/"):
        problems.append(
            NameProblem(
                "a hierarchical name must start with '/'",
                "ValidationException",
                NOT_FULLY_QUALIFIED_MESSAGE,
            )
        )
    if name:
        problems += _segment_problems(name.removeprefix("/"), INVALID_NAME_MESSAGE)
    arn_length = len(parameter_arn(name, region=region, account_id=account_id))
    if arn_length > MAX_ARN_LENGTH:
        detail = f"the parameter ARN has {arn_length} characters, more than {MAX_ARN_LENGTH}"
        problems.append(
            NameProblem(
                detail,
                "ValidationException",
                f"Parameter name: {detail} (the limit counts the ARN).",
            )
        )
    return problems


def parameter_arn(name: str, *, region: str, account_id: str) -> str:
    return f"arn:{_partition(region)}:ssm:{region}:{account_id}:parameter/{name.removeprefix('/')}"


def _path_problems(path: str) -> list[NameProblem]:
    if not path.startswith("/"):
        return [
            NameProblem("a path must start with '/'", "ValidationException", INVALID_PATH_MESSAGE)
        ]
    problems = _character_problems(path, INVALID_PATH_MESSAGE)
    if path != "/":
        problems += _segment_problems(path[1:].removesuffix("/"), INVALID_PATH_MESSAGE)
    return problems


def _name_part_of_reference(reference: str) -> str:
    """The name inside ``name``, ``name:selector``, ``arn:...:parameter/name[:selector]``."""
    if reference.startswith("arn:"):
        resource = reference.split(":", 5)[-1]
        if resource.startswith("parameter/"):
            bare = resource.removeprefix("parameter/").split(":", 1)[0]
            return f"/{bare}" if "/" in bare else bare
    return reference.split(":", 1)[0]


def _reserved_prefix_problems(name: str) -> list[NameProblem]:
    prefix = name.removeprefix("/")[:3].lower()
    if prefix == "aws":
        return [
            NameProblem(
                "a name can't start with 'aws' (case-insensitive)",
                "AccessDeniedException",
                f"No access to reserved parameter name: {name}.",
            )
        ]
    if prefix == "ssm":
        return [
            NameProblem(
                "a name can't start with 'ssm' (case-insensitive)",
                "ValidationException",
                INVALID_NAME_MESSAGE,
            )
        ]
    return []


def _character_problems(name: str, aws_message: str) -> list[NameProblem]:
    if not name:
        return [NameProblem("a name can't be empty", "ValidationException", aws_message)]
    bad = sorted({c for c in name if not _ALLOWED_CHARACTER.fullmatch(c)})
    if not bad:
        return []
    detail = f"only a-zA-Z0-9_.- and '/' are allowed, not {''.join(bad)!r}"
    if name != name.strip():
        detail += " (AWS would trim spaces at either end; the sandbox refuses them)"
    return [NameProblem(detail, "ValidationException", aws_message)]


def _segment_problems(hierarchy: str, aws_message: str) -> list[NameProblem]:
    """Rules on the levels of a name or path given without its leading slash."""
    levels = hierarchy.split("/")
    problems = []
    if "" in levels:
        problems.append(
            NameProblem(
                "a level can't be empty (no '//', no trailing '/')",
                "ValidationException",
                aws_message,
            )
        )
    if len(levels) > MAX_HIERARCHY_LEVELS:
        problems.append(
            NameProblem(
                f"{len(levels)} levels, more than {MAX_HIERARCHY_LEVELS}",
                "HierarchyLevelLimitExceededException",
                HIERARCHY_TOO_DEEP_MESSAGE,
            )
        )
    return problems


def _partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


# --- Tiers: how many parameters, how long a value ---------------------------------------------
#
# PutParameter's ``Tier`` (botocore's model, and the user guide's "Managing parameter tiers"):
# standard parameters hold values up to 4 KB, at most 10,000 of them per account and Region;
# advanced ones up to 8 KB, at most 100,000, charged. A standard parameter can become advanced,
# never the reverse. ``Intelligent-Tiering`` creates a standard parameter unless the request
# needs an advanced one: a value over 4 KB, or 10,000 parameters already in the account and
# Region. (Two public reports, aws-sdk-net#3157 and terraform-provider-aws#18521, saw AWS
# refuse such requests instead; the product never asks for Intelligent-Tiering, so the
# sandbox answers as documented.) moto checks none of this.

STANDARD_TIER, ADVANCED_TIER, INTELLIGENT_TIERING = "Standard", "Advanced", "Intelligent-Tiering"
TIERS = (STANDARD_TIER, ADVANCED_TIER, INTELLIGENT_TIERING)
STANDARD_VALUE_LIMIT = 4096
ADVANCED_VALUE_LIMIT = 8192
STANDARD_PARAMETER_CAP = 10_000
ADVANCED_PARAMETER_CAP = 100_000

# AWS's answers, quoted from real responses reported in public issue threads (pulumi/docs#11478,
# terraform-provider-aws#18521, github-aws-runners/terraform-aws-github-runner#3815).
PARAMETER_LIMIT_MESSAGE = (
    "You have reached the maximum number of standard parameters for this AWS account and Region "
    "({cap}). To add more parameters, either delete existing parameters or upgrade to the "
    "advanced-parameter tier (charges apply)."
)
STANDARD_VALUE_TOO_LONG_MESSAGE = (
    "Standard tier parameters support a maximum parameter value of 4096 characters. To create a "
    "larger parameter value, upgrade the parameter to use the advanced-parameter tier. For more "
    "information, see "
    "https://docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-advanced-parameters.html"
)
ADVANCED_VALUE_TOO_LONG_MESSAGE = (
    "Advanced tier parameters support a maximum parameter value of 8192 characters."
)
# AWS's exact wording for these two was not found; the codes follow the model.
ADVANCED_LIMIT_MESSAGE = (
    "You have reached the maximum number of advanced parameters for this AWS account and Region "
    "({cap})."
)
DOWNGRADE_MESSAGE = (
    "An advanced parameter can't be reverted to a standard parameter. Delete it and create it "
    "again as a standard parameter."
)


@dataclass(frozen=True)
class SsmLimits:
    """The account's parameter caps per Region (``/_sandbox/ssm-limits``): AWS's by default; a
    test lowers them to reach the cap without writing 10,000 parameters."""

    standard_parameters: int = STANDARD_PARAMETER_CAP
    advanced_parameters: int = ADVANCED_PARAMETER_CAP

    def changed(self, changes: dict[str, object]) -> SsmLimits:
        for key, value in changes.items():
            if key not in ("standard_parameters", "advanced_parameters"):
                raise ValueError(f"no SSM limit {key!r} (standard_parameters, advanced_parameters)")
            if type(value) is not int or value < 0:
                raise ValueError(f"{key} is a count of parameters, not {value!r}")
        return SsmLimits(**{**self.__dict__, **changes})


@dataclass(frozen=True)
class TierAnswer:
    """What a PutParameter gets: the tier the parameter will have, or the broken rule."""

    tier: str
    problem: NameProblem | None = None


def put_tier(
    value: str,
    requested: str | None,
    existing: str | None,
    *,
    standard_count: int,
    advanced_count: int,
    limits: SsmLimits,
) -> TierAnswer:
    """The tier a PutParameter leaves its parameter in, or why AWS refuses it.

    ``existing`` is the parameter's tier (None: the call creates it); ``requested`` the call's
    ``Tier`` (None: the account's default, Standard, for a new parameter; the current tier for
    an existing one, as moto keeps it); the counts are the account's and Region's parameters.
    """
    if requested is not None and requested not in TIERS:
        message = (
            f"1 validation error detected: Value '{requested}' at 'tier' failed to satisfy "
            f"constraint: Member must satisfy enum value set: [{', '.join(TIERS)}]"
        )
        return TierAnswer(requested, NameProblem("unknown tier", "ValidationException", message))
    creates = existing is None
    tier = requested or existing or STANDARD_TIER
    if tier == INTELLIGENT_TIERING:
        needs_advanced = (
            len(value) > STANDARD_VALUE_LIMIT
            or existing == ADVANCED_TIER
            or (creates and standard_count >= limits.standard_parameters)
        )
        tier = ADVANCED_TIER if needs_advanced else STANDARD_TIER
    if tier == STANDARD_TIER and existing == ADVANCED_TIER:
        return TierAnswer(
            tier, NameProblem("no advanced -> standard", "ValidationException", DOWNGRADE_MESSAGE)
        )
    if tier == STANDARD_TIER and len(value) > STANDARD_VALUE_LIMIT:
        problem = NameProblem(
            "value over 4 KB", "ValidationException", STANDARD_VALUE_TOO_LONG_MESSAGE
        )
        return TierAnswer(tier, problem)
    if tier == ADVANCED_TIER and len(value) > ADVANCED_VALUE_LIMIT:
        problem = NameProblem(
            "value over 8 KB", "ValidationException", ADVANCED_VALUE_TOO_LONG_MESSAGE
        )
        return TierAnswer(tier, problem)
    if creates and tier == STANDARD_TIER and standard_count >= limits.standard_parameters:
        message = PARAMETER_LIMIT_MESSAGE.format(cap=limits.standard_parameters)
        return TierAnswer(tier, NameProblem("standard cap", "ParameterLimitExceeded", message))
    if (
        tier == ADVANCED_TIER
        and existing != ADVANCED_TIER
        and advanced_count >= limits.advanced_parameters
    ):
        message = ADVANCED_LIMIT_MESSAGE.format(cap=limits.advanced_parameters)
        return TierAnswer(tier, NameProblem("advanced cap", "ParameterLimitExceeded", message))
    return TierAnswer(tier)
