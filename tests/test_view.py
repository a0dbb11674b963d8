"""The trace viewer: changed fields only, element diffs for lists, --full, --actor, 80 columns,
no ANSI when piped."""

from __future__ import annotations

import io
import re

import pytest
from eoscheck.checker.counterexample import CexStep, Counterexample, write_counterexample
from eoscheck.checker.view import ViewError, make_console, render

ANSI = re.compile(r"\x1b\[")
ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


def make_cex(states: list[dict], labels: list[str]) -> Counterexample:
    steps = [CexStep(i, None if i == 0 else labels[i].split("(")[0], labels[i], {}, s)
             for i, s in enumerate(states)]
    return Counterexample(spec="dup", model="toy", variant="v", switches={"retries": True},
                          bounds={"clients": 2}, property="NoDuplicates",
                          property_doc="no batch is appended twice", kind="invariant",
                          engine={"strategy": "bfs", "distinct": 1234}, found_length=len(states),
                          shortened_by="bfs (shortest)", steps=steps)


def cex() -> Counterexample:
    return make_cex(
        [{"client[0].epoch": 0, "client[0].seq": 0, "client[1].epoch": 0, "broker.log": []},
         {"client[0].epoch": 1, "client[0].seq": 0, "client[1].epoch": 0, "broker.log": []},
         {"client[0].epoch": 1, "client[0].seq": 1, "client[1].epoch": 0, "broker.log": [[1, 0]]},
         {"client[0].epoch": 1, "client[0].seq": 1, "client[1].epoch": 5,
          "broker.log": [[1, 0], [1, 0]]}],
        ["Initial state", "InitProducerId(client=0)", "Send(client=0, seq=0)", "Retry(client=1)"])


def story() -> Counterexample:
    """A Kafka-like trace whose list fields append, remove and change elements in place."""
    q0 = "r0 queued (pid -1, epoch -1, seq -1)"
    f0 = "r0 in-flight (pid 0, epoch 0, seq 0)"
    q1 = "r1 queued (pid -1, epoch -1, seq -1)"
    req = "Produce(client0/r0, pid 0, epoch 0, seq 0)"
    return make_cex(
        [{"client[0].batches": [q0], "network.requests": [], "leader.log": [], "n": 0},
         # a batch changes state in place; a request is appended to an empty list
         {"client[0].batches": [f0], "network.requests": [req], "leader.log": [], "n": 0},
         # appended at the end of a non-empty list
         {"client[0].batches": [f0, q1], "network.requests": [req], "leader.log": [], "n": 0},
         # removed from the front; the log grows; a scalar changes
         {"client[0].batches": [q1], "network.requests": [],
          "leader.log": ["0: client0/r0 (pid 0, epoch 0, seq 0)"], "n": 1}],
        ["Initial state", "Drain(client=0)", "Send(client=0)", "HandleProduce(client=0)"])


def show(c: Counterexample, width: int = 80, **kw) -> str:
    out = io.StringIO()
    render(c, make_console(out, width=width), **kw)
    return out.getvalue()


def blocks(text: str) -> dict[str, str]:
    """Step title ("Step N") -> the lines of its block."""
    found: dict[str, str] = {}
    for chunk in re.split(r"\n(?=Step \d+ )", text):
        if chunk.startswith("Step "):
            title, _, body = chunk.partition("\n")
            found[title.split("  ")[0]] = body
    return found


