"""The sandbox answers what moto lacks or gets wrong the way AWS does, through real boto3 calls."""

from __future__ import annotations

import json
import re
import time
import uuid

import botocore.session
import pytest
from botocore.exceptions import ClientError

AWS_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
BROKER_HOST = re.compile(r"b-(\d)\.cdcdemo\.[0-9a-f]{6}\.c2\.kafka\.us-east-1\.amazonaws\.com")


def avro_record(*fields: str) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": "Row",
            "fields": [{"name": f, "type": ["null", "string"], "default": None} for f in fields],
        }
    )


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def glue(sandbox):
    return sandbox.client("glue")


def new_registry(glue) -> str:
    # moto allows 10 registries per account and region: tests share one unless they must not.
    name = unique("registry")
    glue.create_registry(RegistryName=name)
    return name


@pytest.fixture(scope="module")
def registry(glue) -> str:
    return new_registry(glue)


def listed_schemas(glue, registry: str) -> dict[str, dict]:
    pages = glue.get_paginator("list_schemas").paginate(RegistryId={"RegistryName": registry})
    return {item["SchemaName"]: item for page in pages for item in page["Schemas"]}


def create_schema(glue, registry: str, name: str, definition: str | None = None) -> None:
    glue.create_schema(
        RegistryId={"RegistryName": registry},
        SchemaName=name,
        DataFormat="AVRO",
        Compatibility="BACKWARD",
        SchemaDefinition=definition or avro_record("id"),
    )


def error_code(excinfo: pytest.ExceptionInfo[ClientError]) -> str:
    return excinfo.value.response["Error"]["Code"]


# --- ListSchemas / ListSchemaVersions ---------------------------------------------------------


def test_list_schemas_pages_through_more_schemas_than_a_page(glue):
    registry = new_registry(glue)
    names = [f"shop.inventory.t{i:02d}" for i in range(27)]
    for name in names:
        create_schema(glue, registry, name)

    first = glue.list_schemas(RegistryId={"RegistryName": registry})
    pages = glue.get_paginator("list_schemas").paginate(
        RegistryId={"RegistryName": registry}, PaginationConfig={"PageSize": 10}
    )
    listed = [item["SchemaName"] for page in pages for item in page["Schemas"]]

    assert len(first["Schemas"]) == 25 and "NextToken" in first
    assert listed == names


def test_list_schemas_items_have_the_aws_shape(glue, registry):
    create_schema(glue, registry, "orders")

    item = listed_schemas(glue, registry)["orders"]

    assert item["RegistryName"] == registry
    assert item["SchemaName"] == "orders"
    assert item["SchemaArn"] == f"arn:aws:glue:us-east-1:123456789012:schema/{registry}/orders"
    assert item["SchemaStatus"] == "AVAILABLE"
    assert AWS_TIMESTAMP.fullmatch(item["CreatedTime"])
    assert item["UpdatedTime"] == item["CreatedTime"]


def test_list_schemas_filters_by_registry_and_lists_all_without_one(glue, registry):
    other = new_registry(glue)
    create_schema(glue, registry, "mine")
    create_schema(glue, other, "theirs")

    filtered = glue.list_schemas(RegistryId={"RegistryName": other})["Schemas"]
    everything = [
        (item["RegistryName"], item["SchemaName"])
        for page in glue.get_paginator("list_schemas").paginate()
        for item in page["Schemas"]
    ]

    assert [item["SchemaName"] for item in filtered] == ["theirs"]
    assert {(registry, "mine"), (other, "theirs")} <= set(everything)


def test_list_schemas_of_an_unknown_registry_is_not_found(glue):
    with pytest.raises(ClientError) as excinfo:
        glue.list_schemas(RegistryId={"RegistryName": unique("missing")})
    assert error_code(excinfo) == "EntityNotFoundException"


def test_list_schemas_refuses_a_page_larger_than_aws_allows(glue, registry):
    with pytest.raises(ClientError) as excinfo:
        glue.list_schemas(RegistryId={"RegistryName": registry}, MaxResults=101)
    assert error_code(excinfo) == "InvalidInputException"


def test_deleted_schema_leaves_the_list(glue, registry):
    create_schema(glue, registry, "kept")
    create_schema(glue, registry, "dropped")

    glue.delete_schema(SchemaId={"RegistryName": registry, "SchemaName": "dropped"})

    listed = listed_schemas(glue, registry)
    assert "kept" in listed and "dropped" not in listed


