"""traces.mine.converters: PySpark's NumPy converters for Py4J answer as before, without importing
pandas (which PySpark's own check does on the driver's first call into the JVM)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
from pyspark.sql import types
originals = (types.NumpyScalarConverter.can_convert, types.NumpyArrayConverter.can_convert)
from kconform.traces.mine.converters import light_numpy_converters
assert light_numpy_converters()
scalar, array = types.NumpyScalarConverter(), types.NumpyArrayConverter()
print("pandas" in sys.modules, [scalar.can_convert(x) or array.can_convert(x) for x in ("s", 3, [1], None)])
import numpy as np
samples = ("s", 3, [1], None, np.int64(3), np.float32(1.5), np.array([1, 2]), np.array([[1]]), np.array(2))
light = [(scalar.can_convert(x), array.can_convert(x)) for x in samples]
print("pandas" in sys.modules)
pyspark_s = [(originals[0](scalar, x), originals[1](array, x)) for x in samples]
print(light == pyspark_s, light)
"""


def test_the_numpy_converters_answer_as_pyspark_s_without_importing_pandas() -> None:
    run = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    before_numpy, after_numpy, same = run.stdout.splitlines()
    assert before_numpy == "False [False, False, False, False]"
    assert after_numpy == "False"
    assert same.startswith("True"), same
    assert "(True, False)" in same and "(False, True)" in same, "both converters must accept something"
