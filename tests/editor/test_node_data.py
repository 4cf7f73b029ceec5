"""Per-node data files (editor.node_data): JSON and CSV forms, numbers and labels, errors."""

from __future__ import annotations

import pytest

from editor.errors import StudioError
from editor.node_data import load_node_data


def test_json_object_list_and_nodes_forms(tmp_path) -> None:
    a = tmp_path / "a.json"
    a.write_text('{"conv1": 0.5, "relu": "slow", "x": 3}')
    d = load_node_data(a)
    assert d.values == {"conv1": 0.5, "relu": "slow", "x": 3.0} and not d.numeric
    b = tmp_path / "b.json"
    b.write_text('{"nodes": [{"node": "conv1", "ms": 1.5}, {"node": "conv2", "ms": 2}]}')
    d = load_node_data(b)
    assert d.values == {"conv1": 1.5, "conv2": 2.0} and d.column == "ms" and d.numeric
    assert d.match({1: "conv1", 2: "other"}) == {1: 1.5} and d.unmatched == ["conv2"]


def test_csv_with_header_and_chosen_column(tmp_path) -> None:
    c = tmp_path / "p.csv"
    c.write_text("layer;accuracy;time\nconv1;0.91;3\nconv2;0.5;4\n")
    assert load_node_data(c).values == {"conv1": 0.91, "conv2": 0.5}
    assert load_node_data(c, "time").values == {"conv1": 3.0, "conv2": 4.0}


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"), ("[1, 2]", "not an object"), ("name\nconv1\n", "only one column"),
    ('{"a": {"b": 1}}', "names no node"), ("", "header row")])
def test_bad_files_are_one_line_errors(tmp_path, content, message) -> None:
    f = tmp_path / ("bad.json" if content.startswith(("{", "[")) else "bad.csv")
    f.write_text(content)
    with pytest.raises(StudioError, match=message):
        load_node_data(f)
    with pytest.raises(StudioError, match="no such file"):
        load_node_data(tmp_path / "missing.json")
