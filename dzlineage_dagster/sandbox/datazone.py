"""Amazon DataZone, emulated for the sandbox: domains, projects, form and asset types, assets,
search, and the OpenLineage-fed lineage graph.

:class:`~dzlineage_dagster.sandbox.aws_protocol.RestJsonService` does the wire work (routing,
validation against botocore's model, ``clientToken`` idempotency, serialization); this module
keeps DataZone's semantics:

- form and asset types are immutable: creating one again with the same model returns the
  latest revision, a changed model adds revision n+1; every domain is born with the managed
  ``amazon.datazone.*`` types, and every asset type carries ``AssetCommonDetailsForm``;
- assets are checked against their type: the revision of each form, the required forms, and each
  form's content against its Smithy model (required members, types, no unknown members);
  ``externalIdentifier`` is unique in the domain;
- ``PostLineageEvent`` takes OpenLineage RunEvents only and builds nodes for the job, the run
  and each dataset, with edges input -> run -> output. A dataset node's ``sourceIdentifier`` is
  ``<namespace>/<name>`` (a Glue table's is its ARN) and links it to the catalog asset whose
  ``AssetCommonDetailsForm.sourceIdentifier`` is the same: the asset's own lineage node
  (``amazon.datazone.asset/<assetId>``) is downstream of it.
"""

from __future__ import annotations

import json
import re
import secrets
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol, TypeVar

from botocore.utils import parse_timestamp
from werkzeug.wrappers import Request, Response

from dzlineage_dagster.sandbox.aws_protocol import AwsServiceError, RestJsonService

MANAGED_PREFIX = "amazon.datazone."
COMMON_DETAILS_FORM = "AssetCommonDetailsForm"
COMMON_DETAILS_FORM_TYPE = "amazon.datazone.AssetCommonDetailsFormType"
JOB_NODE_TYPE = "amazon.datazone.JobLineageNodeType"
JOB_RUN_NODE_TYPE = "amazon.datazone.JobRunLineageNodeType"
DATASET_NODE_TYPE = "amazon.datazone.DatasetLineageNodeType"
NODE_TYPE_REVISION = "1"
ASSET_SOURCE_IDENTIFIER_PREFIX = "amazon.datazone.asset/"
RUN_EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})
_GLUE_NAMESPACE = re.compile(r"arn:aws[a-z-]*:glue:[a-z0-9-]+:\d{12}")

_COLUMNS_SMITHY = """
list Columns { member: Column }
structure Column {
    @required
    columnName: String
    @required
    dataType: String
    description: String
}
"""
# The managed types every domain is born with, at the revisions real domains show.
_MANAGED_FORM_TYPES: dict[str, tuple[str, str]] = {
    COMMON_DETAILS_FORM_TYPE: (
        "6",
        """
        structure AssetCommonDetailsFormType {
            sourceIdentifier: String
            readMe: String
            customProperties: CustomProperties
        }
        map CustomProperties { key: String, value: String }
        """,
    ),
    "amazon.datazone.GlueTableFormType": (
        "13",
        """
        structure GlueTableFormType {
            catalogId: String
            region: String
            tableArn: String
            @required
            databaseName: String
            @required
            tableName: String
            tableDescription: String
            sourceClassification: String
            compressionType: String
            columns: Columns
        }
        """
        + _COLUMNS_SMITHY,
    ),
    "amazon.datazone.RelationalTableFormType": (
        "1",
        """
        structure RelationalTableFormType {
            @required
            tableName: String
            tableDescription: String
            columns: Columns
        }
        """
        + _COLUMNS_SMITHY,
    ),
}
_MANAGED_ASSET_TYPES: dict[str, tuple[str, dict[str, tuple[str, bool]]]] = {
    "amazon.datazone.GlueTableAssetType": (
        "24",
        {"GlueTableForm": ("amazon.datazone.GlueTableFormType", True)},
    ),
    "amazon.datazone.RelationalTableAssetType": (
        "1",
        {"RelationalTableForm": ("amazon.datazone.RelationalTableFormType", True)},
    ),
}

_ID_ALPHABET = string.ascii_lowercase + string.digits


class _Revisioned(Protocol):
    @property
    def revision(self) -> str: ...


R = TypeVar("R", bound=_Revisioned)


def _new_id(length: int = 14) -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


def _now() -> datetime:
    # Millisecond precision, as AWS answers, so timestamps round-trip through clients exactly.
    now = datetime.now(timezone.utc)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _invalid(message: str) -> AwsServiceError:
    return AwsServiceError("ValidationException", message)


def _not_found(message: str) -> AwsServiceError:
    return AwsServiceError("ResourceNotFoundException", message)


# --- form models (Smithy IDL, as much as a form needs) ----------------------------------------

_SMITHY_TOKEN = re.compile(
    r"""(?P<skip>\s+|,|//[^\n]*)
    |(?P<string>"(?:[^"\\]|\\.)*")
    |(?P<word>[A-Za-z0-9_$.#]+)
    |(?P<punct>[{}()\[\]:=@])""",
    re.VERBOSE,
)
#: The JSON type a value of each Smithy type is, in form content.
_JSON_TYPE_OF_KIND = {
    "structure": "object",
    "union": "object",
    "map": "object",
    "list": "array",
    "set": "array",
    "string": "string",
    "enum": "string",
    "blob": "string",
    "boolean": "boolean",
    "byte": "integer",
    "short": "integer",
    "integer": "integer",
    "long": "integer",
    "bigInteger": "integer",
    "intEnum": "integer",
    "float": "number",
    "double": "number",
    "bigDecimal": "number",
    "timestamp": "any",  # epoch seconds or a date-time string
    "document": "any",
}
_SHAPE_KINDS = frozenset(_JSON_TYPE_OF_KIND)
#: The simple shapes of Smithy's prelude, by the kind of shape each is.
_PRELUDE = {
    name: name[0].lower() + name[1:]
    for name in (
        "Blob",
        "Boolean",
        "String",
        "Byte",
        "Short",
        "Integer",
        "Long",
        "Float",
        "Double",
        "BigInteger",
        "BigDecimal",
        "Timestamp",
        "Document",
    )
} | {
    f"Primitive{name}": name.lower()
    for name in ("Boolean", "Byte", "Short", "Integer", "Long", "Float", "Double")
}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class SmithyMember:
    target: str
    required: bool


