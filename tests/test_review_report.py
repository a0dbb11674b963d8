"""``--report FILE.md|FILE.html`` on ``check`` and ``compare``: content, and bad paths refused
before anything runs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from eoscheck.checker.cli import main

REPO = Path(__file__).resolve().parents[1]
REORDER = str(REPO / "specs" / "first-write-reorder-duplicate-shipped.toml")
DIEHARD = str(REPO / "specs" / "examples" / "diehard-big-jug-reaches-4.toml")
VARIANTS = ["--variants", "kafka-shipped,kip360-designed"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv])
    out, err = capsys.readouterr()
    return code, out, err


def external_references(html: str) -> list[str]:
    """Anything the document would fetch: src/href attributes, CSS url(), @import, scripts."""
    found = re.findall(r"""(?:src|href)\s*=\s*["'][^"']*["']""", html, flags=re.IGNORECASE)
    found += re.findall(r"url\((?!#)", html) + re.findall(r"@import", html) + re.findall(r"<script", html, re.IGNORECASE)
    found += [u for u in re.findall(r"https?://[^\s\"'<>]+", html) if u != "http://www.w3.org/2000/svg"]
    return found


def test_compare_html_report_holds_config_command_table_divergence_and_chart(tmp_path: Path,
                                                                             capsys) -> None:
    report = tmp_path / "review.html"
    code, out, err = run(capsys, "compare", REORDER, *VARIANTS, "--no-progress", "--report", str(report))
    assert code == 0, out + err
    html = report.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert external_references(html) == []
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    # the command line that reproduces it, the configuration, the table
    assert f"eoscheck compare {REORDER} --variants kafka-shipped,kip360-designed" in html
    assert "client_epoch_bump=resequence_inflight" in html and "client_epoch_bump=fail_inflight" in html
    assert re.search(r'<tr class="marked"><td>NoDuplicates</td><td>violates \(18\)</td><td>holds</td>', html)
    # the diverging step, in words and on the chart
    assert "step 11 of 17: kip360-designed refuses HandleProduceResponse(partition=3, client=0, record=0, " \
           "error=OUT_OF_ORDER_SEQUENCE_NUMBER, outcome=retried)" in html
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="msc"') == 1
    assert "\u2190 diverges: step 11 of 17" in html
    assert ">producer[0]</text>" in html and ">leader</text>" in html
    assert html.count('<g class="msg">') == 10 and html.count('<g class="lost">') == 1


def test_compare_markdown_report_has_the_terminal_chart(tmp_path: Path, capsys) -> None:
    report = tmp_path / "review.md"
    code, _, err = run(capsys, "compare", REORDER, *VARIANTS, "--no-progress", "--report", str(report))
    assert code == 0, err
    md = report.read_text()
    assert md.startswith("# eoscheck compare: first-write-reorder-duplicate-shipped")
    assert "| **NoDuplicates** | **violates (18)** | **holds** |" in md
    assert "```text" in md and "|--#1 Produce(client0/r0, pi..->|" in md
    assert "<- diverges: step 11 of 17" in md
    chart = md.split("```text", 1)[1].split("```", 1)[0]
    assert max(len(line) for line in chart.splitlines()) <= 80


def test_check_report_has_every_counterexample(tmp_path: Path, capsys) -> None:
    report = tmp_path / "check.html"
    code, out, err = run(capsys, "check", DIEHARD, REORDER, "--quiet", "--no-progress",
                         "--out", str(tmp_path / "cex"), "--report", str(report))
    assert code == 0, out + err
    html = report.read_text()
    assert external_references(html) == []
    assert html.count('class="msc"') == 2
    assert "diehard-big-jug-reaches-4: NotSolved" in html
    assert "first-write-reorder-duplicate-shipped: NoDuplicates" in html
    assert "eoscheck check " in html and "--report" in html
    md = tmp_path / "check.md"
    assert main(["check", DIEHARD, "--quiet", "--no-progress", "--out", str(tmp_path / "cex"),
                 "--report", str(md)]) == 0
    assert "| OK | diehard-big-jug-reaches-4 | violates NotSolved (len 7) | NotSolved (7) |" in md.read_text()


def _bad_paths(tmp_path: Path) -> list[tuple[str, str]]:
    (tmp_path / "dir.html").mkdir()
    ro = tmp_path / "ro.html"
    ro.write_text("mine")
    ro.chmod(0o444)
    return [
        (str(tmp_path / "r.txt"), "--report writes .md or .html files"),
        (str(tmp_path / "r"), "--report writes .md or .html files"),
        (str(tmp_path / "dir.html"), "directory"),
        (str(ro), "read-only"),
        (str(tmp_path / "nofile" / "x" / "r.html"), ""),
        ("", "empty"),
    ]


@pytest.mark.parametrize("command", ["check", "compare"])
def test_bad_report_paths_are_one_line_exit_2_before_the_run(command: str, tmp_path: Path, capsys,
                                                             monkeypatch) -> None:
    from eoscheck.checker import explore

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started before --report was checked")

    monkeypatch.setattr(explore, "explore", no_run)
    for path, message in _bad_paths(tmp_path):
        if path.endswith("nofile/x/r.html"):
            # a missing directory is created by the write; refusing it needs a file in the way
            (tmp_path / "nofile").write_text("")
            message = "Not a directory"
        argv = (["check", REORDER, "--out", str(tmp_path / "cex")] if command == "check"
                else ["compare", REORDER, *VARIANTS])
        code, out, err = run(capsys, *argv, "--no-progress", "--report", path)
        assert code == 2, (path, out, err)
        assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "cex").exists()
    assert (tmp_path / "ro.html").read_text() == "mine"


def test_report_and_json_may_not_be_one_file(tmp_path: Path, capsys) -> None:
    path = str(tmp_path / "same.html")
    code, _, err = run(capsys, "check", REORDER, "--out", str(tmp_path / "cex"), "--json", path,
                       "--report", path)
    assert code == 2 and "named for two outputs" in err
    code, _, err = run(capsys, "compare", REORDER, *VARIANTS, "--json", path, "--report", path)
    assert code == 2 and "named for --report and --json" in err
    assert not os.path.exists(path)