def rows(body: str) -> dict[str, list[str]]:
    """Field name -> its value lines (the name column removed, continuation lines included)."""
    found: dict[str, list[str]] = {}
    name = ""
    column = 0
    for line in body.splitlines():
        m = re.match(r"^  (\S+)( +)(.*)$", line)
        if m and not line.startswith("   "):
            name, column = m.group(1), 2 + len(m.group(1)) + len(m.group(2))
            found[name] = [m.group(3)]
        elif name and line.strip():
            found[name].append(line[column:])
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
    # the initial state is shown whole, lists as lists
    assert rows(b["Step 0"]) == {"client[0].epoch": ["0"], "client[0].seq": ["0"],
                                 "client[1].epoch": ["0"], "broker.log": ["[]"]}
    # later steps only show what changed: scalars as old -> new, lists as element diffs
    assert rows(b["Step 1"]) == {"client[0].epoch": ["0 -> 1"]}
    assert rows(b["Step 2"]) == {"client[0].seq": ["0 -> 1"], "broker.log": ["+ [1, 0]"]}
    # the duplicate: one more identical element, not the two whole lists
    assert rows(b["Step 3"]) == {"client[1].epoch": ["0 -> 5"], "broker.log": ["+ [1, 0]"]}
    step3_title = next(line for line in text.splitlines() if line.startswith("Step 3"))
    assert "<- violates NoDuplicates" in step3_title
    for line in text.splitlines():
        assert len(line) <= 80 and line == line.rstrip()


def test_list_fields_show_added_removed_and_changed_elements():
    b = blocks(show(story()))
    step1 = rows(b["Step 1"])
    assert set(step1) == {"client[0].batches", "network.requests"}
    assert step1["network.requests"] == ["+ Produce(client0/r0, pid 0, epoch 0, seq 0)"]
    # the in-place change reads "~ old -> new" (wrapped onto an aligned "->" line when long)
    changed = " ".join(line.strip() for line in step1["client[0].batches"])
    assert re.fullmatch(r"~ +r0 queued \(pid -1, epoch -1, seq -1\) +-> "
                        r"r0 in-flight \(pid 0, epoch 0, seq 0\)", changed)
    # an appended element: a "+" line and not the old list
    assert rows(b["Step 2"]) == {"client[0].batches": ["+ r1 queued (pid -1, epoch -1, seq -1)"]}
    assert "r0 in-flight" not in b["Step 2"] and "[" not in b["Step 2"].replace("client[0]", "")
    # removed elements: "-" lines; an unchanged survivor is not repeated
    step3 = rows(b["Step 3"])
    assert step3["client[0].batches"] == ["- r0 in-flight (pid 0, epoch 0, seq 0)"]
    assert step3["network.requests"] == ["- Produce(client0/r0, pid 0, epoch 0, seq 0)"]
    assert step3["leader.log"] == ["+ 0: client0/r0 (pid 0, epoch 0, seq 0)"]
    assert step3["n"] == ["0 -> 1"]
    assert "r1 queued" not in b["Step 3"]


def test_element_diff_keeps_types_apart_and_handles_dicts():
    c = make_cex([{"xs": [1, "a"], "d": {"k": 1, "gone": True}},
                  {"xs": ["1", "a", "b"], "d": {"k": 2, "new": [3]}}],
                 ["Initial state", "Step"])
    body = rows(blocks(show(c))["Step 1"])
    # 1 and "1" print alike bare, so the change falls back to JSON forms
    assert body["xs"] == ['~ 1 -> "1"', "+ b"]
    assert body["d"] == ["~ k: 1 -> 2", "- gone: true", "+ new: [3]"]


def test_replaced_block_of_unequal_size_pairs_similar_elements():
    c = make_cex([{"xs": ["r0 in-flight (pid 0, epoch 0, seq 0)", "r1 in-flight (pid 0)"]},
                  {"xs": ["r0 acked (pid 0, epoch 0, seq 0)"]}],
                 ["Initial state", "Step"])
    lines = rows(blocks(show(c, width=120))["Step 1"])["xs"]
    assert lines == ["~ r0 in-flight (pid 0, epoch 0, seq 0) -> r0 acked (pid 0, epoch 0, seq 0)",
                     "- r1 in-flight (pid 0)"]


