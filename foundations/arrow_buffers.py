"""Arrow arrays read through their buffers, never through pyarrow's conversions.

pyarrow's ``to_numpy`` and ``pa.array`` import pandas the first time they run (90 MB resident,
0.3 s), though nothing here uses it. A server reads the arrays DuckDB hands it (the ask index and
vectors as a release loads, the bench pages as they stream) straight from their buffers instead,
which also copies nothing it does not need to.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def numbers_of(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a column of fixed-width numbers (no nulls) as a read-only NumPy view."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_boolean(array.type):  # one bit a value: no view of it as bytes
        raise ValueError("a column of booleans has no NumPy view; filter with it instead")
    if array.null_count:
        raise ValueError(f"a column of {array.type} with {array.null_count} nulls has no NumPy view")
    dtype = np.dtype(array.type.to_pandas_dtype())
    data = array.buffers()[1]
    if data is None:
        return np.empty(0, dtype)
    return np.frombuffer(data, dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def flat_values(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, values) of a list column, ``values[offsets[i]:offsets[i + 1]]`` being row i's."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    offsets = numbers_of(array.offsets)
    return offsets - offsets[0], numbers_of(array.values.slice(offsets[0], offsets[-1] - offsets[0]))


def string_column_bytes(column: pa.ChunkedArray) -> bytes:
    """The values of a string column end to end, copied once out of Arrow's buffer."""
    array = column.combine_chunks()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        array = array.cast(pa.large_string())
    if len(array) == 0:
        return b""
    offsets = memoryview(array.buffers()[1]).cast("q" if pa.types.is_large_string(array.type) else "i")
    start, end = offsets[array.offset], offsets[array.offset + len(array)]
    return array.buffers()[2].slice(start, end - start).to_pybytes()
