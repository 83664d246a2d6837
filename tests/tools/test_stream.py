"""Parsing the guest result stream."""
import json

import pytest

from ondol import OndolError
from ondol.stream import StreamParser, parse_file

HELLO = {"type": "hello", "kernel": "ondol", "options": {"hz": "100"}}
RESULT = {"type": "result", "bench": "null", "test": "syscall", "unit": "tsc",
          "median": 120, "min": 110, "max": 400, "n": 1000}
END = {"type": "end", "bench": "null", "status": 0}


def feed_all(lines, on_progress=None):
    parser = StreamParser("test.jsonl", on_progress)
    for line in lines:
        parser.feed(line if isinstance(line, str) else json.dumps(line))
    return parser.finish()


def test_good_stream_collects_hello_results_and_end():
    seen = []
    stream = feed_all([HELLO, {"type": "progress", "bench": "null", "done": 1, "total": 2},
                       RESULT, END], seen.append)
    assert stream.hello["options"] == {"hz": "100"}
    assert stream.results == [{k: v for k, v in RESULT.items() if k != "type"}]
    assert [p["done"] for p in seen] == [1]
    assert stream.ends == [END]


def test_blank_lines_carriage_returns_and_unknown_types_are_accepted():
    stream = feed_all(["", json.dumps(RESULT) + "\r", '{"type":"trace","x":1}',
                       json.dumps(END)])
    assert len(stream.results) == 1


@pytest.mark.parametrize("bad, why", [
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"bench": "null"}', 'no "type"'),
    ('{"type": "progress", "done": "1", "total": 2}', '"done" is not an integer'),
    ('{"type": "result", "test": "x"}', 'no "bench"'),
    ('{"type": "end"}', '"status" is not an integer'),
    ('{"type": "hello", "options": [1]}', '"options" is not an object'),
])
def test_malformed_line_reports_its_number(bad, why):
    parser = StreamParser("stream.jsonl")
    parser.feed(json.dumps(HELLO))
    parser.feed("")
    with pytest.raises(OndolError) as err:
        parser.feed(bad)
    assert "malformed guest line 3 in stream.jsonl" in str(err.value)
    assert why in str(err.value)


def test_missing_end_is_an_error():
    with pytest.raises(OndolError, match='no "end" line after 2 lines'):
        feed_all([HELLO, RESULT])


def test_failed_end_status_is_an_error():
    with pytest.raises(OndolError, match="null ended with status 3"):
        feed_all([RESULT, {**END, "status": 3}])


def test_parse_file_reads_a_recorded_stream(tmp_path):
    path = tmp_path / "rec.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (HELLO, RESULT, RESULT, END)) + "\n")
    assert len(parse_file(path).results) == 2
    path.write_text(json.dumps(HELLO) + "\n" + json.dumps(RESULT)[:-3] + "\n")
    with pytest.raises(OndolError, match="line 2"):
        parse_file(path)


def test_panic_record_stops_at_once():
    parser = StreamParser("s.jsonl")
    with pytest.raises(OndolError, match=r"guest kernel panic: no boot archive \(line 1 "):
        parser.feed('{"type": "panic", "message": "no boot archive"}')
