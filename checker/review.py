"""``--report FILE.md|FILE.html``: a review document of a ``check`` or ``compare`` run.

The document is self-contained, to attach to a KIP discussion: the configuration and the command
line that reproduces the run, the verdict table, every counterexample as a message sequence chart
(``checker.chart``) and, for ``compare``, the step where the configurations part ways, marked on
the failing column's chart. HTML: inline CSS and inline SVG, no script, and a content security
policy that forbids loading anything. Markdown: tables and the terminal charts in code blocks.
The extension decides the format; ``check_report_path`` refuses anything else before a run.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .chart import Chart, chart_of_trace
from .outfile import OutputError, check_output, write_output

if TYPE_CHECKING:
    from .compare import Comparison
    from .machine import Machine
    from .report import Outcome

FORMATS = {".md": "markdown", ".html": "html"}


class ReportPathError(ValueError):
    """--report names something that cannot be a report; one line."""


def report_format(path: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ReportPathError(f"{path}: --report writes .md or .html files (the extension decides "
                              "the format)")
    return FORMATS[suffix]


def check_report_path(path: str) -> None:
    """Before a run: the format is known and the file can be written (OutputError otherwise)."""
    if path == "":
        raise ReportPathError("--report: the file name is empty")
    report_format(path)
    try:
        check_output(path, "--report")
    except OutputError as exc:
        raise ReportPathError(str(exc)) from None


@dataclass
class ChartEntry:
    heading: str
    chart: Chart
    #: state index -> a note drawn on that step (the diverging step)
    marks: dict[int, str] = field(default_factory=dict)
    text: str = ""  # a paragraph under the heading


@dataclass
class Review:
    title: str
    command: str
    config: list[tuple[str, str]]
    table: list[list[str]]  # header row first
    #: rows of ``table`` (1-based, as in the table) to highlight: verdicts that differ or fail
    marked: set[int] = field(default_factory=set)
    findings: list[tuple[str, list[str]]] = field(default_factory=list)  # (heading, lines)
    charts: list[ChartEntry] = field(default_factory=list)


def command_line(argv: Sequence[str] | None, fallback: Sequence[str]) -> str:
    return "eoscheck " + shlex.join(list(argv) if argv else list(fallback))


def _settings(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "(none)"


# ---------------------------------------------------------------------------------------- check


def review_of_check(outcomes: Sequence[Outcome], machines: Sequence[Machine],
                    argv: Sequence[str] | None) -> Review:
    from .report import expected_label, result_label

    names = ", ".join(o.spec.name for o in outcomes)
    config: list[tuple[str, str]] = []
    for o in outcomes:
        s = o.spec
        config.append((s.name, (f"{s.model}, variant {s.variant}; switches "
                       f"{_settings(dict(s.switches))}; bounds {_settings(dict(s.bounds))}; "
                       f"strategy {o.strategy}")))
    table = [["status", "spec", "expected", "result (trace length)", "distinct states"]]
    marked = set()
    for i, o in enumerate(outcomes, start=1):
        table.append(["OK" if o.met else "FAIL", o.spec.name, expected_label(o.spec),
                      result_label(o.result), f"{o.result.stats.distinct:,}"])
        if not o.met:
            marked.add(i)
    review = Review(f"eoscheck check: {names}", command_line(argv, ["check"]), config, table, marked)
    failures = [f"{o.spec.name}: {o.message}" for o in outcomes if not o.met]
    if failures:
        review.findings.append(("Specs that did not meet their expected verdict", failures))
    for o, machine in zip(outcomes, machines):
        for v in o.result.violations:
            doc = _doc(machine, v.property)
            chart = chart_of_trace(machine, v.trace, f"{o.spec.name}: {v.property} "
                                   f"({v.length} states)", loop=v.loop)
            files = o.counterexamples.get(v.property)
            where = f" Written to {files[0]}." if files else ""
            review.charts.append(ChartEntry(f"{o.spec.name}: {v.property}", chart,
                                            text=f"{doc} Trace of {v.length} states.{where}"))
    return review


def _doc(machine: Machine, prop: str) -> str:
    p = machine.properties().get(prop)
    if p is not None:
        return p.doc.strip()
    return "A state with no successor that is not terminal." if prop == "deadlock" else ""


# -------------------------------------------------------------------------------------- compare


def review_of_compare(comparison: Comparison, argv: Sequence[str] | None) -> Review:
    spec = comparison.spec
    cols = comparison.columns
    config = [("spec", f"{spec.name} ({spec.path})"), ("model", spec.model),
              ("bounds", _settings(dict(cols[0].spec.bounds)))]
    for c in cols:
        own = " (the spec's own configuration)" if c.met is not None else ""
        config.append((c.label, (f"variant {c.spec.variant}; switches "
                       f"{_settings(dict(c.spec.switches))}{own}")))
    table = [["property", *(c.label for c in cols)]]
    differing = comparison.differing()
    marked = set()
    for i, p in enumerate(comparison.properties, start=1):
        table.append([p, *(c.cell(p).label() for c in cols)])
        if p in differing:
            marked.add(i)
    table.append(["states explored", *(f"{c.result.stats.distinct:,}" for c in cols)])
    review = Review(f"eoscheck compare: {spec.name} under {', '.join(c.label for c in cols)}",
                    command_line(argv, ["compare", str(spec.path)]), config, table, marked)
    for d in comparison.divergences:
        lines = [(f"{d.property} is violated under {d.failing} (trace of {d.trace_length} states) "
                 f"and holds under {d.passing}."),
                 f"Replaying {d.failing}'s shortest counterexample under {d.passing}: "
                 f"{d.summary()}" + (": that step is the fix." if d.kind in ("refused", "differs") else ".")]
        if d.kind != "none" and d.index:
            lines.append(f"The diverging step: {d.index}. {d.label}")
        if d.alternatives:
            lines.append(f"{d.passing} enables instead: {'; '.join(d.alternatives)}")
        for name, (a, b) in list(d.diff.items())[:12]:
            lines.append(f"{name}: {d.failing} {a!r}, {d.passing} {b!r}")
        if d.later_refusal is not None:
            lines.append(f"From its own state {d.passing} goes on until step "
                         f"{d.later_refusal[0]}, which it refuses: {d.later_refusal[1]}")
        review.findings.append((f"Where {d.passing} parts from {d.failing} on {d.property}", lines))
    for c in cols:
        if c.met is not None:
            review.findings.append(("The spec's own configuration",
                                    [f"{'OK' if c.met else 'FAIL'} {c.label}: {c.message}"]))
    for prop in differing:
        for c in cols:
            if c.cell(prop).verdict != "violates":
                continue
            violation = min((v for v in c.result.violations if v.property == prop),
                            key=lambda v: v.length)
            marks = {d.index: f"diverges: {d.summary()}" for d in comparison.divergences
                     if d.property == prop and d.failing == c.label and d.kind in ("refused", "differs")}
            chart = chart_of_trace(c.machine, violation.trace,
                                   f"{spec.name} under {c.label}: {prop} ({violation.length} states)",
                                   loop=violation.loop)
            review.charts.append(ChartEntry(f"{prop} under {c.label}", chart, marks,
                                            text=f"{_doc(c.machine, prop)} Shortest trace: "
                                                 f"{violation.length} states."))
    return review


# ---------------------------------------------------------------------------------------- write


def write_review(path: str, review: Review) -> None:
    fmt = report_format(path)
    text = render_markdown(review) if fmt == "markdown" else render_html(review)
    write_output(path, text)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(review: Review) -> str:
    from .chart_text import lines

    out = [f"# {review.title}", "", "Reproduce this run:", "", "```sh", review.command, "```", "",
           "## Configuration", "", "| | |", "|---|---|"]
    out += [f"| {_md_cell(k)} | {_md_cell(v)} |" for k, v in review.config]
    out += ["", "## Verdicts", ""]
    header, *rows = review.table
    out.append("| " + " | ".join(_md_cell(h) for h in header) + " |")
    out.append("|" + "---|" * len(header))
    for i, row in enumerate(rows, start=1):
        cells = [_md_cell(c) for c in row]
        if i in review.marked:
            cells = [f"**{c}**" for c in cells]
        out.append("| " + " | ".join(cells) + " |")
    for heading, body in review.findings:
        out += ["", f"## {heading}", ""]
        out += [f"- {_md_cell(line)}" for line in body]
    if review.charts:
        out += ["", "## Counterexamples as message sequence charts"]
    for entry in review.charts:
        out += ["", f"### {entry.heading}", ""]
        if entry.text:
            out += [entry.text, ""]
        out += ["```text", *lines(entry.chart, 80, entry.marks), "```"]
    return "\n".join(out) + "\n"


CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px;
       color: #212121; background: #ffffff; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; } h3 { font-size: 16px; }
pre { background: #f5f5f5; padding: 8px 12px; overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #bdbdbd; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #eeeeee; }
tr.marked td { background: #fff8e1; font-weight: bold; }
.chart { overflow-x: auto; border: 1px solid #e0e0e0; margin: 8px 0 24px 0; }
svg.msc text { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
svg.msc text.lane { font-weight: bold; font-size: 13px; }
svg.msc text.step { font-size: 12px; }
svg.msc text.mark { font-weight: bold; }
.legend span { margin-right: 14px; }
"""