@dataclass(frozen=True)
class SmithyShape:
    kind: str
    members: dict[str, SmithyMember]


class _SmithyParser:
    """Reads the shapes of a Smithy IDL model: kinds, members, their targets and @required."""

    def __init__(self, text: str) -> None:
        self._tokens = list(self._tokenize(text))
        self._pos = 0

    @staticmethod
    def _tokenize(text: str) -> Iterator[str]:
        pos = 0
        while pos < len(text):
            match = _SMITHY_TOKEN.match(text, pos)
            if match is None:
                raise ValueError(f"unexpected character {text[pos]!r} at offset {pos}")
            pos = match.end()
            if match.lastgroup != "skip":
                yield match.group()

    def _next(self) -> str:
        if self._pos >= len(self._tokens):
            raise ValueError("unexpected end of model")
        self._pos += 1
        return self._tokens[self._pos - 1]

    def _peek(self) -> str | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _expect(self, token: str) -> None:
        found = self._next()
        if found != token:
            raise ValueError(f"expected {token!r}, found {found!r}")

    def _skip_value(self) -> None:
        """Skip a node value: a string, a word, or a bracketed list or object."""
        closing = {"[": "]", "{": "}", "(": ")"}
        token = self._next()
        if token not in closing:
            return
        while self._peek() != closing[token]:
            self._skip_value()
        self._next()

    def _identifier(self) -> str:
        token = self._next()
        if not _IDENTIFIER.fullmatch(token):
            raise ValueError(f"expected a name, found {token!r}")
        return token

    def _trait(self) -> str:
        name = self._next().rsplit("#", 1)[-1]
        if self._peek() == "(":
            self._skip_value()
        return name

    def shapes(self) -> dict[str, SmithyShape]:
        shapes: dict[str, SmithyShape] = {}
        while self._peek() is not None:
            token = self._next()
            if token == "@":
                self._trait()
            elif token in ("namespace", "use"):
                self._next()
            elif token.startswith("$"):  # a control statement: $version: "2"
                self._expect(":")
                self._skip_value()
            elif token == "metadata":  # metadata key = value
                self._next()
                self._expect("=")
                self._skip_value()
            elif token == "apply":  # apply Target @trait, or apply Target { @trait ... }
                self._next()
                if self._peek() == "@":
                    self._next()
                    self._trait()
                else:
                    self._skip_value()
            elif token in _SHAPE_KINDS:
                name = self._identifier()
                if self._peek() == "with":
                    self._next()
                    self._skip_value()
                members = self._members() if self._peek() == "{" else {}
                shapes[name] = SmithyShape(token, members)
            else:
                raise ValueError(f"unexpected {token!r}")
        return shapes

    def _members(self) -> dict[str, SmithyMember]:
        self._expect("{")
        members: dict[str, SmithyMember] = {}
        traits: list[str] = []
        while (token := self._next()) != "}":
            if token == "@":
                traits.append(self._trait())
                continue
            if not _IDENTIFIER.fullmatch(token):
                raise ValueError(f"expected a member name, found {token!r}")
            target = ""
            if self._peek() == ":":
                self._next()
                target = self._next().rsplit("#", 1)[-1]
            if self._peek() == "=":
                self._next()
                self._skip_value()
            members[token] = SmithyMember(target, "required" in traits)
            traits = []
        return members


@dataclass(frozen=True)
class FormModel:
    """A form type's Smithy model: enough of it to check a form's JSON content."""

    root: str
    shapes: dict[str, SmithyShape]

    @classmethod
    def parse(cls, smithy: str, form_type_name: str) -> FormModel:
        """Raises ValueError when the model cannot be read or names unknown shapes."""
        shapes = _SmithyParser(smithy).shapes()
        structures = [name for name, shape in shapes.items() if shape.kind == "structure"]
        root = form_type_name.rsplit(".", 1)[-1]
        if root not in structures:
            if len(structures) != 1:
                raise ValueError(f"the model must define the structure {root}")
            root = structures[0]
        for shape in shapes.values():
            for member in shape.members.values():
                if member.target and member.target not in shapes and member.target not in _PRELUDE:
                    raise ValueError(f"unknown shape {member.target}")
        return cls(root, shapes)

    def content_errors(self, form_name: str, content: Any) -> list[str]:
        """JSON-schema-style errors of ``content`` (AWS words them like networknt's validator)."""
        errors: list[str] = []
        self._check(self.root, content, f"$.{form_name}", errors)
        return errors

    def _kind(self, target: str) -> str:
        return self.shapes[target].kind if target in self.shapes else _PRELUDE[target]

    def _check(self, target: str, value: Any, path: str, errors: list[str]) -> None:
        expected = _JSON_TYPE_OF_KIND[self._kind(target)]
        found = _json_type(value)
        if expected != "any" and found != expected and (found, expected) != ("integer", "number"):
            errors.append(f"{path}: {found} found, {expected} expected")
            return
        shape = self.shapes.get(target)
        if shape is None:
            return
        if shape.kind in ("structure", "union"):
            self._check_structure(shape, value, path, errors)
        elif shape.kind in ("list", "set"):
            for index, item in enumerate(value):
                self._check(shape.members["member"].target, item, f"{path}[{index}]", errors)
        elif shape.kind == "map":
            for key, item in value.items():
                self._check(shape.members["value"].target, item, f"{path}.{key}", errors)

    def _check_structure(
        self, shape: SmithyShape, value: dict[str, Any], path: str, errors: list[str]
    ) -> None:
        for name, member in shape.members.items():
            if value.get(name) is None:
                if member.required:
                    errors.append(f"{path}.{name}: is missing but it is required")
            else:
                self._check(member.target, value[name], f"{path}.{name}", errors)
        for name in value.keys() - shape.members.keys():
            errors.append(
                f"{path}.{name}: is not defined in the schema and the schema does not allow "
                "additional properties"
            )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}[type(value)]


# --- catalog state ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TypeRevision:
    """What form type and asset type revisions have in common."""

    name: str
    revision: str
    owning_project_id: str | None  # None for the managed types
    description: str | None
    created_at: datetime
    created_by: str

    @property
    def ref(self) -> TypeRef:
        return TypeRef(self.name, self.revision)


@dataclass(frozen=True)
class FormTypeRevision(TypeRevision):
    smithy: str
    model: FormModel
    status: str


