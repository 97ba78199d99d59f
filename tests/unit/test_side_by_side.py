"""tools/side_by_side.py: `make test`'s two halves side by side, each with its own ports and folder."""

import pytest

from tools import side_by_side


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setattr(side_by_side, "RESULTS", tmp_path)
    return tmp_path


def test_each_command_gets_its_own_ports_and_folder_and_the_first_failure_is_the_exit(results, capsys):
    code = side_by_side.main(
        [
            "a=echo A $NEWBL_PORT_RANGE $TEST_RESULTS_DIR; exit 0",
            "b=echo B $NEWBL_PORT_RANGE $TEST_RESULTS_DIR; exit 5",
        ]
    )
    assert code == 5
    assert (results / "a" / "output.log").read_text() == f"A 20000-25999 {results / 'a'}\n"
    assert (results / "b" / "output.log").read_text() == f"B 26000-31999 {results / 'b'}\n"
    out = capsys.readouterr().out
    assert out.index(f"{'=' * 30} a: exit 0 {'=' * 30}\nA 20000-25999") < out.index(
        f"{'=' * 30} b: exit 5 {'=' * 30}\nB 26000-31999"
    )


def test_all_passing_is_0(results):
    assert side_by_side.main(["a=true", "b=true"]) == 0


@pytest.mark.parametrize("argv", [[], ["no-name"], ["a=true", "b=true", "c=true"]])
def test_a_bad_command_line_is_2(argv, results):
    assert side_by_side.main(argv) == 2


@pytest.mark.parametrize(
    ("log", "progress"),
    [("", "-"), ("....    [ 12%]\n..", "[ 12%]"), ("[  5%]\n...  [ 42%]\n", "[ 42%]"), (None, "-")],
)
def test_last_progress(tmp_path, log, progress):
    path = tmp_path / "output.log"
    if log is not None:
        path.write_text(log)
    assert side_by_side.last_progress(path) == progress