def test_list_schema_versions_pages_in_version_order(glue, registry):
    schema_id = {"RegistryName": registry, "SchemaName": "customers"}
    create_schema(glue, registry, "customers", avro_record("id"))
    glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=avro_record("id", "email"))
    glue.register_schema_version(
        SchemaId=schema_id, SchemaDefinition=avro_record("id", "email", "phone")
    )

    first = glue.list_schema_versions(SchemaId=schema_id, MaxResults=2)
    pages = glue.get_paginator("list_schema_versions").paginate(
        SchemaId=schema_id, PaginationConfig={"PageSize": 2}
    )
    versions = [item for page in pages for item in page["Schemas"]]

    assert len(first["Schemas"]) == 2 and "NextToken" in first
    assert [v["VersionNumber"] for v in versions] == [1, 2, 3]
    assert {v["Status"] for v in versions} == {"AVAILABLE"}
    assert all(AWS_TIMESTAMP.fullmatch(v["CreatedTime"]) for v in versions)
    assert {v["SchemaArn"] for v in versions} == {
        f"arn:aws:glue:us-east-1:123456789012:schema/{registry}/customers"
    }


def test_list_schema_versions_of_an_unknown_schema_is_not_found(glue, registry):
    with pytest.raises(ClientError) as excinfo:
        glue.list_schema_versions(SchemaId={"RegistryName": registry, "SchemaName": "missing"})
    assert error_code(excinfo) == "EntityNotFoundException"


# --- GetSchema / GetSchemaVersion -------------------------------------------------------------


def test_registering_a_version_moves_updated_time(glue, registry):
    schema_id = {"RegistryName": registry, "SchemaName": "payments"}
    create_schema(glue, registry, "payments", avro_record("id"))
    before = glue.get_schema(SchemaId=schema_id)
    time.sleep(0.002)  # the timestamps have milliseconds

    version = glue.register_schema_version(
        SchemaId=schema_id, SchemaDefinition=avro_record("id", "amount")
    )
    after = glue.get_schema(SchemaId=schema_id)
    registered = glue.get_schema_version(SchemaVersionId=version["SchemaVersionId"])
    listed = listed_schemas(glue, registry)["payments"]

    assert before["UpdatedTime"] == before["CreatedTime"]
    assert after["CreatedTime"] == before["CreatedTime"]
    assert after["UpdatedTime"] > before["UpdatedTime"]
    assert after["UpdatedTime"] == registered["CreatedTime"] == listed["UpdatedTime"]
    assert (after["LatestSchemaVersion"], after["NextSchemaVersion"]) == (2, 3)


def test_registering_an_existing_definition_changes_nothing(glue, registry):
    schema_id = {"RegistryName": registry, "SchemaName": "refunds"}
    create_schema(glue, registry, "refunds", avro_record("id"))
    before = glue.get_schema(SchemaId=schema_id)
    time.sleep(0.002)

    again = glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=avro_record("id"))
    after = glue.get_schema(SchemaId=schema_id)

    assert again["VersionNumber"] == 1
    assert after["UpdatedTime"] == before["UpdatedTime"]
    assert after["LatestSchemaVersion"] == 1


def test_get_schema_has_the_aws_fields(glue, registry):
    create_schema(glue, registry, "products")

    schema = glue.get_schema(SchemaId={"RegistryName": registry, "SchemaName": "products"})

    assert schema["RegistryArn"] == f"arn:aws:glue:us-east-1:123456789012:registry/{registry}"
    assert (schema["DataFormat"], schema["Compatibility"]) == ("AVRO", "BACKWARD")
    assert (schema["SchemaCheckpoint"], schema["LatestSchemaVersion"]) == (1, 1)
    assert schema["NextSchemaVersion"] == 2
    assert AWS_TIMESTAMP.fullmatch(schema["CreatedTime"])


def test_get_schema_version_by_number_and_latest(glue, registry):
    schema_id = {"RegistryName": registry, "SchemaName": "addresses"}
    create_schema(glue, registry, "addresses", avro_record("id"))
    glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=avro_record("id", "city"))

    latest = glue.get_schema_version(
        SchemaId=schema_id, SchemaVersionNumber={"LatestVersion": True}
    )
    first = glue.get_schema_version(SchemaId=schema_id, SchemaVersionNumber={"VersionNumber": 1})

    assert latest["VersionNumber"] == 2
    assert json.loads(latest["SchemaDefinition"]) == json.loads(avro_record("id", "city"))
    assert json.loads(first["SchemaDefinition"]) == json.loads(avro_record("id"))
    assert latest["DataFormat"] == "AVRO"
    assert AWS_TIMESTAMP.fullmatch(latest["CreatedTime"])