@dataclass(frozen=True)
class TypeRef:
    """A form type at one revision."""

    name: str
    revision: str

    def output(self) -> dict[str, str]:
        return {"typeName": self.name, "typeRevision": self.revision}

    def qualified(self, domain_id: str) -> str:
        """As DataZone's messages name it: ``amazon.datazone#GlueTableFormType@13``."""
        if self.name.startswith(MANAGED_PREFIX):
            return f"amazon.datazone#{self.name.removeprefix(MANAGED_PREFIX)}@{self.revision}"
        return f"{domain_id}#{self.name}@{self.revision}"


@dataclass(frozen=True)
class FormEntry:
    """A form an asset type declares."""

    type: TypeRef
    required: bool

    def output(self) -> dict[str, Any]:
        return {**self.type.output(), "required": self.required}


@dataclass(frozen=True)
class AssetTypeRevision(TypeRevision):
    forms: dict[str, FormEntry]


@dataclass(frozen=True)
class Form:
    """A form of an asset revision."""

    name: str
    type: TypeRef
    content: str

    def output(self) -> dict[str, str]:
        return {"formName": self.name, **self.type.output(), "content": self.content}


@dataclass(frozen=True)
class AssetRevision:
    revision: str
    name: str
    description: str | None
    type_revision: str
    forms: tuple[Form, ...]
    glossary_terms: tuple[str, ...]
    created_at: datetime
    created_by: str


@dataclass
class Asset:
    id: str
    owning_project_id: str
    type_name: str
    external_identifier: str | None
    lineage_node_id: str
    revisions: list[AssetRevision]

    @property
    def latest(self) -> AssetRevision:
        return self.revisions[-1]

    def source_identifier(self) -> str | None:
        """What links the asset to lineage: ``AssetCommonDetailsForm.sourceIdentifier``."""
        for form in self.latest.forms:
            if form.type.name == COMMON_DETAILS_FORM_TYPE:
                return json.loads(form.content or "{}").get("sourceIdentifier")
        return None


@dataclass(frozen=True)
class Project:
    id: str
    name: str
    description: str | None
    glossary_terms: tuple[str, ...]
    created_at: datetime
    created_by: str


# --- lineage state ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetRef:
    namespace: str
    name: str

    @property
    def source_identifier(self) -> str:
        # Glue's OpenLineage naming splits the table ARN at its colon, not at a slash.
        if _GLUE_NAMESPACE.fullmatch(self.namespace) and self.name.startswith("table/"):
            return f"{self.namespace}:{self.name}"
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class RunEvent:
    """The parts of an OpenLineage RunEvent that lineage nodes are made of."""

    event_type: str
    event_time: datetime
    run_id: str
    job: DatasetRef
    inputs: tuple[DatasetRef, ...]
    outputs: tuple[DatasetRef, ...]

    @classmethod
    def parse(cls, payload: bytes) -> RunEvent:
        try:
            event = json.loads(payload)
        except (UnicodeDecodeError, ValueError) as error:
            raise _invalid(f"The lineage event is not valid JSON: {error}") from error
        if not isinstance(event, dict):
            raise _invalid("The lineage event must be a JSON object")
        if "run" not in event:
            raise _invalid("Only OpenLineage RunEvents are supported (the event has no run)")
        event_type = event.get("eventType")
        if event_type not in RUN_EVENT_TYPES:
            raise _invalid(f"eventType must be one of {sorted(RUN_EVENT_TYPES)}")
        run, job = event.get("run"), event.get("job")
        if not isinstance(run, dict) or not isinstance(run.get("runId"), str):
            raise _invalid("run.runId is required")
        try:
            event_time = parse_timestamp(event["eventTime"]).astimezone(timezone.utc)
        except (KeyError, TypeError, ValueError) as error:
            raise _invalid("eventTime is required and must be an ISO 8601 date-time") from error
        return cls(
            event_type=event_type,
            event_time=event_time,
            run_id=run["runId"],
            job=_named(job, "job"),
            inputs=tuple(_named(d, "inputs[]") for d in _list(event, "inputs")),
            outputs=tuple(_named(d, "outputs[]") for d in _list(event, "outputs")),
        )

    def summary(self) -> dict[str, Any]:
        def name_identifier(ref: DatasetRef) -> dict[str, str]:
            return {"namespace": ref.namespace, "name": ref.name}

        return {
            "openLineageRunEventSummary": {
                "eventType": self.event_type,
                "runId": self.run_id,
                "job": name_identifier(self.job),
                "inputs": [name_identifier(ref) for ref in self.inputs],
                "outputs": [name_identifier(ref) for ref in self.outputs],
            }
        }


def _list(event: dict[str, Any], key: str) -> list[Any]:
    value = event.get(key) or []
    if not isinstance(value, list):
        raise _invalid(f"{key} must be a list")
    return value


def _named(value: Any, where: str) -> DatasetRef:
    if not isinstance(value, dict) or not all(
        isinstance(value.get(key), str) and value[key] for key in ("namespace", "name")
    ):
        raise _invalid(f"{where} needs a namespace and a name")
    return DatasetRef(value["namespace"], value["name"])


@dataclass(frozen=True)
class LineageEventRecord:
    id: str
    payload: bytes
    event: RunEvent
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class NodeVersion:
    """What one event said about a node."""

    event_id: str
    event_time: datetime
    recorded_at: datetime


@dataclass
class LineageNode:
    id: str
    type_name: str
    name: str
    source_identifier: str
    created_by: str
    versions: list[NodeVersion] = field(default_factory=list)
    #: neighbour node id -> the event times that drew the edge
    upstream: dict[str, list[datetime]] = field(default_factory=dict)
    downstream: dict[str, list[datetime]] = field(default_factory=dict)

    def version_at(self, when: datetime | None) -> NodeVersion | None:
        eligible = [v for v in self.versions if when is None or v.event_time <= when]
        return max(eligible, key=lambda v: v.event_time, default=None)


