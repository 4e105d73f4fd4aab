"""GameLog: a bot's stderr in one game, line by line with its ply, head and tail kept."""

from __future__ import annotations

from arena.players.gamelog import LOG_HEAD, LOG_LINE, LOG_TAIL, GameLog


def test_lines_keep_the_ply_they_came_in_and_split_chunks_are_joined():
    log = GameLog()
    log.feed(b"start\nthinking ab")
    log.ply = 3
    log.feed(b"out 3\r\nplayed 3\n")
    log.ply = 5
    log.note("arena: ignored an answer")
    log.feed(b"no end")
    log.finish()
    assert log.rows() == [(0, 0, "start"), (1, 3, "thinking about 3"), (2, 3, "played 3"),
                          (3, 5, "arena: ignored an answer"), (4, 5, "no end")]
    assert (log.lines, log.dropped_lines, log.dropped_bytes) == (5, 0, 0)


def test_a_megabyte_keeps_the_first_64_kb_and_the_last_16_kb_and_counts_the_rest():
    log = GameLog()
    line = b"x" * 99 + b"\n"
    for ply in range(10_000):  # 1,000,000 bytes, 100 a line
        log.ply = ply
        log.feed(line)
    rows = log.rows()
    kept = sum(len(text) + 1 for _, _, text in rows)
    assert log.bytes == 1_000_000 and log.lines == 10_000
    assert kept + log.dropped_bytes == 1_000_000
    assert len(rows) + log.dropped_lines == 10_000
    head = [r for r in rows if r[0] < 1000]
    assert len(head) == LOG_HEAD // 100 and sum(len(t) + 1 for *_, t in head) <= LOG_HEAD
    tail = rows[len(head):]
    assert len(tail) == LOG_TAIL // 100 and tail[-1] == (9_999, 9_999, "x" * 99)
    # Line numbers count the dropped lines: the gap shows where they were.
    assert tail[0][0] - head[-1][0] - 1 == log.dropped_lines == 10_000 - len(rows)


def test_output_without_line_ends_is_bounded_too():
    log = GameLog()
    log.feed(b"y" * (LOG_LINE * 100 + 10))
    log.finish()
    assert log.bytes == LOG_LINE * 100 + 10
    assert log.head_bytes <= LOG_HEAD and log.tail_bytes <= LOG_TAIL
    assert log.head_bytes + log.tail_bytes + log.dropped_bytes == log.bytes