def test_get_schema_of_an_unknown_schema_is_not_found(glue, registry):
    with pytest.raises(ClientError) as excinfo:
        glue.get_schema(SchemaId={"RegistryName": registry, "SchemaName": "missing"})
    assert error_code(excinfo) == "EntityNotFoundException"


# --- Avro definitions -------------------------------------------------------------------------

NOT_AVRO = [
    '{"type": "recrd", "name": "Row", "fields": []}',
    '{"type": "record", "name": "Row", "fields": [{"name": "a", "type": "Missing"}]}',
    '{"type": "record", "name": "Row", "fields": [{"type": "int"}]}',
    '{"type": "enum", "name": "E", "symbols": ["a", "a"]}',
]


@pytest.mark.parametrize("definition", NOT_AVRO)
def test_create_schema_refuses_a_definition_that_is_not_avro(glue, registry, definition):
    name = unique("broken")
    with pytest.raises(ClientError) as excinfo:
        create_schema(glue, registry, name, definition)

    assert error_code(excinfo) == "InvalidInputException"
    assert name not in listed_schemas(glue, registry)


@pytest.mark.parametrize("definition", NOT_AVRO)
def test_register_schema_version_refuses_a_definition_that_is_not_avro(glue, registry, definition):
    name = unique("stable")
    schema_id = {"RegistryName": registry, "SchemaName": name}
    create_schema(glue, registry, name)

    with pytest.raises(ClientError) as excinfo:
        glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=definition)

    assert error_code(excinfo) == "InvalidInputException"
    assert glue.get_schema(SchemaId=schema_id)["LatestSchemaVersion"] == 1


def row(*fields: tuple[str, object]) -> str:
    """A record of the given (name, type) fields, none with a default."""
    return json.dumps(
        {"type": "record", "name": "Row", "fields": [{"name": n, "type": t} for n, t in fields]}
    )


def schema_with(glue, registry: str, compatibility: str, first: str) -> dict[str, str]:
    name = unique(compatibility.lower())
    glue.create_schema(
        RegistryId={"RegistryName": registry},
        SchemaName=name,
        DataFormat="AVRO",
        Compatibility=compatibility,
        SchemaDefinition=first,
    )
    return {"RegistryName": registry, "SchemaName": name}


ID = ("id", "long")
REQUIRED_EMAIL = ("email", "string")
OPTIONAL_EMAIL = {"name": "email", "type": ["null", "string"], "default": None}


@pytest.mark.parametrize(
    ("compatibility", "second", "status"),
    [
        # A field with no default added: new readers cannot read old data.
        ("BACKWARD", row(ID, REQUIRED_EMAIL), "FAILURE"),
        ("FORWARD", row(ID, REQUIRED_EMAIL), "AVAILABLE"),
        ("FULL", row(ID, REQUIRED_EMAIL), "FAILURE"),
        ("NONE", row(ID, REQUIRED_EMAIL), "AVAILABLE"),
        # The only field removed: old readers cannot read new data.
        ("BACKWARD", row(REQUIRED_EMAIL), "FAILURE"),
        ("FORWARD", row(REQUIRED_EMAIL), "FAILURE"),
        # long -> int narrows (FORWARD: the old long reader reads int data: a promotion).
        ("BACKWARD", row(("id", "int")), "FAILURE"),
        ("FORWARD", row(("id", "int")), "AVAILABLE"),
        # An optional field with a default: every direction reads.
        (
            "FULL_ALL",
            json.dumps(
                {
                    "type": "record",
                    "name": "Row",
                    "fields": [{"name": "id", "type": "long"}, OPTIONAL_EMAIL],
                }
            ),
            "AVAILABLE",
        ),
    ],
)
def test_a_version_incompatible_under_the_schema_s_mode_is_registered_as_failure(
    glue, compatibility, second, status
):
    """RegisterSchemaVersion numbers a version that fails the compatibility check and answers
    it with Status FAILURE, as AWS does; GetSchemaVersion and ListSchemaVersions show it so."""
    registry = new_registry(glue)
    schema_id = schema_with(glue, registry, compatibility, row(ID))

    answer = glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=second)

    assert (answer["VersionNumber"], answer["Status"]) == (2, status)
    fetched = glue.get_schema_version(SchemaVersionId=answer["SchemaVersionId"])
    assert fetched["Status"] == status
    (listed,) = [
        v
        for v in glue.list_schema_versions(SchemaId=schema_id)["Schemas"]
        if v["VersionNumber"] == 2
    ]
    assert listed["Status"] == status
    # The same definition again is the same version, failed or not.
    again = glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=second)
    assert (again["SchemaVersionId"], again["Status"]) == (answer["SchemaVersionId"], status)
    glue.delete_registry(RegistryId={"RegistryName": registry})