LEGEND = ('<p class="legend"><span style="color:#1f5fbf">&#8594; message</span>'
          '<span style="color:#e67e00">&#8594; late message (overtaken)</span>'
          '<span style="color:#c62828">&#10005; lost message</span>'
          '<span style="color:#c62828">&#9632; fault</span>'
          '<span style="color:#666666">&#9633; state change</span>'
          '<span style="color:#424242">&#9679; step</span></p>')


def render_html(review: Review) -> str:
    from .chart_svg import render_svg

    e = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           # nothing may be fetched: the document is all there is
           ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
           'style-src \'unsafe-inline\'; img-src data:">'),
           f"<title>{e(review.title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
           f"<h1>{e(review.title)}</h1>", "<p>Reproduce this run:</p>",
           f"<pre>{e(review.command)}</pre>", "<h2>Configuration</h2>", "<table>"]
    out += [f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in review.config]
    out += ["</table>", "<h2>Verdicts</h2>", '<table class="verdicts">']
    header, *rows = review.table
    out.append("<tr>" + "".join(f"<th>{e(h)}</th>" for h in header) + "</tr>")
    for i, row in enumerate(rows, start=1):
        cls = ' class="marked"' if i in review.marked else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
    out.append("</table>")
    for heading, body in review.findings:
        out += [f"<h2>{e(heading)}</h2>", "<ul>", *(f"<li>{e(line)}</li>" for line in body), "</ul>"]
    if review.charts:
        out += ["<h2>Counterexamples as message sequence charts</h2>", LEGEND]
    for entry in review.charts:
        out.append(f"<h3>{e(entry.heading)}</h3>")
        if entry.text:
            out.append(f"<p>{e(entry.text)}</p>")
        for note in entry.chart.notes:
            out.append(f"<p><em>{e(note)}</em></p>")
        out += ['<div class="chart">', render_svg(entry.chart, entry.marks), "</div>"]
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"