def test_full_shows_every_field_each_step_with_whole_lists():
    b = blocks(show(story(), full=True))
    for body in b.values():
        assert set(rows(body)) == {"client[0].batches", "network.requests", "leader.log", "n"}
    step2 = rows(b["Step 2"])
    whole = " ".join(line.strip() for line in step2["client[0].batches"])
    assert whole.startswith('["r0 in-flight (pid 0, epoch 0, seq 0)", '
                            '"r1 queued (pid -1, epoch -1, seq -1)"]')
    assert whole.endswith("+ r1 queued (pid -1, epoch -1, seq -1)")  # then what changed
    # unchanged lists are printed whole too
    assert step2["network.requests"] == ['["Produce(client0/r0, pid 0, epoch 0, seq 0)"]']
    assert rows(b["Step 3"])["n"] == ["0 -> 1"]


def test_actor_filter():
    b = blocks(show(cex(), actor="client[1]"))
    assert "client[1].epoch" in b["Step 0"] and "client[0]" not in b["Step 0"]
    assert "broker" not in b["Step 0"]
    assert "(no change to client[1]*)" in b["Step 1"]
    assert rows(b["Step 3"]) == {"client[1].epoch": ["0 -> 5"]}


def test_unknown_actor_lists_actors():
    with pytest.raises(ViewError) as err:
        show(cex(), actor="leader")
    assert str(err.value) == ("no field starts with 'leader'; "
                              "actors in this trace: client[0], client[1], broker")


def test_long_list_field_fits_80_columns_and_wraps_under_its_element():
    long = [f"Produce(client0/r{i}, pid 0, epoch 0, seq {i}, conn 0, leader epoch 0, "
            f"partition topic-0)" for i in range(30)]
    c = make_cex([{"network.requests": long[:20], "client[0].epoch_bump_required": False},
                  {"network.requests": long[:5] + long[6:25],
                   "client[0].epoch_bump_required": True}],
                 ["Initial state", "Drain(client=0)"])
    text = show(c, width=80)
    assert all(len(line) <= 80 for line in text.splitlines())
    lines = rows(blocks(text)["Step 1"])["network.requests"]
    starts = [line for line in lines if not line.startswith(" ")]
    assert starts == ["- " + long[5][:len(starts[0]) - 2]] + [
        "+ " + long[i][:len(starts[j + 1]) - 2] for j, i in enumerate(range(20, 25))]
    # every element is there whole once the wrapped lines are joined; no list brackets
    joined = " ".join(line.strip() for line in lines)
    for i in [5, *range(20, 25)]:
        assert long[i] in joined
    assert "[" not in joined
    # continuation lines hang under the element text, past the "+ " / "- " marker
    assert all(line.startswith("  ") and not line.startswith("   ")
               for line in lines if line.startswith(" "))
    # the whole list at step 0 wraps within the width too, at 80 and narrower
    for width in (80, 60, 40):
        assert all(len(line) <= width for line in show(c, width=width).splitlines())
        assert all(len(line) <= width for line in show(c, width=width, full=True).splitlines())


def test_colour_only_on_a_terminal_and_same_text():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    render(story(), make_console(out, width=80))
    coloured = out.getvalue()
    assert ANSI.search(coloured)  # a terminal gets highlighting ...
    piped = show(story())
    assert not ANSI.search(piped)  # ... a pipe does not
    assert ANSI_CODE.sub("", coloured) == piped  # and the words are the same


def test_show_command_on_json_and_itf(tmp_path, capsys, monkeypatch):
    from eoscheck.checker.cli import main

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    json_path, itf_path = write_counterexample(story(), tmp_path)
    assert main(["show", str(json_path)]) == 0
    from_json = capsys.readouterr().out
    assert main(["show", str(itf_path)]) == 0
    from_itf = capsys.readouterr().out
    assert not ANSI.search(from_json)
    assert rows(blocks(from_json)["Step 2"]) == {
        "client[0].batches": ["+ r1 queued (pid -1, epoch -1, seq -1)"]}
    assert blocks(from_json) == blocks(from_itf)
    assert main(["show", str(json_path), "--actor", "nobody"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no field starts with 'nobody'" in err
