"""Types others extend are used, not reverted (issue 17, case 2): a team's optional field on
KafkaSchemaFormType and its own form on KafkaTopicAssetType stay; a revision the product must
make starts from theirs, keeps it, and warns; no asset is revised for a type revision alone."""

from __future__ import annotations

from dataclasses import replace

from dzlineage_dagster.core.catalog.forms import KAFKA_SCHEMA_FORM, KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster_tests.platform import DemoPlatform, writes
from dzlineage_dagster_tests.stored_mapping import put_mapping, stored_mappings
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics

TEAM_FORM_MODEL = "structure TeamFormType {\n    @required\n    team: String\n}\n"
TEAM_FIELD = '    @documentation("The team that owns the topic.")\n    owner_team: String\n'


class Team:
    """Another project of the domain, extending the product's types by hand."""

    def __init__(self, platform: DemoPlatform) -> None:
        self.datazone = platform.client("datazone")
        self.domain = {"domainIdentifier": platform.settings.domain_id}
        self.project = self.datazone.create_project(**self.domain, name="platform-team")["id"]

    def form_type(self, name: str, smithy: str) -> str:
        return self.datazone.create_form_type(
            **self.domain,
            name=name,
            model={"smithy": smithy},
            owningProjectIdentifier=self.project,
            status="ENABLED",
        )["revision"]

    def asset_type_with_their_form(self, schema_form_revision: str) -> str:
        """A KafkaTopicAssetType revision: the latest's forms, KafkaSchemaForm at the given
        revision, and their own optional TeamForm."""
        latest = self.asset_type()
        forms = {
            name: {
                "typeIdentifier": form["typeName"],
                "typeRevision": form["typeRevision"],
                "required": form["required"],
            }
            for name, form in latest["formsOutput"].items()
        }
        forms["KafkaSchemaForm"]["typeRevision"] = schema_form_revision
        forms["TeamForm"] = {
            "typeIdentifier": "TeamFormType",
            "typeRevision": self.form_type("TeamFormType", TEAM_FORM_MODEL),
            "required": False,
        }
        return self.datazone.create_asset_type(
            **self.domain,
            name=KAFKA_TOPIC_ASSET_TYPE.name,
            formsInput=forms,
            owningProjectIdentifier=self.project,
        )["revision"]

    def asset_type(self) -> dict:
        return self.datazone.get_asset_type(**self.domain, identifier=KAFKA_TOPIC_ASSET_TYPE.name)

    def schema_form_type(self) -> dict:
        return self.datazone.get_form_type(**self.domain, formTypeIdentifier=KAFKA_SCHEMA_FORM.name)


def with_team_field(model: str) -> str:
    return model.rstrip().removesuffix("}") + "\n" + TEAM_FIELD + "}\n"


def test_a_teams_extended_form_type_and_asset_type_are_used_not_reverted(platform):
    assert platform.sync().success
    team = Team(platform)

    # Their optional field on the product's form type: a superset, used as it is.
    extended = team.form_type(
        KAFKA_SCHEMA_FORM.name, with_team_field(KAFKA_SCHEMA_FORM.smithy_model())
    )
    platform.control.clear_calls()
    assert platform.sync().success
    assert writes(platform.control.call_counts(), "datazone") == {}
    assert team.schema_form_type()["revision"] == extended

    # Their own form on the product's asset type, which now pins their form type revision.
    asset_type_revision = team.asset_type_with_their_form(extended)
    platform.control.clear_calls()
    assert platform.sync().success
    assert writes(platform.control.call_counts(), "datazone") == {}
    assert team.asset_type()["revision"] == asset_type_revision
    assert "TeamForm" in team.asset_type()["formsOutput"]

    # A topic whose schema changes is revised onto their asset type revision.
    topic = table_topics(platform)[0]
    platform.register_new_version(topic, "their_types_hold_it")
    assert platform.sync([topic]).success
    metadata = latest_metadata(platform, "datazone_topic_asset", topic)
    assert (metadata["action"], metadata["asset_type_revision"]) == ("revised", asset_type_revision)


def test_a_revision_the_product_must_make_keeps_others_fields_and_forms_and_warns(platform):
    assert platform.sync().success
    team = Team(platform)
    # Their form type revision drops the product's data_format and adds their field; their
    # asset type revision pins it and adds their form.
    broken = with_team_field(KAFKA_SCHEMA_FORM.smithy_model()).replace(
        "    data_format: String\n", ""
    )
    broken = broken.replace(
        '    @documentation("The schema\'s data format: AVRO, JSON or PROTOBUF.")\n', ""
    )
    theirs = team.form_type(KAFKA_SCHEMA_FORM.name, broken)
    team_asset_type = team.asset_type_with_their_form(theirs)
    platform.control.clear_calls()

    result = platform.sync()
    assert result.success, result.get_step_failure_events()
    counts = platform.control.call_counts()
    assert (counts[("datazone", "CreateFormType")], counts[("datazone", "CreateAssetType")]) == (
        1,
        1,
    )
    form_type = team.schema_form_type()
    assert int(form_type["revision"]) == int(theirs) + 1
    assert "data_format: String" in form_type["model"]["smithy"]
    assert "owner_team: String" in form_type["model"]["smithy"]
    asset_type = team.asset_type()
    assert int(asset_type["revision"]) == int(team_asset_type) + 1
    assert asset_type["formsOutput"]["TeamForm"]["typeName"] == "TeamFormType"
    assert asset_type["formsOutput"]["KafkaSchemaForm"]["typeRevision"] == form_type["revision"]
    # No asset's content changed: none is revised.
    assert counts[("datazone", "CreateAssetRevision")] == 0

    warnings = [
        entry.user_message
        for entry in platform.instance.all_logs(result.run_id)
        if entry.level >= 30 and "the product's part put back" in entry.user_message
    ]
    assert len(warnings) == 2, warnings
    assert "KafkaSchemaFormType: revision" in warnings[0]
    assert "data_format is missing" in warnings[0] and "owner_team" in warnings[0]
    assert f"KafkaTopicAssetType: revision {team_asset_type}" in warnings[1]
    assert "TeamForm" in warnings[1]


def test_a_record_whose_fingerprint_names_the_type_revision_costs_one_read_and_no_revision(
    platform,
):
    """Records written before the type revision left the content fingerprint end in
    ``@<type revision>``: their topic's next sync finds the asset already holding the content."""
    assert platform.sync().success
    topic = table_topics(platform)[0]
    arn = platform.schema_arn(topic)
    record = stored_mappings(platform.settings)[arn]
    put_mapping(
        platform.settings, replace(record, content_fingerprint=f"{record.content_fingerprint}@1")
    )
    platform.control.clear_calls()

    assert platform.sync([topic]).success
    counts = platform.control.call_counts()
    assert (counts[("datazone", "GetAsset")], counts[("datazone", "CreateAssetRevision")]) == (1, 0)
    assert latest_metadata(platform, "datazone_topic_asset", topic)["action"] == "replayed"
    platform.control.clear_calls()
    assert platform.sync([topic]).success
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}
