"""Test helper: run the ``vbp`` command line in this process."""

from __future__ import annotations

import pytest

from vbp.cli import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``vbp ARGS`` in-process: (exit status, stdout, stderr); never a traceback."""
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    code = e.value.code
    return (code if isinstance(code, int) else (0 if code is None else 1)), out, err
