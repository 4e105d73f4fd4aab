"""The JSONL results file: games out, and one-line errors naming the line."""

from __future__ import annotations

import pytest

from arena.errors import ConfigError
from arena.ratings.results_file import parse_results, read_results


def test_parses_players_ranks_ties_teams_and_groups(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"players": ["A", "B", "C"], "ranks": [1, 2, 2]}\n'
                    "\n"
                    '{"players": ["A", "B", "C", "D"], "teams": [["A", "C"], ["B", "D"]],'
                    ' "ranks": [2, 1], "group": "deal7", "id": "t2"}\n')
    first, second = read_results(path)
    assert first == {"id": "line1", "ordinal": 1, "seats": [
        {"bot": "A", "team": 0, "rank": 1}, {"bot": "B", "team": 1, "rank": 2},
        {"bot": "C", "team": 2, "rank": 2}]}
    assert second == {"id": "t2", "ordinal": 3, "group": "deal7", "seats": [
        {"bot": "A", "team": 0, "rank": 2}, {"bot": "B", "team": 1, "rank": 1},
        {"bot": "C", "team": 0, "rank": 2}, {"bot": "D", "team": 1, "rank": 1}]}


@pytest.mark.parametrize("line,problem", [
    ('{"players": ["A", "B", "C", "D"], "ranks": [1, 2, 3]}',
     '"ranks" has 3 entries for 4 players'),
    ('{"players": ["A", "B"], "ranks": [1, 2]', "not valid JSON"),
    ('["A", "B"]', "expected a JSON object"),
    ('{"ranks": [1, 2]}', 'missing "players"'),
    ('{"players": ["A", "B"]}', 'missing "ranks"'),
    ('{"players": ["A", 3], "ranks": [1, 2]}', '"players" must be a list'),
    ('{"players": ["A", "A"], "ranks": [1, 2]}', "twice"),
    ('{"players": ["A", "B"], "ranks": [1, 0]}', '"ranks" must be a list of whole numbers'),
    ('{"players": ["A", "B"], "ranks": [1, 1.5]}', '"ranks" must be a list of whole numbers'),
    ('{"players": ["A"], "ranks": [1]}', "at least 2 players"),
    ('{"players": ["A", "B"], "ranks": [1, 2], "rank": 1}', "unknown key 'rank'"),
    ('{"players": ["A", "B", "C"], "teams": [["A", "B"], ["C"]], "ranks": [1, 2, 3]}',
     '"ranks" has 3 entries for 2 teams'),
    ('{"players": ["A", "B"], "teams": [["A", "X"], ["B"]], "ranks": [1, 2]}', "'X' is not in"),
    ('{"players": ["A", "B"], "teams": [["A", "B"], ["B"]], "ranks": [1, 2]}', "more than one"),
    ('{"players": ["A", "B", "C"], "teams": [["A"], ["B"]], "ranks": [1, 2]}', "'C' is in no team"),
    ('{"players": ["A", "B"], "teams": "AB", "ranks": [1, 2]}', '"teams" must be a list'),
    ('{"players": ["A", "B"], "ranks": [1, 2], "group": [1]}', '"group" must be'),
])
def test_each_bad_line_names_its_line_and_problem(line, problem):
    good = '{"players": ["A", "B"], "ranks": [1, 2]}'
    lines = [good, "", "   ", good, good, good, line]
    with pytest.raises(ConfigError) as e:
        parse_results(lines, name="results.jsonl")
    message = str(e.value)
    assert message.startswith("results.jsonl line 7: ")
    assert problem in message
    assert "\n" not in message


def test_unreadable_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        read_results(tmp_path / "missing.jsonl")