def test_a_failed_version_is_not_what_later_versions_are_checked_against(glue):
    """BACKWARD checks against the previous version a reader can use: after a FAILURE, the one
    before it."""
    registry = new_registry(glue)
    schema_id = schema_with(glue, registry, "BACKWARD", row(ID))
    email_only = glue.register_schema_version(
        SchemaId=schema_id, SchemaDefinition=row(REQUIRED_EMAIL)
    )
    # A reader of email alone finds no email in v1's data, and it has no default.
    assert email_only["Status"] == "FAILURE"
    # Reads v1's data; the failed v2's it would not (no id there, and id has no default).
    both = json.dumps(
        {
            "type": "record",
            "name": "Row",
            "fields": [{"name": "id", "type": "long"}, OPTIONAL_EMAIL],
        }
    )
    third = glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=both)
    assert (third["VersionNumber"], third["Status"]) == (3, "AVAILABLE")
    glue.delete_registry(RegistryId={"RegistryName": registry})


@pytest.mark.parametrize(
    ("compatibility", "status"), [("FORWARD", "AVAILABLE"), ("FORWARD_ALL", "FAILURE")]
)
def test_an_all_mode_checks_every_available_version(glue, compatibility, status):
    """v1's reader has no default for id, v2's has: dropping id passes against v2 alone."""
    registry = new_registry(glue)
    schema_id = schema_with(glue, registry, compatibility, row(ID))
    with_default = json.dumps(
        {"type": "record", "name": "Row", "fields": [{"name": "id", "type": "long", "default": 0}]}
    )
    assert (
        glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=with_default)["Status"]
        == "AVAILABLE"
    )
    dropped = glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=row(REQUIRED_EMAIL))
    assert (dropped["VersionNumber"], dropped["Status"]) == (3, status)
    glue.delete_registry(RegistryId={"RegistryName": registry})


def test_disabled_compatibility_takes_no_new_version(glue, registry):
    schema_id = schema_with(glue, registry, "DISABLED", row(ID))
    with pytest.raises(ClientError) as excinfo:
        glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=row(ID, ("n", "int")))
    assert error_code(excinfo) == "InvalidInputException"
    assert glue.get_schema(SchemaId=schema_id)["LatestSchemaVersion"] == 1


# --- Glue Data Catalog ------------------------------------------------------------------------


def glue_name_limit() -> int:
    """What botocore's model allows a database or table name (``NameString``)."""
    model = botocore.session.get_session().get_service_model("glue")
    return model.operation_model("GetTable").input_shape.members["Name"].metadata["max"]


def test_database_and_table_names_are_held_to_aws_s_limit(glue):
    limit = glue_name_limit()
    database = unique("limits").ljust(limit, "d")
    glue.create_database(DatabaseInput={"Name": database})
    table = "t" * limit
    glue.create_table(DatabaseName=database, TableInput={"Name": table})
    assert glue.get_table(DatabaseName=database, Name=table)["Table"]["Name"] == table

    one_past = "t" * (limit + 1)
    refusals = {
        "CreateDatabase": lambda: glue.create_database(DatabaseInput={"Name": database + "d"}),
        "CreateTable": lambda: glue.create_table(
            DatabaseName=database, TableInput={"Name": one_past}
        ),
        "GetTable": lambda: glue.get_table(DatabaseName=database, Name=one_past),
        "GetTables": lambda: glue.get_tables(DatabaseName=database + "d"),
    }
    for operation, call in refusals.items():
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_code(excinfo) == "ValidationException", operation
        assert f"less than or equal to {limit}" in str(excinfo.value), operation
    assert [t["Name"] for t in glue.get_tables(DatabaseName=database)["TableList"]] == [table]


