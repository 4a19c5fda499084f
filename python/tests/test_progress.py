"""The sweep progress bar: sizes learnt from tuna-bench's run.count, records counted as they
are appended, nothing on stderr when it is not a terminal."""
import io
import json

from tqdm import tqdm

from tuna_tools import progress


def test_sweep_counts_appended_records(tmp_path):
    path = tmp_path / "sweep.jsonl"
    path.write_text('{"old": 1}\n')  # an earlier run's line is not counted
    out = io.StringIO()
    sweep = progress.Sweep(3, tqdm(total=None, file=out, disable=False))
    sweep.start_run(str(path))
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"run": {"count": 4}}) + "\n" + json.dumps({"run": {"count": 4}}))
    sweep.poll()  # the second line is not complete yet
    assert sweep.bar.n == 1 and sweep.bar.total == 12  # 4 now, 4 for each run to come
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n")
    sweep.poll()
    assert sweep.bar.n == 2
    sweep.close()
    assert "2/12" in out.getvalue()


def test_no_bar_without_a_terminal(capsys):
    sweep = progress.sweep_bar(2, quiet=False, desc="test")  # pytest's stderr is no tty
    assert sweep.bar.disable
    sweep.close()
    assert capsys.readouterr().err == ""
