"""One slice's mutants declared one at a time, each name beside its description: the shape every
slice's ``impl/<slice>/mutants.py`` shares (impl.mutants merges the slices' tables).

Guarantees: a name is declared once per table (a second declaration is an error); ``descriptions``
keeps the declaration order, which is the order the gate's self-check runs them.
"""

from __future__ import annotations


class MutantTable:
    """A slice's mutants: name → description, and the configuration some need to be observable."""

    def __init__(self) -> None:
        self.descriptions: dict[str, str] = {}
        """Name → description (the KIP or Kafka issue that fixed the bug, and the symptom)."""
        self.configs: dict[str, dict[str, int | bool]] = {}
        """Name → field overrides of the slice's config the mutant needs (impl.mutants.config_for)."""

    def add(self, name: str, description: str, config: dict[str, int | bool] | None = None) -> str:
        """Declare mutant ``name``; returns the name (the constant the slice's code branches on)."""
        if name in self.descriptions:
            raise ValueError(f"mutant {name!r} declared twice")
        self.descriptions[name] = description
        if config:
            self.configs[name] = dict(config)
        return name


__all__ = ["MutantTable"]