@dataclass(frozen=True)
class NodeView:
    """A lineage node as GetLineageNode and ListLineageNodeHistory show it."""

    id: str
    type_name: str
    type_revision: str
    name: str
    source_identifier: str
    event_time: datetime
    created_at: datetime
    created_by: str
    updated_at: datetime
    forms: tuple[Form, ...] = ()
    upstream: tuple[tuple[str, datetime], ...] = ()
    downstream: tuple[tuple[str, datetime], ...] = ()

    def summary(self, domain_id: str) -> dict[str, Any]:
        return {
            "domainId": domain_id,
            "id": self.id,
            "name": self.name,
            "typeName": self.type_name,
            "typeRevision": self.type_revision,
            "sourceIdentifier": self.source_identifier,
            "eventTimestamp": self.event_time,
            "createdAt": self.created_at,
            "createdBy": self.created_by,
            "updatedAt": self.updated_at,
            "updatedBy": self.created_by,
        }

    def output(self, domain_id: str) -> dict[str, Any]:
        def references(edges: tuple[tuple[str, datetime], ...]) -> list[dict[str, Any]]:
            return [{"id": node_id, "eventTimestamp": when} for node_id, when in edges[:100]]

        return {
            **self.summary(domain_id),
            "formsOutput": [form.output() for form in self.forms],
            "upstreamNodes": references(self.upstream),
            "downstreamNodes": references(self.downstream),
        }


class LineageGraph:
    """The lineage nodes and events of one domain, built from RunEvents."""

    def __init__(self) -> None:
        self.events: dict[str, LineageEventRecord] = {}
        self.nodes: dict[str, LineageNode] = {}
        self._by_source: dict[str, str] = {}

    def find(self, identifier: str) -> LineageNode | None:
        """The node with this id or sourceIdentifier, as GetLineageNode accepts either."""
        node_id = identifier if identifier in self.nodes else self._by_source.get(identifier)
        return self.nodes.get(node_id) if node_id else None

    def by_source(self, source_identifier: str) -> LineageNode | None:
        node_id = self._by_source.get(source_identifier)
        return self.nodes[node_id] if node_id else None

    def record(self, record: LineageEventRecord) -> None:
        event = record.event
        self.events[record.id] = record
        job = event.job
        run_source = f"{job.namespace}.{job.name}/{event.run_id}"
        job_node = self._node(JOB_NODE_TYPE, job.name, f"{job.namespace}.{job.name}", record)
        run_node = self._node(JOB_RUN_NODE_TYPE, job.name, run_source, record)
        inputs = [self._dataset_node(ref, record) for ref in event.inputs]
        outputs = [self._dataset_node(ref, record) for ref in event.outputs]
        for node in inputs:
            _link(node, run_node, event.event_time)
        for node in outputs:
            _link(run_node, node, event.event_time)
        touched = {node.id: node for node in (job_node, run_node, *inputs, *outputs)}
        for node in touched.values():
            node.versions.append(NodeVersion(record.id, event.event_time, record.created_at))

    def _dataset_node(self, ref: DatasetRef, record: LineageEventRecord) -> LineageNode:
        return self._node(DATASET_NODE_TYPE, ref.name, ref.source_identifier, record)

    def _node(
        self, type_name: str, name: str, source_identifier: str, record: LineageEventRecord
    ) -> LineageNode:
        node = self.by_source(source_identifier)
        if node is None:
            node = LineageNode(_new_id(), type_name, name, source_identifier, record.created_by)
            self.nodes[node.id] = node
            self._by_source[source_identifier] = node.id
        return node


def _link(upstream: LineageNode, downstream: LineageNode, when: datetime) -> None:
    upstream.downstream.setdefault(downstream.id, []).append(when)
    downstream.upstream.setdefault(upstream.id, []).append(when)


def _edges_at(
    edges: dict[str, list[datetime]], when: datetime | None
) -> tuple[tuple[str, datetime], ...]:
    """Each neighbour with the latest time (no later than ``when``) an event drew its edge."""
    result = []
    for node_id, times in edges.items():
        eligible = [t for t in times if when is None or t <= when]
        if eligible:
            result.append((node_id, max(eligible)))
    return tuple(result)


@dataclass
class Domain:
    id: str
    name: str
    description: str | None
    arn: str
    portal_url: str
    root_domain_unit_id: str
    execution_role: str
    service_role: str | None
    domain_version: str
    tags: dict[str, str]
    kms_key: str | None
    single_sign_on: dict[str, Any] | None
    created_at: datetime
    projects: dict[str, Project] = field(default_factory=dict)
    form_types: dict[str, list[FormTypeRevision]] = field(default_factory=dict)
    asset_types: dict[str, list[AssetTypeRevision]] = field(default_factory=dict)
    assets: dict[str, Asset] = field(default_factory=dict)
    lineage: LineageGraph = field(default_factory=LineageGraph)

    def output(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rootDomainUnitId": self.root_domain_unit_id,
            "name": self.name,
            "description": self.description,
            "singleSignOn": self.single_sign_on,
            "domainExecutionRole": self.execution_role,
            "arn": self.arn,
            "kmsKeyIdentifier": self.kms_key,
            "status": "AVAILABLE",
            "portalUrl": self.portal_url,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.created_at,
            "tags": self.tags,
            "domainVersion": self.domain_version,
            "serviceRole": self.service_role,
        }

    def project(self, identifier: str) -> Project:
        if identifier not in self.projects:
            raise _not_found(f"Project {identifier} not found in domain {self.id}")
        return self.projects[identifier]

    def local_name(self, type_identifier: str) -> str:
        """A type's name: identifiers may carry the domain id as a prefix (``dzd_x.MyType``)."""
        return type_identifier.removeprefix(f"{self.id}.")

    def form_type(self, identifier: str, revision: str | None) -> FormTypeRevision | None:
        return _revision_of(self.form_types.get(self.local_name(identifier), []), revision)

    def asset_type(self, identifier: str, revision: str | None) -> AssetTypeRevision | None:
        return _revision_of(self.asset_types.get(self.local_name(identifier), []), revision)

    def assets_linked_to(self, source_identifier: str) -> list[Asset]:
        return [a for a in self.assets.values() if a.source_identifier() == source_identifier]

    def node_views(
        self, identifier: str, when: datetime | None, every_version: bool = False
    ) -> list[NodeView]:
        """The lineage node ``identifier`` names (an event's node or an asset's), oldest version
        first: only its version at ``when`` (the latest by default) unless ``every_version``."""
        node = self.lineage.find(identifier)
        if node is not None:
            if every_version:
                versions = sorted(node.versions, key=lambda v: v.event_time)
            else:
                versions = [v for v in [node.version_at(when)] if v is not None]
            return [self._event_node_view(node, version) for version in versions]
        asset = self._asset_of_node(identifier)
        if asset is None:
            return []
        revisions = [r for r in asset.revisions if when is None or r.created_at <= when]
        if not every_version:
            revisions = revisions[-1:]
        return [self._asset_node_view(asset, revision) for revision in revisions]

    def _asset_of_node(self, identifier: str) -> Asset | None:
        asset_id = identifier.removeprefix(ASSET_SOURCE_IDENTIFIER_PREFIX)
        if asset_id in self.assets:
            return self.assets[asset_id]
        return next((a for a in self.assets.values() if a.lineage_node_id == identifier), None)

    def _event_node_view(self, node: LineageNode, version: NodeVersion) -> NodeView:
        when = version.event_time
        downstream = _edges_at(node.downstream, when)
        if node.type_name == DATASET_NODE_TYPE:
            linked = self.assets_linked_to(node.source_identifier)
            downstream += tuple((a.lineage_node_id, a.latest.created_at) for a in linked)
        return NodeView(
            id=node.id,
            type_name=node.type_name,
            type_revision=NODE_TYPE_REVISION,
            name=node.name,
            source_identifier=node.source_identifier,
            event_time=when,
            created_at=node.versions[0].recorded_at,
            created_by=node.created_by,
            updated_at=version.recorded_at,
            upstream=_edges_at(node.upstream, when),
            downstream=downstream,
        )

    def _asset_node_view(self, asset: Asset, revision: AssetRevision) -> NodeView:
        source = asset.source_identifier()
        dataset = self.lineage.by_source(source) if source else None
        upstream: tuple[tuple[str, datetime], ...] = ()
        if dataset is not None:
            upstream = ((dataset.id, max(v.event_time for v in dataset.versions)),)
        return NodeView(
            id=asset.lineage_node_id,
            type_name=asset.type_name,
            type_revision=revision.type_revision,
            name=revision.name,
            source_identifier=f"{ASSET_SOURCE_IDENTIFIER_PREFIX}{asset.id}",
            event_time=revision.created_at,
            created_at=asset.revisions[0].created_at,
            created_by=asset.revisions[0].created_by,
            updated_at=revision.created_at,
            forms=revision.forms,
            upstream=upstream,
        )


