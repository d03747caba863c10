"""Exit codes of every kconform command, in Jepsen's three-valued sense (valid / invalid / unknown).

CI reads them: only EXIT_VIOLATION means "the implementation is wrong"; EXIT_ERROR means the run
could not decide (bad input, a crash of kconform itself), so it must never be read as a finding.
"""

from __future__ import annotations

import sys

EXIT_PASS = 0
"""Valid: every check ran and the implementation conformed (and, with --self-check, every mutant
was caught)."""

EXIT_VIOLATION = 1
"""Invalid: a non-conformance or invariant violation was found (or a mutant escaped the
self-check); a counterexample file was written. Also a passing gate run whose handler-outcome
coverage is below ``--min-coverage``: the run decided, and its verdict is that the evidence is too
thin to accept (a vacuous pass fails CI like a finding; the message and coverage.json name the
missing outcomes), not that kconform could not decide (which would be EXIT_ERROR)."""

EXIT_ERROR = 2
"""Unknown: the run could not decide, because of a user error (bad config, unknown mutant,
unreadable, damaged or invalid trace file or corpus, bad flags), a budget that ran out (replay
--timeout / --run-timeout, naming the step) or an internal error of kconform. Never a verdict on
the implementation.

``kconform replay`` of a file that records a failure: 1 if the replay fails, 0 if it no longer does
(the bug is fixed: as a regression test the file passes; the output says "NOT reproduced"), 2 if
the file is damaged (refused before anything runs) or a budget ran out."""

EXIT_UNKNOWN = 3
"""Unknown verdict of ``kconform probe``: the history was read and judged, no forbidden anomaly was
found, but too little was observed to call it valid (e.g. no read covered any acknowledged write).
Distinct from EXIT_ERROR (the input could not be judged) and never a pass (docs/probe.md)."""


def user_error(message: str) -> int:
    """Report a problem with what the user gave a command as the one line every command prints for
    it (``kconform: error: MESSAGE`` on standard error) and return EXIT_ERROR, the exit code."""
    print(f"kconform: error: {message}", file=sys.stderr)
    return EXIT_ERROR
