from typing import Annotated, Any, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import SparqlForm


class Sparql(BaseModel):
    lives_where: "SparqlLivesWhere" = Field(alias="livesWhere")
    alice: "SparqlAlice"
    contradicted: "SparqlContradicted"
    homes: "SparqlHomes"


class SparqlLivesWhere(BaseModel):
    form: SparqlForm
    results: Optional[Any]
    basis: "SparqlLivesWhereBasis"


class SparqlLivesWhereBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


class SparqlAlice(BaseModel):
    form: SparqlForm
    results: Optional[Any]


class SparqlContradicted(BaseModel):
    form: SparqlForm
    results: Optional[Any]


class SparqlHomes(BaseModel):
    form: SparqlForm
    graph: Optional[str]
    statements: int


Sparql.model_rebuild()
SparqlLivesWhere.model_rebuild()