def _revision_of(history: list[R], revision: str | None) -> R | None:
    if not history:
        return None
    if revision is None:
        return history[-1]
    return next((r for r in history if r.revision == revision), None)


def _add_revision(history: list[R], is_same: Callable[[R], bool], build: Callable[[str], R]) -> R:
    """Types are immutable: the latest revision if it is the same, else a new revision n+1."""
    if history and is_same(history[-1]):
        return history[-1]
    number = int(history[-1].revision) + 1 if history else 1
    history.append(build(str(number)))
    return history[-1]


# --- the emulator -----------------------------------------------------------------------------


class DataZoneEmulator:
    """DataZone for one region and account, all state in the instance."""

    def __init__(self, *, region: str, account_id: str) -> None:
        self.region = region
        self.account_id = account_id
        self.user_id = _new_id()
        self._domains: dict[str, Domain] = {}
        self._service = RestJsonService(
            "datazone",
            {
                "CreateDomain": self._create_domain,
                "GetDomain": self._get_domain,
                "CreateProject": self._create_project,
                "GetProject": self._get_project,
                "CreateFormType": self._create_form_type,
                "GetFormType": self._get_form_type,
                "CreateAssetType": self._create_asset_type,
                "GetAssetType": self._get_asset_type,
                "CreateAsset": self._create_asset,
                "GetAsset": self._get_asset,
                "CreateAssetRevision": self._create_asset_revision,
                "ListAssetRevisions": self._list_asset_revisions,
                "DeleteAsset": self._delete_asset,
                "Search": self._search,
                "PostLineageEvent": self._post_lineage_event,
                "GetLineageNode": self._get_lineage_node,
                "ListLineageNodeHistory": self._list_lineage_node_history,
                "ListLineageEvents": self._list_lineage_events,
                "GetLineageEvent": self._get_lineage_event,
            },
        )

    def handle(self, request: Request) -> Response:
        return self._service.handle(request)

    def _domain(self, params: dict[str, Any], key: str = "domainIdentifier") -> Domain:
        domain = self._domains.get(params[key])
        if domain is None:
            raise _not_found(f"Domain {params[key]} not found")
        return domain

    # domains and projects

    def _create_domain(self, params: dict[str, Any]) -> dict[str, Any]:
        if any(d.name == params["name"] for d in self._domains.values()):
            raise AwsServiceError("ConflictException", f"Domain {params['name']} already exists")
        domain_id = f"dzd_{_new_id()}"
        default_role = f"arn:aws:iam::{self.account_id}:role/AmazonDataZoneDomainExecution"
        domain = Domain(
            id=domain_id,
            name=params["name"],
            description=params.get("description"),
            arn=f"arn:aws:datazone:{self.region}:{self.account_id}:domain/{domain_id}",
            portal_url=f"https://{domain_id}.datazone.{self.region}.on.aws",
            root_domain_unit_id=_new_id(),
            execution_role=params.get("domainExecutionRole") or default_role,
            service_role=params.get("serviceRole"),
            domain_version=params.get("domainVersion") or "V1",
            tags=params.get("tags") or {},
            kms_key=params.get("kmsKeyIdentifier"),
            single_sign_on=params.get("singleSignOn"),
            created_at=_now(),
        )
        self._seed_managed_types(domain)
        self._domains[domain_id] = domain
        return domain.output()

    @staticmethod
    def _seed_managed_types(domain: Domain) -> None:
        def managed(name: str, revision: str) -> dict[str, Any]:
            return {
                "name": name,
                "revision": revision,
                "owning_project_id": None,
                "description": None,
                "created_at": domain.created_at,
                "created_by": "SYSTEM",
            }

        for name, (revision, smithy) in _MANAGED_FORM_TYPES.items():
            model = FormModel.parse(smithy, name)
            domain.form_types[name] = [
                FormTypeRevision(
                    smithy=smithy, model=model, status="ENABLED", **managed(name, revision)
                )
            ]
        for name, (revision, forms) in _MANAGED_ASSET_TYPES.items():
            entries = {
                form_name: FormEntry(
                    TypeRef(type_name, _MANAGED_FORM_TYPES[type_name][0]), required
                )
                for form_name, (type_name, required) in forms.items()
            }
            domain.asset_types[name] = [
                AssetTypeRevision(forms=_with_common_details(entries), **managed(name, revision))
            ]

    def _get_domain(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._domain(params, "identifier").output()

    def _create_project(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        if any(p.name == params["name"] for p in domain.projects.values()):
            raise AwsServiceError(
                "ConflictException", f"A project named {params['name']} already exists"
            )
        project = Project(
            id=_new_id(),
            name=params["name"],
            description=params.get("description"),
            glossary_terms=tuple(params.get("glossaryTerms") or ()),
            created_at=_now(),
            created_by=self.user_id,
        )
        domain.projects[project.id] = project
        return self._project_output(domain, project)

    def _get_project(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        return self._project_output(domain, domain.project(params["identifier"]))

    @staticmethod
    def _project_output(domain: Domain, project: Project) -> dict[str, Any]:
        return {
            "domainId": domain.id,
            "id": project.id,
            "name": project.name,
            "description": project.description,
            "projectStatus": "ACTIVE",
            "createdBy": project.created_by,
            "createdAt": project.created_at,
            "lastUpdatedAt": project.created_at,
            "glossaryTerms": list(project.glossary_terms) or None,
            "domainUnitId": domain.root_domain_unit_id,
        }

    # form and asset types

    def _create_form_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        project = domain.project(params["owningProjectIdentifier"])
        name = params["name"]
        if name.startswith(MANAGED_PREFIX):
            raise _invalid(f"Form type names starting with {MANAGED_PREFIX} are reserved")
        smithy = params["model"]["smithy"]
        try:
            model = FormModel.parse(smithy, name)
        except ValueError as error:
            raise _invalid(f"Invalid Smithy model for form type {name}: {error}") from error
        form_type = _add_revision(
            domain.form_types.setdefault(name, []),
            lambda latest: latest.smithy == smithy,
            lambda revision: FormTypeRevision(
                name=name,
                revision=revision,
                smithy=smithy,
                model=model,
                owning_project_id=project.id,
                status=params.get("status") or "ENABLED",
                description=params.get("description"),
                created_at=_now(),
                created_by=self.user_id,
            ),
        )
        return {**self._type_origin(domain, form_type), "description": form_type.description}

    def _get_form_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        form_type = domain.form_type(params["formTypeIdentifier"], params.get("revision"))
        if form_type is None:
            raise _not_found(f"Form type {params['formTypeIdentifier']} not found")
        return {
            **self._type_origin(domain, form_type),
            "model": {"smithy": form_type.smithy},
            "status": form_type.status,
            "createdAt": form_type.created_at,
            "createdBy": form_type.created_by,
            "description": form_type.description,
        }

    @staticmethod
    def _type_origin(domain: Domain, type_revision: TypeRevision) -> dict[str, Any]:
        return {
            "domainId": domain.id,
            "name": type_revision.name,
            "revision": type_revision.revision,
            "owningProjectId": type_revision.owning_project_id,
            "originDomainId": domain.id,
            "originProjectId": type_revision.owning_project_id,
        }

    def _create_asset_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        project = domain.project(params["owningProjectIdentifier"])
        name = params["name"]
        entries = {}
        for form_name, entry in params["formsInput"].items():
            form_type = domain.form_type(entry["typeIdentifier"], entry["typeRevision"])
            if form_type is None:
                name_given = domain.local_name(entry["typeIdentifier"])
                raise _unknown_form_type(domain, name_given, entry["typeRevision"])
            entries[form_name] = FormEntry(form_type.ref, bool(entry.get("required")))
        forms = _with_common_details(entries)
        now = _now()
        asset_type = _add_revision(
            domain.asset_types.setdefault(name, []),
            lambda latest: (
                latest.forms == forms and latest.description == params.get("description")
            ),
            lambda revision: AssetTypeRevision(
                name=name,
                revision=revision,
                owning_project_id=project.id,
                description=params.get("description"),
                created_at=now,
                created_by=self.user_id,
                forms=forms,
            ),
        )
        return self._asset_type_output(domain, asset_type)

    def _get_asset_type(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset_type = domain.asset_type(params["identifier"], params.get("revision"))
        if asset_type is None:
            raise _not_found(f"Asset type {params['identifier']} not found")
        return self._asset_type_output(domain, asset_type)

    def _asset_type_output(self, domain: Domain, asset_type: AssetTypeRevision) -> dict[str, Any]:
        return {
            **self._type_origin(domain, asset_type),
            "description": asset_type.description,
            "formsOutput": {name: entry.output() for name, entry in asset_type.forms.items()},
            "createdAt": asset_type.created_at,
            "createdBy": asset_type.created_by,
            "updatedAt": asset_type.created_at,
            "updatedBy": asset_type.created_by,
        }

    # assets

    def _create_asset(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        project = domain.project(params["owningProjectIdentifier"])
        external_identifier = params.get("externalIdentifier")
        if external_identifier and any(
            a.external_identifier == external_identifier for a in domain.assets.values()
        ):
            raise AwsServiceError(
                "ConflictException",
                f"An asset with externalIdentifier {external_identifier} already exists",
            )
        asset_type = domain.asset_type(params["typeIdentifier"], params.get("typeRevision"))
        if asset_type is None:
            raise _not_found(
                "The given Asset's input resource doesn't exist. "
                "Try creating Asset's input resource before accessing it."
            )
        asset = Asset(
            id=_new_id(),
            owning_project_id=project.id,
            type_name=asset_type.name,
            external_identifier=external_identifier,
            lineage_node_id=_new_id(),
            revisions=[self._asset_revision(domain, asset_type, params, "1")],
        )
        domain.assets[asset.id] = asset
        return self._asset_output(domain, asset, asset.latest)

    def _create_asset_revision(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset = self._asset(domain, params["identifier"])
        asset_type = domain.asset_type(asset.type_name, params.get("typeRevision"))
        if asset_type is None:
            raise _not_found(f"Asset type {asset.type_name}@{params['typeRevision']} not found")
        revision = str(int(asset.latest.revision) + 1)
        asset.revisions.append(self._asset_revision(domain, asset_type, params, revision))
        return self._asset_output(domain, asset, asset.latest)

    def _asset_revision(
        self,
        domain: Domain,
        asset_type: AssetTypeRevision,
        params: dict[str, Any],
        revision: str,
    ) -> AssetRevision:
        return AssetRevision(
            revision=revision,
            name=params["name"],
            description=params.get("description"),
            type_revision=asset_type.revision,
            forms=tuple(self._checked_forms(domain, asset_type, params.get("formsInput") or [])),
            glossary_terms=tuple(params.get("glossaryTerms") or ()),
            created_at=_now(),
            created_by=self.user_id,
        )

    def _checked_forms(
        self, domain: Domain, asset_type: AssetTypeRevision, forms_input: list[dict[str, Any]]
    ) -> Iterator[Form]:
        """The forms of an asset revision, each checked against its type and content model."""
        names = [form["formName"] for form in forms_input]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise _invalid(f"Forms {duplicates} are given more than once")
        missing = [n for n, e in asset_type.forms.items() if e.required and n not in names]
        if missing:
            raise _invalid(f"Asset type {asset_type.name} requires the forms {missing}")
        for form_input in forms_input:
            form_type = self._form_type_for(domain, asset_type, form_input)
            content = form_input.get("content") or "{}"
            try:
                parsed = json.loads(content)
            except ValueError as error:
                raise _invalid(f"Form {form_input['formName']} content is not JSON") from error
            errors = form_type.model.content_errors(form_input["formName"], parsed)
            if errors:
                raise _invalid(", ".join(errors))
            yield Form(form_input["formName"], form_type.ref, content)

    @staticmethod
    def _form_type_for(
        domain: Domain, asset_type: AssetTypeRevision, form_input: dict[str, Any]
    ) -> FormTypeRevision:
        name = form_input["formName"]
        given_type, given_revision = (
            form_input.get("typeIdentifier"),
            form_input.get("typeRevision"),
        )
        declared = asset_type.forms.get(name)
        if declared is None:
            # A form the asset type does not declare is attached as it is given.
            if not given_type:
                raise _invalid(f"Form {name} is not in asset type {asset_type.name}: give its type")
            type_name, revision = domain.local_name(given_type), given_revision
        else:
            given = TypeRef(
                domain.local_name(given_type or declared.type.name),
                given_revision or declared.type.revision,
            )
            if given != declared.type:
                expected, provided = declared.type.qualified(domain.id), given.qualified(domain.id)
                raise _invalid(f"Form {name} expected form {expected} but was provided {provided}")
            type_name, revision = given.name, given.revision
        form_type = domain.form_type(type_name, revision)
        if form_type is None:
            raise _unknown_form_type(domain, type_name, revision)
        return form_type

    @staticmethod
    def _asset(domain: Domain, identifier: str) -> Asset:
        if identifier not in domain.assets:
            raise _not_found(
                "The given Asset doesn't exist. Try creating Asset before accessing it."
            )
        return domain.assets[identifier]

    def _get_asset(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset = self._asset(domain, params["identifier"])
        revision = _revision_of(asset.revisions, params.get("revision"))
        if revision is None:
            raise _not_found(f"Revision {params['revision']} of asset {asset.id} doesn't exist")
        return self._asset_output(domain, asset, revision)

    @staticmethod
    def _asset_output(domain: Domain, asset: Asset, revision: AssetRevision) -> dict[str, Any]:
        first = asset.revisions[0]
        return {
            "id": asset.id,
            "name": revision.name,
            "typeIdentifier": asset.type_name,
            "typeRevision": revision.type_revision,
            "externalIdentifier": asset.external_identifier,
            "revision": revision.revision,
            "description": revision.description,
            "createdAt": revision.created_at,
            "createdBy": revision.created_by,
            "firstRevisionCreatedAt": first.created_at,
            "firstRevisionCreatedBy": first.created_by,
            "glossaryTerms": list(revision.glossary_terms) or None,
            "owningProjectId": asset.owning_project_id,
            "domainId": domain.id,
            "formsOutput": [form.output() for form in revision.forms],
            "readOnlyFormsOutput": [],
        }

    def _list_asset_revisions(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        asset = self._asset(domain, params["identifier"])
        newest_first = list(reversed(asset.revisions))
        page, next_token = self._service.page(newest_first, params, default_size=50)
        items = [
            {
                "domainId": domain.id,
                "id": asset.id,
                "revision": r.revision,
                "createdBy": r.created_by,
                "createdAt": r.created_at,
            }
            for r in page
        ]
        return {"items": items, "nextToken": next_token}

    def _delete_asset(self, params: dict[str, Any]) -> None:
        domain = self._domain(params)
        del domain.assets[self._asset(domain, params["identifier"]).id]

    # search

    def _search(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        matches = []
        if params["searchScope"] == "ASSET":
            matches = [asset for asset in domain.assets.values() if _search_matches(asset, params)]
        sort = params.get("sort")
        if sort:
            matches.sort(
                key=lambda a: _sort_key(a, sort["attribute"]),
                reverse=sort.get("order") == "DESCENDING",
            )
        page, next_token = self._service.page(matches, params, default_size=50)
        with_forms = "FORMS" in (params.get("additionalAttributes") or [])
        items = [{"assetItem": _asset_item(domain, a, with_forms)} for a in page]
        return {"items": items, "nextToken": next_token, "totalMatchCount": len(matches)}

    # lineage

    def _post_lineage_event(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        record = LineageEventRecord(
            id=_new_id(),
            payload=params["event"],
            event=RunEvent.parse(params["event"]),
            created_at=_now(),
            created_by=self.user_id,
        )
        domain.lineage.record(record)
        return {"id": record.id, "domainId": domain.id}

    def _get_lineage_node(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        when = params.get("eventTimestamp")
        views = domain.node_views(params["identifier"], when)
        if not views:
            raise _not_found(f"Lineage node {params['identifier']} not found")
        return views[-1].output(domain.id)

    def _list_lineage_node_history(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        views = domain.node_views(params["identifier"], None, every_version=True)
        if not views:
            raise _not_found(f"Lineage node {params['identifier']} not found")
        direction = params.get("direction")
        after, before = params.get("eventTimestampGTE"), params.get("eventTimestampLTE")
        selected = [
            view
            for view in views
            if (after is None or view.event_time >= after)
            and (before is None or view.event_time <= before)
            and (direction != "UPSTREAM" or view.upstream)
            and (direction != "DOWNSTREAM" or view.downstream)
        ]
        if params.get("sortOrder", "DESCENDING") == "DESCENDING":
            selected.reverse()
        page, next_token = self._service.page(selected, params, default_size=50)
        return {"nodes": [view.summary(domain.id) for view in page], "nextToken": next_token}

    def _list_lineage_events(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        after, before = params.get("timestampAfter"), params.get("timestampBefore")
        status = params.get("processingStatus")
        records = [
            r
            for r in domain.lineage.events.values()
            if (after is None or r.event.event_time >= after)
            and (before is None or r.event.event_time <= before)
            and status in (None, "SUCCESS")
        ]
        records.sort(
            key=lambda r: r.event.event_time, reverse=params.get("sortOrder") != "ASCENDING"
        )
        page, next_token = self._service.page(records, params, default_size=50)
        items = [
            {
                "id": r.id,
                "domainId": domain.id,
                "processingStatus": "SUCCESS",
                "eventTime": r.event.event_time,
                "eventSummary": r.event.summary(),
                "createdBy": r.created_by,
                "createdAt": r.created_at,
            }
            for r in page
        ]
        return {"items": items, "nextToken": next_token}

    def _get_lineage_event(self, params: dict[str, Any]) -> dict[str, Any]:
        domain = self._domain(params)
        record = domain.lineage.events.get(params["identifier"])
        if record is None:
            raise _not_found(f"Lineage event {params['identifier']} not found")
        return {
            "domainId": domain.id,
            "id": record.id,
            "event": record.payload,
            "createdBy": record.created_by,
            "processingStatus": "SUCCESS",
            "eventTime": record.event.event_time,
            "createdAt": record.created_at,
        }


def _unknown_form_type(domain: Domain, name: str, revision: str | None) -> AwsServiceError:
    return _invalid(f"Object type Form#{domain.id}#{name} with version {revision} not found")


def _with_common_details(entries: dict[str, FormEntry]) -> dict[str, FormEntry]:
    """Every asset type carries the optional AssetCommonDetailsForm, as DataZone adds it."""
    revision = _MANAGED_FORM_TYPES[COMMON_DETAILS_FORM_TYPE][0]
    common = FormEntry(TypeRef(COMMON_DETAILS_FORM_TYPE, revision), required=False)
    return {COMMON_DETAILS_FORM: common, **entries}


# --- search helpers ---------------------------------------------------------------------------


def _searchable_values(asset: Asset) -> dict[str, list[Any]]:
    """Each attribute a search can name, with the asset's values for it."""
    revision = asset.latest
    short_type = asset.type_name.removeprefix(MANAGED_PREFIX)
    values: dict[str, list[Any]] = {
        "name": [revision.name],
        "description": [revision.description] if revision.description else [],
        "typeName": [asset.type_name, short_type],
        "typeIdentifier": [asset.type_name, short_type],
        "owningProjectId": [asset.owning_project_id],
        "externalIdentifier": [asset.external_identifier] if asset.external_identifier else [],
        "glossaryTerms": list(revision.glossary_terms),
    }
    for form in revision.forms:
        for key, value in json.loads(form.content or "{}").items():
            for prefix in (form.name, form.type.name):
                values.setdefault(f"{prefix}.{key}", []).extend(_scalars(value))
    return values


def _scalars(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    else:
        yield value


def _search_matches(asset: Asset, params: dict[str, Any]) -> bool:
    values = _searchable_values(asset)
    project = params.get("owningProjectIdentifier")
    if project and asset.owning_project_id != project:
        return False
    text = params.get("searchText")
    if text:
        attributes = [item["attribute"] for item in params.get("searchIn") or []] or list(values)
        needle = text.lower()
        haystack = [str(v).lower() for a in attributes for v in values.get(a, [])]
        if not any(needle in value for value in haystack):
            return False
    clause = params.get("filters")
    return clause is None or _clause_matches(clause, values)


def _clause_matches(clause: dict[str, Any], values: dict[str, list[Any]]) -> bool:
    if "and" in clause:
        return all(_clause_matches(c, values) for c in clause["and"])
    if "or" in clause:
        return any(_clause_matches(c, values) for c in clause["or"])
    condition = clause["filter"]
    candidates = values.get(condition["attribute"], [])
    operator = condition.get("operator") or "EQ"
    if "intValue" in condition:
        wanted = condition["intValue"]
        numbers = [v for v in candidates if isinstance(v, (int, float)) and not isinstance(v, bool)]
        compare = {
            "EQ": lambda v: v == wanted,
            "LE": lambda v: v <= wanted,
            "LT": lambda v: v < wanted,
            "GE": lambda v: v >= wanted,
            "GT": lambda v: v > wanted,
        }.get(operator, lambda v: False)
        return any(compare(v) for v in numbers)
    wanted = condition.get("value", "")
    if operator == "TEXT_SEARCH":
        return any(wanted.lower() in str(v).lower() for v in candidates)
    return any(str(v) == wanted for v in candidates)


def _sort_key(asset: Asset, attribute: str) -> Any:
    if attribute == "createdAt":
        return asset.revisions[0].created_at.timestamp()
    if attribute == "updatedAt":
        return asset.latest.created_at.timestamp()
    return str(next(iter(_searchable_values(asset).get(attribute, [])), ""))


def _asset_item(domain: Domain, asset: Asset, with_forms: bool) -> dict[str, Any]:
    revision, first = asset.latest, asset.revisions[0]
    item = {
        "domainId": domain.id,
        "identifier": asset.id,
        "name": revision.name,
        "typeIdentifier": asset.type_name,
        "typeRevision": revision.type_revision,
        "externalIdentifier": asset.external_identifier,
        "description": revision.description,
        "createdAt": revision.created_at,
        "createdBy": revision.created_by,
        "firstRevisionCreatedAt": first.created_at,
        "firstRevisionCreatedBy": first.created_by,
        "glossaryTerms": list(revision.glossary_terms) or None,
        "owningProjectId": asset.owning_project_id,
    }
    if with_forms:
        item["additionalAttributes"] = {"formsOutput": [f.output() for f in revision.forms]}
    return item
