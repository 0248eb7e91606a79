"""Business glossaries and their terms, and the check of the term ids an asset revision names.

As botocore's model and the API reference describe them: a glossary belongs to a project and
its name is unique in the domain; a term belongs to a glossary and its name is unique there;
both are ENABLED unless created DISABLED. The reference does not say how CreateAsset answers a
term id that names no term: the sandbox refuses it as a missing resource (404), like an asset
type that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dzlineage_dagster.sandbox.emulators.datazone.common import new_id, not_found, now
from dzlineage_dagster.sandbox.protocol.aws import AwsServiceError


@dataclass(frozen=True)
class Glossary:
    id: str
    name: str
    owning_project_id: str
    description: str | None
    status: str
    usage_restrictions: tuple[str, ...]
    created_at: datetime
    created_by: str

    def output(self, domain_id: str) -> dict[str, Any]:
        return {
            "domainId": domain_id,
            "id": self.id,
            "name": self.name,
            "owningProjectId": self.owning_project_id,
            "description": self.description,
            "status": self.status,
            "usageRestrictions": list(self.usage_restrictions) or None,
            "createdAt": self.created_at,
            "createdBy": self.created_by,
            "updatedAt": self.created_at,
            "updatedBy": self.created_by,
        }


@dataclass(frozen=True)
class GlossaryTerm:
    id: str
    glossary: Glossary
    name: str
    status: str
    short_description: str | None
    long_description: str | None
    term_relations: dict[str, list[str]] | None
    created_at: datetime
    created_by: str

    def output(self, domain_id: str) -> dict[str, Any]:
        return {
            "domainId": domain_id,
            "glossaryId": self.glossary.id,
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "shortDescription": self.short_description,
            "longDescription": self.long_description,
            "termRelations": self.term_relations,
            "usageRestrictions": list(self.glossary.usage_restrictions) or None,
            "createdAt": self.created_at,
            "createdBy": self.created_by,
            "updatedAt": self.created_at,
            "updatedBy": self.created_by,
        }


@dataclass
class Glossaries:
    """The glossaries and terms of one domain."""

    glossaries: dict[str, Glossary] = field(default_factory=dict)
    terms: dict[str, GlossaryTerm] = field(default_factory=dict)

    def create_glossary(self, project_id: str, params: dict[str, Any], user: str) -> Glossary:
        name = params["name"]
        if any(g.name == name for g in self.glossaries.values()):
            raise AwsServiceError("ConflictException", f"A glossary named {name} already exists")
        glossary = Glossary(
            id=new_id(),
            name=name,
            owning_project_id=project_id,
            description=params.get("description"),
            status=params.get("status") or "ENABLED",
            usage_restrictions=tuple(params.get("usageRestrictions") or ()),
            created_at=now(),
            created_by=user,
        )
        self.glossaries[glossary.id] = glossary
        return glossary

    def glossary(self, identifier: str) -> Glossary:
        if identifier not in self.glossaries:
            raise not_found(f"Glossary {identifier} not found")
        return self.glossaries[identifier]

    def create_term(self, params: dict[str, Any], user: str) -> GlossaryTerm:
        glossary = self.glossary(params["glossaryIdentifier"])
        name = params["name"]
        if any(t.glossary.id == glossary.id and t.name == name for t in self.terms.values()):
            raise AwsServiceError(
                "ConflictException", f"Glossary {glossary.name} already has a term named {name}"
            )
        relations = params.get("termRelations")
        for related in (relations or {}).values():
            for term_id in related:
                self.term(term_id)
        term = GlossaryTerm(
            id=new_id(),
            glossary=glossary,
            name=name,
            status=params.get("status") or "ENABLED",
            short_description=params.get("shortDescription"),
            long_description=params.get("longDescription"),
            term_relations=relations,
            created_at=now(),
            created_by=user,
        )
        self.terms[term.id] = term
        return term

    def term(self, identifier: str) -> GlossaryTerm:
        if identifier not in self.terms:
            raise not_found(f"Glossary term {identifier} not found")
        return self.terms[identifier]

    def attached_terms(self, term_ids: list[str] | None) -> tuple[str, ...]:
        """The ``glossaryTerms`` of an asset revision, each naming an existing term (the model
        already holds them to 1-20 ids)."""
        for term_id in term_ids or ():
            self.term(term_id)
        return tuple(term_ids or ())
