"""Columns of a Protobuf schema registered in the Glue Schema Registry (``DataFormat=PROTOBUF``).

A PROTOBUF schema version's ``SchemaDefinition`` is the text of one ``.proto`` file (proto2 or
proto3; GSR supports neither extensions nor groups). It is compiled by ``protoc`` itself, the one
``grpcio-tools`` ships (run as a child process, so that its messages can be captured and a crash
can't take the run down), into a ``FileDescriptorSet`` read with ``protobuf``'s own classes:
imports, nested messages, ``oneof``, maps, ``optional``, enums and name resolution are protoc's.
Imports resolve among the well-known types protoc bundles (``google/protobuf/*.proto``); GSR
stores one file per schema, so no other import can be satisfied, and such a schema is refused
with protoc's message.

Which message is the row: GSR's serializer writes, per record, the index of its message among
all messages of the file (``MessageIndexFinder``), so the schema alone does not say it; as for
Confluent's default, the row is the file's **first top-level message**, and a file with more
than one says so in the row's ``origin``. A message field is a struct column with its
fields, as for Avro records (docs/columns.md); leading comments are the columns' descriptions.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path

from google.protobuf import descriptor_pb2

from dzlineage_dagster.core.schemas.avro import Column, RowSchema, struct_type

FieldProto = descriptor_pb2.FieldDescriptorProto

#: Protobuf scalars as the readable type names the Avro reader uses where one means the same;
#: unsigned and fixed-width integers keep their Protobuf names (no Avro type says unsigned).
SCALAR_TYPES = {
    FieldProto.TYPE_DOUBLE: "double",
    FieldProto.TYPE_FLOAT: "float",
    FieldProto.TYPE_INT32: "int",
    FieldProto.TYPE_SINT32: "int",
    FieldProto.TYPE_SFIXED32: "int",
    FieldProto.TYPE_INT64: "long",
    FieldProto.TYPE_SINT64: "long",
    FieldProto.TYPE_SFIXED64: "long",
    FieldProto.TYPE_UINT32: "uint32",
    FieldProto.TYPE_FIXED32: "fixed32",
    FieldProto.TYPE_UINT64: "uint64",
    FieldProto.TYPE_FIXED64: "fixed64",
    FieldProto.TYPE_BOOL: "boolean",
    FieldProto.TYPE_STRING: "string",
    FieldProto.TYPE_BYTES: "bytes",
}

#: Well-known message types read as the value they stand for, not as their own fields.
WELL_KNOWN_TYPES = {
    ".google.protobuf.Timestamp": "timestamp",
    ".google.protobuf.Duration": "duration",
    ".google.protobuf.DoubleValue": "double",
    ".google.protobuf.FloatValue": "float",
    ".google.protobuf.Int64Value": "long",
    ".google.protobuf.UInt64Value": "uint64",
    ".google.protobuf.Int32Value": "int",
    ".google.protobuf.UInt32Value": "uint32",
    ".google.protobuf.BoolValue": "boolean",
    ".google.protobuf.StringValue": "string",
    ".google.protobuf.BytesValue": "bytes",
    ".google.protobuf.Struct": "json",
    ".google.protobuf.Value": "json",
    ".google.protobuf.ListValue": "array<json>",
    ".google.protobuf.Any": "any",
    ".google.protobuf.FieldMask": "string",
    ".google.protobuf.Empty": "struct<>",
}

_SCHEMA_FILE = "schema.proto"
_PROTOC_SECONDS = 60
# FileDescriptorProto.message_type and DescriptorProto.field / nested_type field numbers, the
# steps of a SourceCodeInfo location path.
_MESSAGE_TYPE, _FIELD, _NESTED_TYPE = 4, 2, 3


class InvalidProtobufSchema(ValueError):
    """protoc refused the definition; the message is protoc's, with line and column."""


def parse_protobuf_row_schema(schema_definition: str) -> RowSchema:
    """The columns of the first top-level message of ``schema_definition`` (``.proto`` text).

    A file without messages (only enums, say) has no columns. Raises InvalidProtobufSchema
    with protoc's reason when the text does not compile.
    """
    files = _compile(schema_definition)
    schema_file = files[-1]  # --include_imports lists dependencies first
    if not schema_file.message_type:
        return RowSchema([], debezium_envelope=False, origin="no message")
    reader = _Reader(files, schema_file)
    first = schema_file.message_type[0]
    full_name = reader.full_name(first.name)
    columns = reader.columns(full_name, frozenset({full_name}))
    others = len(schema_file.message_type) - 1
    origin = f"message {full_name.lstrip('.')}"
    if others:
        origin += f" (the first of {others + 1} top-level messages)"
    return RowSchema(columns, debezium_envelope=False, origin=origin)


def _compile(schema_definition: str) -> list[descriptor_pb2.FileDescriptorProto]:
    well_known = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="dzlineage-proto-") as folder:
        Path(folder, _SCHEMA_FILE).write_text(schema_definition, encoding="utf-8")
        output = Path(folder, "descriptors.pb")
        try:
            completed = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "grpc_tools.protoc",
                    f"--proto_path={folder}",
                    f"--proto_path={well_known}",
                    "--include_imports",
                    "--include_source_info",
                    f"--descriptor_set_out={output}",
                    _SCHEMA_FILE,
                ],
                capture_output=True,
                text=True,
                timeout=_PROTOC_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise InvalidProtobufSchema(
                f"protoc did not finish compiling the schema in {_PROTOC_SECONDS} s"
            ) from None
        if completed.returncode != 0:
            reason = completed.stderr.strip().replace(f"{folder}/", "") or "no reason given"
            if "File not found" in reason:
                reason += (
                    " (a registry schema is one .proto file: only the well-known types' "
                    "google/protobuf/*.proto imports resolve)"
                )
            raise InvalidProtobufSchema(f"protoc refused the schema: {reason}")
        descriptors = descriptor_pb2.FileDescriptorSet.FromString(output.read_bytes())
    return list(descriptors.file)


