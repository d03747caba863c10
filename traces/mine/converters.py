"""PySpark's NumPy argument converters for Py4J, without the import of pandas they make.

``pyspark.sql.types`` registers two Py4J input converters (``NumpyScalarConverter``,
``NumpyArrayConverter``) that Py4J asks about every argument of every call into the JVM. Their
``can_convert`` imports ``pyspark.testing.utils`` to read ``have_numpy``, and that module imports
pandas (``require_minimum_pandas_version``), probes a dozen optional packages and imports pyarrow:
the driver's first Py4J call with an argument (``SparkConf(loadDefaults)``, inside SparkContext's
start) paid 360 module imports, 295 of them pandas', 0.3 CPU-s and as much wall clock on the
session's critical path (PySpark 4.3, 2026-11-27). The miner's driver uses no pandas.

``light_numpy_converters`` gives both classes a ``can_convert`` that answers the same without
that import: an object can only be a NumPy scalar or array if NumPy is imported, so the check reads
``sys.modules`` instead of asking whether NumPy is installed, then tests the object as PySpark does
(``np.generic``; a one-dimensional ``np.ndarray``). PySpark's ``convert`` methods are untouched.
A PySpark without these classes is left alone.
"""

from __future__ import annotations

import sys
from typing import Any


def _scalar(self: Any, obj: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.generic)


def _array(self: Any, obj: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.ndarray) and obj.ndim == 1


def light_numpy_converters() -> bool:
    """Replace the ``can_convert`` of PySpark's two NumPy converters (see the module); True if done."""
    from pyspark.sql import types

    scalar = getattr(types, "NumpyScalarConverter", None)
    array = getattr(types, "NumpyArrayConverter", None)
    if scalar is None or array is None:
        return False
    scalar.can_convert = _scalar
    array.can_convert = _array
    return True
