"""The sandbox's business glossaries: CreateGlossary, GetGlossary, CreateGlossaryTerm,
GetGlossaryTerm, and the glossary terms an asset revision names, over real boto3 clients."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster_tests.sandbox import test_datazone_emulator as emulator_tests

# The emulator tests' fixtures: a DataZone client, and a fresh domain with a topic asset type.
dz = emulator_tests.dz
catalog = emulator_tests.catalog


def create_glossary(dz, catalog, name: str = "Business terms", **params) -> dict:
    return dz.create_glossary(
        domainIdentifier=catalog.domain_id,
        owningProjectIdentifier=catalog.project_id,
        name=name,
        **params,
    )


def create_term(dz, catalog, glossary_id: str, name: str = "Order", **params) -> dict:
    return dz.create_glossary_term(
        domainIdentifier=catalog.domain_id, glossaryIdentifier=glossary_id, name=name, **params
    )


def test_a_glossary_is_created_enabled_and_read_back(dz, catalog):
    created = create_glossary(dz, catalog, description="What the business calls things")
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert emulator_tests.ID.fullmatch(created["id"])
    assert (created["status"], created["owningProjectId"]) == ("ENABLED", catalog.project_id)
    fetched = dz.get_glossary(domainIdentifier=catalog.domain_id, identifier=created["id"])
    assert (fetched["name"], fetched["description"], fetched["status"]) == (
        "Business terms",
        "What the business calls things",
        "ENABLED",
    )
    assert "createdAt" in fetched and "createdBy" in fetched


def test_glossary_names_are_unique_in_the_domain_and_need_an_existing_project(dz, catalog):
    create_glossary(dz, catalog)
    with pytest.raises(ClientError, match=r"\(ConflictException\)"):
        create_glossary(dz, catalog)
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.create_glossary(
            domainIdentifier=catalog.domain_id, owningProjectIdentifier="noproject", name="x"
        )
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.get_glossary(domainIdentifier=catalog.domain_id, identifier="noglossary")


def test_a_term_belongs_to_an_existing_glossary_and_its_name_is_unique_there(dz, catalog):
    glossary = create_glossary(dz, catalog)
    other = create_glossary(dz, catalog, name="Other terms", status="DISABLED")
    assert other["status"] == "DISABLED"
    term = create_term(dz, catalog, glossary["id"], shortDescription="A customer's order")
    assert term["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert (term["glossaryId"], term["status"]) == (glossary["id"], "ENABLED")
    create_term(dz, catalog, other["id"])  # the same name in another glossary
    with pytest.raises(ClientError, match=r"\(ConflictException\)"):
        create_term(dz, catalog, glossary["id"])
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        create_term(dz, catalog, "noglossary")

    related = create_term(
        dz, catalog, glossary["id"], name="Sales order", termRelations={"isA": [term["id"]]}
    )
    fetched = dz.get_glossary_term(domainIdentifier=catalog.domain_id, identifier=related["id"])
    assert (fetched["name"], fetched["termRelations"]) == ("Sales order", {"isA": [term["id"]]})
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        create_term(dz, catalog, glossary["id"], name="Bad", termRelations={"isA": ["noterm"]})
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\)"):
        dz.get_glossary_term(domainIdentifier=catalog.domain_id, identifier="noterm")


def test_assets_carry_existing_glossary_terms_through_their_revisions(dz, catalog):
    glossary = create_glossary(dz, catalog)
    term = create_term(dz, catalog, glossary["id"])
    asset = catalog.create_asset(dz, "orders", glossaryTerms=[term["id"]])
    assert asset["glossaryTerms"] == [term["id"]]
    fetched = dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"])
    assert fetched["glossaryTerms"] == [term["id"]]

    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\).*noterm"):
        catalog.create_asset(dz, "payments", glossaryTerms=["noterm"])
    with pytest.raises(ClientError, match=r"\(ResourceNotFoundException\).*noterm"):
        dz.create_asset_revision(
            domainIdentifier=catalog.domain_id,
            identifier=asset["id"],
            name="orders",
            formsInput=catalog.topic_forms("orders"),
            glossaryTerms=[term["id"], "noterm"],
        )
    # A revision holds the terms it is given: none given, none kept.
    revised = dz.create_asset_revision(
        domainIdentifier=catalog.domain_id,
        identifier=asset["id"],
        name="orders",
        formsInput=catalog.topic_forms("orders"),
    )
    assert "glossaryTerms" not in revised
    first = dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"], revision="1")
    assert first["glossaryTerms"] == [term["id"]]