class _Reader:
    """Messages and enums of the compiled files by full name (``.pkg.Outer.Inner``), and the
    leading comments of the schema file's fields."""

    def __init__(
        self,
        files: list[descriptor_pb2.FileDescriptorProto],
        schema_file: descriptor_pb2.FileDescriptorProto,
    ) -> None:
        self.package = schema_file.package
        self.messages: dict[str, descriptor_pb2.DescriptorProto] = {}
        self.enums: dict[str, descriptor_pb2.EnumDescriptorProto] = {}
        self.paths: dict[str, tuple[int, ...]] = {}
        self.proto2: dict[str, bool] = {}
        for file in files:
            prefix = f".{file.package}" if file.package else ""
            for index, message in enumerate(file.message_type):
                self._add(message, prefix, (_MESSAGE_TYPE, index), file is schema_file, file.syntax)
            for enum in file.enum_type:
                self.enums[f"{prefix}.{enum.name}"] = enum
        self.comments = {
            tuple(location.path): location.leading_comments.strip()
            for location in schema_file.source_code_info.location
            if location.leading_comments.strip()
        }

    def _add(
        self,
        message: descriptor_pb2.DescriptorProto,
        prefix: str,
        path: tuple[int, ...],
        in_schema_file: bool,
        syntax: str,
    ) -> None:
        full_name = f"{prefix}.{message.name}"
        self.messages[full_name] = message
        # Files without a syntax statement are proto2 (protoc leaves `syntax` empty then).
        self.proto2[full_name] = syntax in ("", "proto2")
        if in_schema_file:
            self.paths[full_name] = path
        for index, nested in enumerate(message.nested_type):
            self._add(nested, full_name, (*path, _NESTED_TYPE, index), in_schema_file, syntax)
        for enum in message.enum_type:
            self.enums[f"{full_name}.{enum.name}"] = enum

    def full_name(self, name: str) -> str:
        return f".{self.package}.{name}" if self.package else f".{name}"

    def columns(self, message_name: str, enclosing: frozenset[str]) -> list[Column]:
        """The fields of a message in declaration order; ``enclosing`` holds the messages being
        expanded, so that a recursive message reads as its name where it recurs."""
        message = self.messages[message_name]
        path = self.paths.get(message_name)
        columns = []
        for index, field in enumerate(message.field):
            readable, fields, symbols = self._shape(field, enclosing)
            comment = self.comments.get((*path, _FIELD, index)) if path else None
            in_oneof = field.HasField("oneof_index") and not field.proto3_optional
            if in_oneof:
                oneof = message.oneof_decl[field.oneof_index].name
                comment = f"oneof {oneof}" + (f": {comment}" if comment else "")
            columns.append(
                Column(
                    name=field.name,
                    type=readable,
                    nullable=self._nullable(field, message_name) or in_oneof,
                    description=comment or None,
                    fields=fields,
                    symbols=symbols,
                )
            )
        return columns

    def _nullable(self, field: FieldProto, message_name: str) -> bool:
        """Whether a field can be absent: a message, an explicit ``optional``, any proto2
        optional field; a proto3 scalar reads as its default and a repeated field as empty."""
        if field.label == FieldProto.LABEL_REPEATED:
            return False
        if field.type in (FieldProto.TYPE_MESSAGE, FieldProto.TYPE_GROUP):
            return True
        if field.proto3_optional:
            return True
        return self.proto2[message_name] and field.label == FieldProto.LABEL_OPTIONAL

    def _shape(
        self, field: FieldProto, enclosing: frozenset[str]
    ) -> tuple[str, tuple[Column, ...], tuple[str, ...]]:
        entry = self.messages.get(field.type_name)
        if entry is not None and entry.options.map_entry:
            key, value = entry.field
            value_type, fields, symbols = self._element(value, enclosing)
            return f"map<{self._element(key, enclosing)[0]},{value_type}>", fields, symbols
        readable, fields, symbols = self._element(field, enclosing)
        if field.label == FieldProto.LABEL_REPEATED:
            readable = f"array<{readable}>"
        return readable, fields, symbols

    def _element(
        self, field: FieldProto, enclosing: frozenset[str]
    ) -> tuple[str, tuple[Column, ...], tuple[str, ...]]:
        if field.type in SCALAR_TYPES:
            return SCALAR_TYPES[field.type], (), ()
        if field.type == FieldProto.TYPE_ENUM:
            enum = self.enums[field.type_name]
            return "enum", (), tuple(value.name for value in enum.value)
        name = field.type_name
        if name in WELL_KNOWN_TYPES:
            return WELL_KNOWN_TYPES[name], (), ()
        if name in enclosing:
            return name.lstrip("."), (), ()
        fields = tuple(self.columns(name, enclosing | {name}))
        return struct_type(fields), fields, ()
