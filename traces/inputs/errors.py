"""The one error type of the validation boundary."""

from __future__ import annotations

import os


class InputError(ValueError):
    """An input kconform refuses: ``file``, where in it (``line``: a 1-based line of a text file,
    or with ``unit="row"`` a 0-based row of a Parquet file; None for the file as a whole), the
    ``field`` (a dotted path such as ``step 3.events[2].leader``; "" when no one field is at
    fault) and what is wrong. ``str()`` is the one line the command line prints:
    ``file:line: field: message``."""

    def __init__(
        self, file: str | os.PathLike[str], line: int | None, field: str, message: str, unit: str = "line"
    ) -> None:
        self.file = os.fspath(file)
        self.line = line
        self.field = field
        self.message = message
        self.unit = unit
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.line is None:
            where = self.file
        elif self.unit == "line":
            where = f"{self.file}:{self.line}"
        else:
            where = f"{self.file} {self.unit} {self.line}"
        field = f"{self.field}: " if self.field else ""
        return f"{where}: {field}{self.message}"
