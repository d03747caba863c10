"""The validation boundary: every input kconform reads is checked completely here before anything runs.

One module per input kind, all raising one error type (``errors.InputError``: file, line or row,
field, message), which the command line reports as ``file:line: field: message`` with exit code 2:

- ``jsontext``: JSON text as kconform accepts it anywhere (bounded size, line length and nesting,
  duplicate keys, NaN and oversized integers refused);
- ``limits``: Kafka's own limits and the suite's bounds per field (int16 producer epochs, int32
  leader epochs and sequences, int64 offsets and producer ids, enums, node roles, operation
  arguments), used by the JSON Schema and by every reader;
- ``schemacheck``: a generic validator of JSON values against ``traces/event-schema.json``;
- ``references``: ids checked against the file's own configuration (brokers, partitions,
  transactional ids, groups);
- ``config``: a configuration (a file header, a manifest entry, ``--config`` / ``--set``);
- ``trace_file``: a JSON Lines trace or counterexample file;
- ``corpus``: a Parquet corpus and its manifest (hashes, footers, schema, data), before any engine.
"""