# --- MSK --------------------------------------------------------------------------------------


@pytest.fixture
def kafka(sandbox):
    return sandbox.client("kafka")


BROKER_NODE_GROUP = {"InstanceType": "kafka.m5.large", "ClientSubnets": ["subnet-a", "subnet-b"]}


def broker_hosts(broker_string: str, port: int) -> list[str]:
    hosts = []
    for address in broker_string.split(","):
        host, _, address_port = address.partition(":")
        assert int(address_port) == port
        hosts.append(host)
    return hosts


def create_provisioned(kafka, **settings) -> str:
    return kafka.create_cluster_v2(
        ClusterName="cdc-demo",
        Provisioned={
            "BrokerNodeGroupInfo": BROKER_NODE_GROUP,
            "KafkaVersion": "3.6.0",
            "NumberOfBrokerNodes": 3,
            **settings,
        },
    )["ClusterArn"]


def listeners(kafka, arn: str) -> dict[str, int]:
    """GetBootstrapBrokers' answer as listener -> its port (each broker answers on it)."""
    brokers = kafka.get_bootstrap_brokers(ClusterArn=arn)
    ports = {
        key: {int(address.rpartition(":")[2]) for address in value.split(",")}
        for key, value in brokers.items()
        if key.startswith("BootstrapBroker")
    }
    assert all(len(found) == 1 for found in ports.values()), ports
    return {key: found.pop() for key, found in ports.items()}


ALL_SCHEMES = {
    "Sasl": {"Iam": {"Enabled": True}, "Scram": {"Enabled": True}},
    "Tls": {"Enabled": True, "CertificateAuthorityArnList": ["arn:aws:acm-pca:x"]},
}


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        # AWS's defaults: TLS between clients and brokers, unauthenticated access.
        ({}, {"BootstrapBrokerStringTls": 9094}),
        (
            {"EncryptionInfo": {"EncryptionInTransit": {"ClientBroker": "TLS_PLAINTEXT"}}},
            {"BootstrapBrokerString": 9092, "BootstrapBrokerStringTls": 9094},
        ),
        (
            {"EncryptionInfo": {"EncryptionInTransit": {"ClientBroker": "PLAINTEXT"}}},
            {"BootstrapBrokerString": 9092},
        ),
        (
            {"ClientAuthentication": {"Sasl": {"Iam": {"Enabled": True}}}},
            {"BootstrapBrokerStringSaslIam": 9098},
        ),
        (
            {"ClientAuthentication": ALL_SCHEMES},
            {
                "BootstrapBrokerStringTls": 9094,
                "BootstrapBrokerStringSaslScram": 9096,
                "BootstrapBrokerStringSaslIam": 9098,
            },
        ),
    ],
    ids=["defaults", "tls-plaintext", "plaintext", "iam", "iam-scram-mtls"],
)
def test_bootstrap_brokers_are_the_listeners_the_cluster_turns_on(kafka, settings, expected):
    arn = create_provisioned(kafka, **settings)
    assert listeners(kafka, arn) == expected
    brokers = kafka.get_bootstrap_brokers(ClusterArn=arn)
    hosts = [address.rpartition(":")[0] for address in brokers[next(iter(expected))].split(",")]
    assert [BROKER_HOST.fullmatch(host).group(1) for host in hosts] == ["1", "2", "3"]


def test_public_access_adds_the_public_listeners_and_needs_tls_without_unauthenticated(kafka):
    arn = create_provisioned(kafka, ClientAuthentication=ALL_SCHEMES)
    public = {"PublicAccess": {"Type": "SERVICE_PROVIDED_EIPS"}}
    version = kafka.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["CurrentVersion"]
    kafka.update_connectivity(ClusterArn=arn, ConnectivityInfo=public, CurrentVersion=version)

    assert {k: v for k, v in listeners(kafka, arn).items() if "Public" in k} == {
        "BootstrapBrokerStringPublicTls": 9194,
        "BootstrapBrokerStringPublicSaslScram": 9196,
        "BootstrapBrokerStringPublicSaslIam": 9198,
    }
    brokers = kafka.get_bootstrap_brokers(ClusterArn=arn)
    assert brokers["BootstrapBrokerStringPublicSaslIam"].startswith("b-1-public.")

    unauthenticated = create_provisioned(kafka)
    version = kafka.describe_cluster_v2(ClusterArn=unauthenticated)["ClusterInfo"]
    with pytest.raises(kafka.exceptions.BadRequestException):
        kafka.update_connectivity(
            ClusterArn=unauthenticated,
            ConnectivityInfo=public,
            CurrentVersion=version["CurrentVersion"],
        )


