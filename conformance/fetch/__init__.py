"""The fetch-session slice (KIP-227): its judge, machine, zoo, coverage and ``Slice``."""
