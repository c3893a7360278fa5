"""The cyclic collector is paused while a scan reads and a report renders
(grit_scan/collector.py, issue 15), and left as the caller had it."""

import gc
import io
from pathlib import Path

import pytest

from grit_scan import scan
from grit_scan.collector import paused
from grit_scan.report.formats import OutputFormat, render

SAMPLE = str(Path(__file__).resolve().parent.parent / "fixtures" / "sample")


@pytest.mark.parametrize("enabled", [True, False])
def test_scan_and_render_leave_the_collector_as_they_found_it(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        report = scan([SAMPLE])
        assert gc.isenabled() is enabled
        render(report, OutputFormat.JSON, io.StringIO())
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_paused_nests_and_restores_on_an_exception() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        with pytest.raises(ValueError):
            with paused():
                assert not gc.isenabled()
                with paused():
                    assert not gc.isenabled()
                assert not gc.isenabled()  # the inner pause leaves the outer one's state
                raise ValueError
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
