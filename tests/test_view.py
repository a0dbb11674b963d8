"""The trace viewer: changed fields only, --full, --actor, 80 columns, no ANSI when piped."""

from __future__ import annotations

import io
import re

import pytest

from eoscheck.checker.counterexample import CexStep, Counterexample, write_counterexample
from eoscheck.checker.view import ViewError, make_console, render

ANSI = re.compile(r"\x1b\[")


def cex() -> Counterexample:
    states = [
        {"client[0].epoch": 0, "client[0].seq": 0, "client[1].epoch": 0, "broker.log": []},
        {"client[0].epoch": 1, "client[0].seq": 0, "client[1].epoch": 0, "broker.log": []},
        {"client[0].epoch": 1, "client[0].seq": 1, "client[1].epoch": 0, "broker.log": [[1, 0]]},
        {"client[0].epoch": 1, "client[0].seq": 1, "client[1].epoch": 5, "broker.log": [[1, 0], [1, 0]]},
    ]
    labels = ["Initial state", "InitProducerId(client=0)", "Send(client=0, seq=0)",
              "Retry(client=1)"]
    steps = [CexStep(i, None if i == 0 else labels[i].split("(")[0], labels[i], {}, s)
             for i, s in enumerate(states)]
    return Counterexample(spec="dup", model="toy", variant="v", switches={"retries": True},
                          bounds={"clients": 2}, property="NoDuplicates",
                          property_doc="no batch is appended twice", kind="invariant",
                          engine={"strategy": "bfs", "distinct": 1234}, found_length=4,
                          shortened_by="bfs (shortest)", steps=steps)


def show(c: Counterexample, width: int = 80, **kw) -> str:
    out = io.StringIO()
    render(c, make_console(out, width=width), **kw)
    return out.getvalue()


def blocks(text: str) -> dict[str, str]:
    """Step title line -> the lines of its block."""
    found: dict[str, str] = {}
    for chunk in re.split(r"\n(?=Step \d+ )", text):
        if chunk.startswith("Step "):
            title, _, body = chunk.partition("\n")
            found[title.split("  ")[0]] = body
    return found


def test_header_and_changed_fields_only():
    text = show(cex())
    assert not ANSI.search(text)
    assert "dup violates NoDuplicates (invariant)" in text
    assert "no batch is appended twice" in text
    assert "bounds clients=2" in text and "switches retries=true" in text
    assert "length 4 states; bfs (shortest)" in text and "1,234 distinct states" in text
    b = blocks(text)
    assert set(b) == {"Step 0", "Step 1", "Step 2", "Step 3"}
    # the initial state is shown whole
    for name in ("client[0].epoch", "client[0].seq", "client[1].epoch", "broker.log"):
        assert name in b["Step 0"]
    # later steps only show what changed, as old -> new
    assert "client[0].epoch 0 -> 1" in b["Step 1"]
    assert "seq" not in b["Step 1"] and "broker.log" not in b["Step 1"]
    assert re.search(r"^  client\[0\]\.seq +0 -> 1", b["Step 2"], re.M)
    assert "broker.log" in b["Step 2"] and "[] -> [[1, 0]]" in b["Step 2"]
    assert "client[0].epoch" not in b["Step 2"]
    assert "<- violates NoDuplicates" in text.splitlines()[[i for i, line in enumerate(text.splitlines()) if line.startswith("Step 3")][0]]
    for line in text.splitlines():
        assert len(line) <= 80


def test_full_shows_every_field_each_step():
    b = blocks(show(cex(), full=True))
    for body in b.values():
        assert body.count("client[") == 3 and "broker.log" in body
    assert "client[0].epoch 0 -> 1" in b["Step 1"]


def test_actor_filter():
    b = blocks(show(cex(), actor="client[1]"))
    assert "client[1].epoch" in b["Step 0"] and "client[0]" not in b["Step 0"]
    assert "broker" not in b["Step 0"]
    assert "(no change to client[1]*)" in b["Step 1"]
    assert "client[1].epoch 0 -> 5" in b["Step 3"]


def test_unknown_actor_lists_actors():
    with pytest.raises(ViewError) as err:
        show(cex(), actor="leader")
    assert "no field starts with 'leader'; actors in this trace: client[0], client[1], broker" == str(err.value)


def test_long_values_wrap_within_width():
    c = cex()
    c.steps[3].state["broker.log"] = [[i, i] for i in range(40)]
    text = show(c, width=60)
    assert all(len(line) <= 60 for line in text.splitlines())
    assert "[38, 38]" in text


def test_colour_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    render(cex(), make_console(out, width=80))
    assert ANSI.search(out.getvalue())  # a terminal gets highlighting ...
    assert not ANSI.search(show(cex()))  # ... a pipe does not


def test_show_command_on_json_and_itf(tmp_path, capsys, monkeypatch):
    from eoscheck.checker.cli import main

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    json_path, itf_path = write_counterexample(cex(), tmp_path)
    assert main(["show", str(json_path)]) == 0
    from_json = capsys.readouterr().out
    assert main(["show", str(itf_path)]) == 0
    from_itf = capsys.readouterr().out
    assert not ANSI.search(from_json)
    assert "client[0].epoch 0 -> 1" in from_json
    assert blocks(from_json) == blocks(from_itf)
    assert main(["show", str(json_path), "--actor", "nobody"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no field starts with 'nobody'" in err
