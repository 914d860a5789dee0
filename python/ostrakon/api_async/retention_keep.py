from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class RetentionKeep(BaseModel):
    configure_namespace: "RetentionKeepConfigureNamespace" = Field(
        alias="configureNamespace"
    )


class RetentionKeepConfigureNamespace(BaseModel):
    retention: "RetentionKeepConfigureNamespaceRetention"


class RetentionKeepConfigureNamespaceRetention(BaseModel):
    episodes_after: Optional[str] = Field(alias="episodesAfter")


RetentionKeep.model_rebuild()
RetentionKeepConfigureNamespace.model_rebuild()
