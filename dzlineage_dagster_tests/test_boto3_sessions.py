"""Sessions share what botocore parsed, and nothing else."""

from __future__ import annotations

from dzlineage_dagster.boto3_sessions import new_session
from dzlineage_dagster.resources import DataZoneResource


def test_clients_of_two_sessions_share_the_parsed_model_and_keep_their_own_credentials():
    first, second = (
        new_session(aws_access_key_id=key, aws_secret_access_key="secret", region_name=region)
        for key, region in (("AKIAFIRST", "us-east-1"), ("AKIASECOND", "eu-west-1"))
    )
    one, other = (s.client("datazone", endpoint_url="http://127.0.0.1:9") for s in (first, second))
    # The same parsed document, not an equal one parsed again.
    assert one.meta.service_model._service_description is (
        other.meta.service_model._service_description
    )
    assert first.get_credentials().access_key == "AKIAFIRST"
    assert second.get_credentials().access_key == "AKIASECOND"
    assert (one.meta.region_name, other.meta.region_name) == ("us-east-1", "eu-west-1")


def test_a_resource_builds_its_clients_on_the_shared_models():
    resource = DataZoneResource(region_name="us-east-1", endpoint_url="http://127.0.0.1:9")
    built = resource.client()
    elsewhere = new_session(region_name="us-east-1").client("datazone")
    assert built.meta.service_model._service_description is (
        elsewhere.meta.service_model._service_description
    )
