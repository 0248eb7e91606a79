"""The sandbox's domain units, authorization policy grants and project memberships: what
DataZone refuses without them (AccessDeniedException), over real boto3 clients."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.core.aws.authorization import iam_principal
from dzlineage_dagster_tests.clients import sandbox_client
from dzlineage_dagster_tests.sandbox import test_datazone_emulator as emulator_tests

dz = emulator_tests.dz
ACCOUNT = "123456789012"
SERVICE_ROLE = f"arn:aws:iam::{ACCOUNT}:role/service-role/AmazonSageMakerDomainService"
EXECUTION_ROLE = f"arn:aws:iam::{ACCOUNT}:role/service-role/AmazonSageMakerDomainExecution"
DENIED = r"\(AccessDeniedException\).*User is not permitted to perform operation: "
SMITHY = "structure TeamForm { team: String }"


def v2_domain(dz) -> dict:
    return dz.create_domain(
        name=emulator_tests.unique("smus"),
        domainVersion="V2",
        serviceRole=SERVICE_ROLE,
        domainExecutionRole=EXECUTION_ROLE,
    )


def create_form_type(dz, domain_id: str, project_id: str, name: str = "TeamForm") -> dict:
    return dz.create_form_type(
        domainIdentifier=domain_id,
        name=name,
        model={"smithy": SMITHY.replace("TeamForm", name)},
        owningProjectIdentifier=project_id,
        status="ENABLED",
    )


def grant(dz, domain_id: str, unit: str, project_id: str, policy: str, cascade: bool) -> str:
    member = {"CREATE_FORM_TYPE": "createFormType", "CREATE_ASSET_TYPE": "createAssetType"}
    return dz.add_policy_grant(
        domainIdentifier=domain_id,
        entityType="DOMAIN_UNIT",
        entityIdentifier=unit,
        policyType=policy,
        principal={"project": {"projectDesignation": "OWNER", "projectIdentifier": project_id}},
        detail={member[policy]: {"includeChildDomainUnits": cascade}},
    )["grantId"]


def test_a_v2_domain_needs_its_service_and_execution_roles(dz):
    with pytest.raises(ClientError, match=r"\(ValidationException\).*serviceRole"):
        dz.create_domain(name=emulator_tests.unique("smus"), domainVersion="V2")
    domain = v2_domain(dz)
    fetched = dz.get_domain(identifier=domain["id"])
    assert (fetched["domainVersion"], fetched["serviceRole"]) == ("V2", SERVICE_ROLE)
    root = dz.get_domain_unit(domainIdentifier=domain["id"], identifier=fetched["rootDomainUnitId"])
    assert "parentDomainUnitId" not in root


def test_a_v2_type_creation_needs_the_policy_granted_to_the_owning_project(dz):
    domain = v2_domain(dz)
    root = domain["rootDomainUnitId"]
    project = dz.create_project(domainIdentifier=domain["id"], name="catalog")["id"]
    with pytest.raises(ClientError, match=DENIED + "CreateFormType"):
        create_form_type(dz, domain["id"], project)
    grant_id = grant(dz, domain["id"], root, project, "CREATE_FORM_TYPE", cascade=False)
    listed = dz.list_policy_grants(
        domainIdentifier=domain["id"],
        entityType="DOMAIN_UNIT",
        entityIdentifier=root,
        policyType="CREATE_FORM_TYPE",
    )["grantList"]
    assert [(g["grantId"], g["principal"]["project"]["projectIdentifier"]) for g in listed] == [
        (grant_id, project)
    ]
    assert create_form_type(dz, domain["id"], project)["revision"]
    # Another policy is another grant: the asset type is still refused.
    with pytest.raises(ClientError, match=DENIED + "CreateAssetType"):
        dz.create_asset_type(
            domainIdentifier=domain["id"],
            name="TeamAsset",
            formsInput={},
            owningProjectIdentifier=project,
        )
    dz.remove_policy_grant(
        domainIdentifier=domain["id"],
        entityType="DOMAIN_UNIT",
        entityIdentifier=root,
        policyType="CREATE_FORM_TYPE",
        principal=listed[0]["principal"],
    )
    with pytest.raises(ClientError, match=DENIED + "CreateFormType"):
        create_form_type(dz, domain["id"], project, "OtherForm")


def test_the_caller_must_be_a_member_of_the_project_it_writes_for(sandbox, dz):
    domain = v2_domain(dz)
    project = dz.create_project(domainIdentifier=domain["id"], name="catalog")["id"]
    grant(dz, domain["id"], domain["rootDomainUnitId"], project, "CREATE_FORM_TYPE", cascade=True)
    me = iam_principal(sandbox.client("sts").get_caller_identity()["Arn"])
    profile = dz.get_user_profile(domainIdentifier=domain["id"], userIdentifier=me)
    members = dz.list_project_memberships(domainIdentifier=domain["id"], projectIdentifier=project)
    # The project's creator is its owner.
    assert [
        (m["memberDetails"]["user"]["userId"], m["designation"]) for m in members["members"]
    ] == [(profile["id"], "PROJECT_OWNER")]
    # Another IAM role (an assumed role's keys) is nobody in the project.
    credentials = sandbox.client("sts").assume_role(
        RoleArn=f"arn:aws:iam::{ACCOUNT}:role/dzlineage-sync", RoleSessionName="sync"
    )["Credentials"]
    environment = {
        **sandbox.environment(),
        "AWS_ACCESS_KEY_ID": credentials["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": credentials["SecretAccessKey"],
        "AWS_SESSION_TOKEN": credentials["SessionToken"],
    }
    as_role = sandbox_client(environment, "datazone")
    with pytest.raises(ClientError, match=DENIED + "CreateFormType"):
        create_form_type(as_role, domain["id"], project)
    dz.create_project_membership(
        domainIdentifier=domain["id"],
        projectIdentifier=project,
        member={"userIdentifier": f"arn:aws:iam::{ACCOUNT}:role/dzlineage-sync"},
        designation="PROJECT_CONTRIBUTOR",
    )
    assert create_form_type(as_role, domain["id"], project)["owningProjectId"] == project
    dz.delete_project_membership(
        domainIdentifier=domain["id"], projectIdentifier=project, member={"userIdentifier": me}
    )
    with pytest.raises(ClientError, match=DENIED + "CreateFormType"):
        create_form_type(dz, domain["id"], project, "MineForm")


def child_unit_project(dz, domain: dict) -> tuple[str, str]:
    child = dz.create_domain_unit(
        domainIdentifier=domain["id"],
        name="Sales",
        parentDomainUnitIdentifier=domain["rootDomainUnitId"],
    )
    assert child["ancestorDomainUnitIds"] == [domain["rootDomainUnitId"]]
    listed = dz.list_domain_units_for_parent(
        domainIdentifier=domain["id"], parentDomainUnitIdentifier=domain["rootDomainUnitId"]
    )["items"]
    assert [u["id"] for u in listed] == [child["id"]]
    project = dz.create_project(
        domainIdentifier=domain["id"], name="sales-catalog", domainUnitId=child["id"]
    )
    assert project["domainUnitId"] == child["id"]
    return child["id"], project["id"]


def test_an_ancestors_grant_counts_below_it_only_when_it_cascades(dz):
    domain = v2_domain(dz)
    root = domain["rootDomainUnitId"]
    _, project = child_unit_project(dz, domain)
    grant(dz, domain["id"], root, project, "CREATE_FORM_TYPE", cascade=False)
    with pytest.raises(ClientError, match=DENIED + "CreateFormType"):
        create_form_type(dz, domain["id"], project)
    grant(dz, domain["id"], root, project, "CREATE_FORM_TYPE", cascade=True)
    assert create_form_type(dz, domain["id"], project)["revision"]


def test_under_the_intersect_reading_every_unit_of_the_chain_must_grant(sandbox, dz):
    sandbox.control.set_ambiguities(policy_ancestry="intersect")
    try:
        domain = v2_domain(dz)
        child, project = child_unit_project(dz, domain)
        grant(dz, domain["id"], child, project, "CREATE_FORM_TYPE", cascade=True)
        with pytest.raises(ClientError, match=DENIED + "CreateFormType"):
            create_form_type(dz, domain["id"], project)
        grant(dz, domain["id"], domain["rootDomainUnitId"], project, "CREATE_FORM_TYPE", False)
        assert create_form_type(dz, domain["id"], project)["revision"]
    finally:
        sandbox.control.set_ambiguities(policy_ancestry="cascade")


def test_a_v1_domain_checks_the_policies_once_it_has_domain_units(dz):
    domain = dz.create_domain(name=emulator_tests.unique("v1"), domainExecutionRole=EXECUTION_ROLE)
    project = dz.create_project(domainIdentifier=domain["id"], name="catalog")["id"]
    assert create_form_type(dz, domain["id"], project)["revision"]
    dz.create_domain_unit(
        domainIdentifier=domain["id"],
        name="Sales",
        parentDomainUnitIdentifier=domain["rootDomainUnitId"],
    )
    with pytest.raises(ClientError, match=DENIED + "CreateFormType"):
        create_form_type(dz, domain["id"], project, "OtherForm")


def test_another_projects_asset_type_needs_a_use_asset_type_grant(dz):
    domain = v2_domain(dz)
    root = domain["rootDomainUnitId"]
    owner = dz.create_project(domainIdentifier=domain["id"], name="platform")["id"]
    user = dz.create_project(domainIdentifier=domain["id"], name="catalog")["id"]
    grant(dz, domain["id"], root, owner, "CREATE_ASSET_TYPE", cascade=True)
    dz.create_asset_type(
        domainIdentifier=domain["id"],
        name="TeamAsset",
        formsInput={},
        owningProjectIdentifier=owner,
    )

    def create_asset(project: str, name: str) -> dict:
        return dz.create_asset(
            domainIdentifier=domain["id"],
            name=name,
            typeIdentifier="TeamAsset",
            owningProjectIdentifier=project,
        )

    assert create_asset(owner, "owned")["owningProjectId"] == owner
    with pytest.raises(ClientError, match=DENIED + "CreateAsset"):
        create_asset(user, "used")
    dz.add_policy_grant(
        domainIdentifier=domain["id"],
        entityType="ASSET_TYPE",
        entityIdentifier="TeamAsset",
        policyType="USE_ASSET_TYPE",
        principal={"project": {"projectDesignation": "CONTRIBUTOR", "projectIdentifier": user}},
        detail={"useAssetType": {}},
    )
    asset = create_asset(user, "used")
    revised = dz.create_asset_revision(
        domainIdentifier=domain["id"], identifier=asset["id"], name="used again"
    )
    assert revised["revision"] == "2"
    # The detail and the entity type must be the policy's.
    with pytest.raises(ClientError, match=r"\(ValidationException\)"):
        dz.add_policy_grant(
            domainIdentifier=domain["id"],
            entityType="DOMAIN_UNIT",
            entityIdentifier=root,
            policyType="USE_ASSET_TYPE",
            principal={"project": {"projectDesignation": "OWNER", "projectIdentifier": user}},
            detail={"useAssetType": {"domainUnitId": root}},
        )
    assert revised["owningProjectId"] == user
