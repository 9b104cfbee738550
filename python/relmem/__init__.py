"""relmem: relational databases as external memory for any LLM."""
import os

# After each parallel region libgomp's idle threads spin for about 300,000 rounds before they sleep. On a small host
# they then take the cores from relmem's scan threads and from the caller: a Spider question's selection took 11 ms
# instead of 3.7 on the 2-core host. A short spin keeps back-to-back regions as fast. It must be set before the
# extension loads libgomp; the user's own settings win.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")

from ._relmem import (  # noqa: E402 (after the OpenMP setting)
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
    marked_question_parts,
    question_parts,
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
    "cuda_device_count", "cuda_device_info", "cuda_unavailable_reason", "compose_question", "question_parts",
    "marked_question_parts", "train_relevance",
]