def test_multi_vpc_connectivity_adds_a_port_per_broker(kafka):
    arn = create_provisioned(kafka, ClientAuthentication=ALL_SCHEMES)
    vpc = {"VpcConnectivity": {"ClientAuthentication": {"Sasl": {"Iam": {"Enabled": True}}}}}
    version = kafka.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["CurrentVersion"]
    kafka.update_connectivity(ClusterArn=arn, ConnectivityInfo=vpc, CurrentVersion=version)

    brokers = kafka.get_bootstrap_brokers(ClusterArn=arn)
    ports = [
        a.rpartition(":")[2]
        for a in brokers["BootstrapBrokerStringVpcConnectivitySaslIam"].split(",")
    ]
    assert ports == ["14001", "14002", "14003"]
    assert "BootstrapBrokerStringVpcConnectivityTls" not in brokers


def test_bootstrap_brokers_list_at_most_three_brokers(kafka):
    arn = kafka.create_cluster(
        ClusterName="cdc-demo",
        BrokerNodeGroupInfo=BROKER_NODE_GROUP,
        KafkaVersion="3.6.0",
        NumberOfBrokerNodes=6,
    )["ClusterArn"]

    brokers = kafka.get_bootstrap_brokers(ClusterArn=arn)

    assert len(brokers["BootstrapBrokerStringTls"].split(",")) == 3


def test_bootstrap_brokers_of_a_serverless_cluster_are_iam_only(kafka):
    arn = kafka.create_cluster_v2(
        ClusterName=unique("serverless"),
        Serverless={"VpcConfigs": [{"SubnetIds": ["subnet-a"]}]},
    )["ClusterArn"]

    brokers = kafka.get_bootstrap_brokers(ClusterArn=arn)

    assert "BootstrapBrokerString" not in brokers
    assert brokers["BootstrapBrokerStringSaslIam"].endswith(
        ".kafka-serverless.us-east-1.amazonaws.com:9098"
    )


UNKNOWN_CLUSTER = "arn:aws:kafka:us-east-1:123456789012:cluster/missing/0000"


@pytest.mark.parametrize(
    "call",
    [
        lambda kafka: kafka.get_bootstrap_brokers(ClusterArn=UNKNOWN_CLUSTER),
        lambda kafka: kafka.describe_cluster(ClusterArn=UNKNOWN_CLUSTER),
        lambda kafka: kafka.describe_cluster_v2(ClusterArn=UNKNOWN_CLUSTER),
    ],
    ids=["GetBootstrapBrokers", "DescribeCluster", "DescribeClusterV2"],
)
def test_an_unknown_cluster_is_not_found(kafka, call):
    with pytest.raises(ClientError) as excinfo:
        call(kafka)
    assert error_code(excinfo) == "NotFoundException"
    assert excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_describe_parameters_pages_by_max_results_in_name_order(sandbox):
    """AWS's pages hold up to MaxResults (at most 50) parameters; moto's held 10 whatever was
    asked, and read every parameter of the account for each page."""
    ssm = sandbox.client("ssm")
    path = f"/{unique('describe')}"
    names = [f"{path}/p{number:03d}" for number in range(120)]
    for name in names:
        ssm.put_parameter(Name=name, Value="x", Type="String")
    pages = list(
        ssm.get_paginator("describe_parameters").paginate(PaginationConfig={"PageSize": 50})
    )
    listed = [p["Name"] for page in pages for p in page["Parameters"]]
    assert all(len(page["Parameters"]) == 50 for page in pages[:-1])
    assert [name for name in listed if name.startswith(path)] == names
    assert listed == sorted(set(listed))
    with pytest.raises(ClientError, match="less than or equal to 50"):
        ssm.describe_parameters(MaxResults=51)
    # A filtered call is moto's own answer.
    filtered = ssm.describe_parameters(
        ParameterFilters=[{"Key": "Name", "Option": "BeginsWith", "Values": [f"{path}/p11"]}]
    )
    assert {p["Name"] for p in filtered["Parameters"]} == {f"{path}/p11{n}" for n in range(10)}
