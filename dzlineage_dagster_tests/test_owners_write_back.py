"""The owners the platform's configuration names are written to the topic's DataZone asset (the
``owners`` field of its KafkaSchemaForm, searchable in the portal), revised only when they
change, and a person's additions and removals there survive the product's later revisions
(issue 20, "the product can write owners it knows back to DataZone")."""

from __future__ import annotations

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.catalog.forms import owners_of_text
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.test_catalog_curation import form_input
from dzlineage_dagster_tests.test_catalog_operators import (
    action_of,
    asset,
    kafka_form,
    scoped_parameters,
    sync_output,
)
from dzlineage_dagster_tests.test_catalog_sync import topic_assets
from dzlineage_dagster_tests.test_schema_change_check import set_sink_owners

TOPIC = "shop.sales.orders"


def owners_on_asset(platform) -> tuple[str, list[str], list[str]]:
    [asset_id] = topic_assets(platform)[platform.schema_arn(TOPIC)]
    form = kafka_form(asset(platform, asset_id))
    return (
        asset_id,
        owners_of_text(form.get("owners")),
        owners_of_text(form.get("configured_owners")),
    )


def edit_owners_in_the_portal(platform, asset_id: str, owners: str) -> None:
    """What a person does in the portal: a revision with the schema form's owners edited."""
    current = asset(platform, asset_id)
    platform.client("datazone").create_asset_revision(
        domainIdentifier=platform.settings.domain_id,
        identifier=asset_id,
        name=current["name"],
        description=current["description"],
        typeRevision=current["typeRevision"],
        formsInput=[
            form_input(form, owners=owners)
            if form["formName"] == "KafkaSchemaForm"
            # A common details form without content is left as the portal leaves it.
            else form_input(form)
            for form in current["formsOutput"]
        ],
    )


def test_configured_owners_reach_the_asset_and_a_persons_edits_survive_a_new_owner(
    platform, capsys
):
    sync_output(capsys)
    asset_id, owners, _ = owners_on_asset(platform)
    assert owners == []  # nothing configured yet: the content earlier versions wrote

    platform.client("glue").tag_resource(
        ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "alice@example.com"}
    )
    set_sink_owners(platform, "team:lakehouse")
    out = sync_output(capsys)
    # The re-created sink connector makes the run look at every topic again.
    assert action_of(out, TOPIC) == "revised"
    assert owners_on_asset(platform)[1:] == (
        ["alice@example.com", "team:lakehouse"],
        ["alice@example.com", "team:lakehouse"],
    )

    # Only on change: the same owners again write nothing.
    platform.control.clear_calls()
    sync_output(capsys, "--reconcile")
    assert writes(platform.control.call_counts(), "datazone") == {}

    # A tag changed alone is not in the registry's listing: reconcile looks at every topic.
    platform.client("glue").tag_resource(
        ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "ana@example.com"}
    )
    sync_output(capsys)
    assert owners_on_asset(platform)[1] == ["alice@example.com", "team:lakehouse"]
    sync_output(capsys, "--reconcile")
    # The new owner joins the list as it stands (a person's order is kept).
    assert owners_on_asset(platform)[1] == ["team:lakehouse", "ana@example.com"]
    platform.client("glue").tag_resource(
        ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "alice@example.com"}
    )
    sync_output(capsys, "--reconcile")

    # A steward adds the on-call rota and removes the lakehouse team in the portal.
    edit_owners_in_the_portal(platform, asset_id, "alice@example.com, Cy (on call)")
    set_sink_owners(platform, "team:lakehouse, bob@example.com")
    out = sync_output(capsys)
    assert action_of(out, TOPIC) == "revised"
    _, owners, configured = owners_on_asset(platform)
    assert owners == ["alice@example.com", "Cy (on call)", "bob@example.com"]
    assert configured == ["alice@example.com", "team:lakehouse", "bob@example.com"]


def test_a_wrong_owner_in_the_configuration_names_the_topic_and_writes_nothing(platform, capsys):
    sync_output(capsys)
    asset_id, _, _ = owners_on_asset(platform)
    before = asset(platform, asset_id)["revision"]
    set_sink_owners(platform, "team:lakehouse bob")
    code = dzlineage(["sync"])
    captured = capsys.readouterr()
    assert code != 0
    said = captured.out + captured.err
    assert f"{TOPIC}: connector:shop-iceberg-sink: 'bob' is not an owner" in said, said
    assert asset(platform, asset_id)["revision"] == before

    # Fixed: the connector's re-created configuration makes the next plain sync look again.
    set_sink_owners(platform, "team:lakehouse bob@example.com")
    assert action_of(sync_output(capsys), TOPIC) == "revised"
    assert "bob@example.com" in owners_on_asset(platform)[2]


def test_a_wrong_owner_tag_says_how_its_fix_reaches_datazone(platform, capsys):
    sync_output(capsys)
    glue = platform.client("glue")
    glue.tag_resource(ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "bob"})
    assert dzlineage(["sync", "--reconcile"]) != 0
    said = capsys.readouterr().out
    assert f"{TOPIC}: glue-schema-tag:owner: 'bob' is not an owner" in said, said
    assert "the next `dzlineage sync` tries the topic again" in said

    glue.tag_resource(
        ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "bob@example.com"}
    )
    # A tag is not in the registry's listing, but the topic the last sync failed is: the plain
    # sync the message names retries it (and only it) and writes the fixed owner...
    out = sync_output(capsys)
    assert action_of(out, TOPIC) == "revised"
    assert topic_rows(out) == [TOPIC]
    assert "bob@example.com" in owners_on_asset(platform)[1]
    # ...and, nothing failing any more, the sync after it is idle again.
    assert "nothing to do" in sync_output(capsys)


def test_more_failed_topics_than_a_parameter_holds_make_the_next_sync_look_at_every_topic(
    platform, capsys
):
    sync_output(capsys)
    glue = platform.client("glue")
    glue.tag_resource(ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "bob"})
    assert dzlineage(["sync", "--reconcile"]) != 0
    capsys.readouterr()
    # What a sync that failed too many topics to list leaves (one parameter's value is 4 KB).
    ssm = platform.client("ssm")
    [failed_record] = [
        name for name, value in scoped_parameters(platform).items() if value == f'["{TOPIC}"]'
    ]
    ssm.put_parameter(
        Name=failed_record, Value='{"overflowed": true}', Type="String", Overwrite=True
    )
    glue.tag_resource(
        ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "bob@example.com"}
    )
    out = sync_output(capsys)
    # No registry token is trusted: every topic is looked at, and the fixed one written.
    assert topic_rows(out) == sorted(platform.registry_topics()), out
    assert action_of(out, TOPIC) == "revised"
    assert failed_record not in scoped_parameters(platform)
    assert "nothing to do" in sync_output(capsys)


def topic_rows(out: str) -> list[str]:
    """The topics of a sync's table, sorted."""
    rows = out.split("\n\n")[0].splitlines()[2:]
    return sorted(row.split()[0] for row in rows)
