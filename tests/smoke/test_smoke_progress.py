"""Progress display (preflight/smoke/progress.py): plain lines off a terminal, a rich status on
one; always on the stream given (stderr), never raising when that stream is gone."""

from __future__ import annotations

import io

from preflight.smoke.progress import progress_display


def test_plain_lines_off_a_terminal() -> None:
    err = io.StringIO()
    with progress_display("fp8-doctor smoke", stream=err) as progress:
        progress("smoke child on cuda:0: torchao (3 s)")
        progress("smoke child on cuda:0 finished in 9.1 s")
    assert err.getvalue().splitlines() == ["smoke child on cuda:0: torchao (3 s)",
                                           "smoke child on cuda:0 finished in 9.1 s"]


def test_live_status_keeps_each_message_and_reads_no_markup() -> None:
    err = io.StringIO()
    with progress_display("fp8-doctor smoke", stream=err, live=True) as progress:
        progress("stage [bold]te[/bold]")
    assert "stage [bold]te[/bold]" in err.getvalue()


def test_a_closed_stream_does_not_fail_the_run() -> None:
    err = io.StringIO()
    err.close()
    with progress_display("x", stream=err) as progress:
        progress("still fine")
