from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class RetentionMonths(BaseModel):
    configure_namespace: "RetentionMonthsConfigureNamespace" = Field(
        alias="configureNamespace"
    )


class RetentionMonthsConfigureNamespace(BaseModel):
    retention: "RetentionMonthsConfigureNamespaceRetention"


class RetentionMonthsConfigureNamespaceRetention(BaseModel):
    episodes_after: Optional[str] = Field(alias="episodesAfter")


RetentionMonths.model_rebuild()
RetentionMonthsConfigureNamespace.model_rebuild()
