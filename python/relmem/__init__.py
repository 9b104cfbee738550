"""relmem: relational databases as external memory for any LLM."""
from ._relmem import (
    Catalog,
    Column,
    DatabaseMatch,
    Encoder,
    Error,
    ForeignKey,
    HashingEncoder,
    QueryResult,
    RefreshReport,
    RelevanceConfig,
    RelevanceModel,
    Schema,
    SelectionCalibration,
    SelectionMemory,
    SetMetrics,
    SqlError,
    Table,
    VectorIndex,
    built_with_cuda,
    compose_question,
    cuda_device_count,
    cuda_device_info,
    cuda_unavailable_reason,
    execute_readonly,
    registered_encoders,
    train_relevance,
)
from .encoders import default_encoder_name, load_encoder
from .memory import Memory
from .values import ValueMemory, correct_values

__version__ = "0.1.0"

__all__ = [
    "Catalog", "Column", "Encoder", "Error", "ForeignKey", "HashingEncoder", "QueryResult", "Schema", "SqlError",
    "Table", "VectorIndex", "RelevanceModel", "SelectionMemory", "ValueMemory", "correct_values",
    "DatabaseMatch", "Memory", "RefreshReport", "RelevanceConfig", "SelectionCalibration", "SetMetrics",
    "default_encoder_name", "execute_readonly", "load_encoder", "registered_encoders", "built_with_cuda",
    "cuda_device_count", "cuda_device_info", "cuda_unavailable_reason", "compose_question", "train_relevance",
]
