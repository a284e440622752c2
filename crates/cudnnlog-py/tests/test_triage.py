"""cudnnlog.triage and cudnnlog.summarize over a fleet of job logs."""

import pytest

import cudnnlog


def by_path(verdicts):
    out = {}
    for v in verdicts:
        assert v["path"] not in out, "one verdict per job"
        out[v["path"]] = v
    return out


def test_one_verdict_per_job(fleet, tmp_path):
    missing = tmp_path / "lost.log"
    it = cudnnlog.triage([fleet, missing])
    assert isinstance(it, cudnnlog.Triage)
    assert it.jobs == 6
    got = by_path(it)
    assert set(got) == {
        str(fleet / "assert.log"),
        str(fleet / "clean.log"),
        str(fleet / "job-1.log"),
        str(fleet / "job-2.log"),
        str(fleet / "run-7" / "rank*.log"),
        str(missing),
    }
    oom1, oom2 = got[str(fleet / "job-1.log")], got[str(fleet / "job-2.log")]
    assert oom1["primary"] == oom2["primary"] == "cuda.oom"
    assert oom1["fingerprint"] == oom2["fingerprint"]
    assert got[str(fleet / "assert.log")]["primary"] == "cuda.device_assert"
    assert got[str(fleet / "assert.log")]["fingerprint"] != oom1["fingerprint"]
    assert got[str(fleet / "clean.log")]["outcome"] == "clean"
    lost = got[str(missing)]
    assert "outcome" not in lost and str(missing) in lost["error"]


def test_rank_files_are_one_job(fleet):
    run = fleet / "run-7"
    [job] = list(cudnnlog.triage(run))
    assert job["path"] == str(run / "rank*.log")
    assert job["sources"] == [str(run / "rank0.log"), str(run / "rank1.log")]
    assert job["primary"] == "nccl.timeout"
    # Without grouping, each file is a job.
    alone = by_path(cudnnlog.triage(run, group=False))
    assert set(alone) == {str(run / "rank0.log"), str(run / "rank1.log")}
    assert alone[str(run / "rank1.log")]["outcome"] == "clean"


def test_verdicts_match_verdict(fleet):
    for v in cudnnlog.triage(fleet, group=False):
        assert v == cudnnlog.verdict(v["path"])


def test_a_single_path_and_hidden_files(fleet):
    [v] = list(cudnnlog.triage(str(fleet / ".hidden.log")))
    assert v["primary"] == "cuda.oom", "a file named directly is read, hidden or not"
    walked = {v["path"] for v in cudnnlog.triage(fleet, group=False)}
    assert not any(".hidden" in p for p in walked)


def test_directories_are_walked_like_the_cli_walks_them(fleet):
    # Files that are not logs, though they hold failure text.
    oom = (fleet / "job-1.log").read_bytes()
    for name in ["README.md", "config.json", "train.py", "model.pt", "events.out.tfevents.1.host"]:
        (fleet / name).write_bytes(oom)
    (fleet / "core").write_bytes(b"\x7fELF\x02\x01\x01\x00" + oom)  # a core dump
    # A log a crash left NUL blocks in is still a log.
    (fleet / "crashed.log").write_bytes(oom + b"\x00" * 4096)
    (fleet / "ignored").mkdir()
    (fleet / "ignored" / "job-9.log").write_bytes(oom)
    (fleet / ".gitignore").write_text("ignored/\n")
    walked = {v["path"].rsplit("/", 1)[-1] for v in cudnnlog.triage(fleet)}
    assert walked == {"assert.log", "clean.log", "crashed.log", "job-1.log", "job-2.log", "rank*.log"}


def test_empty_and_bad_arguments(tmp_path):
    assert list(cudnnlog.triage([])) == []
    assert list(cudnnlog.triage(tmp_path)) == []
    with pytest.raises(TypeError):
        cudnnlog.triage(42)
    with pytest.raises(TypeError):
        cudnnlog.triage([b"a.log"])
    with pytest.raises(cudnnlog.CudnnlogError):
        cudnnlog.triage(tmp_path, patterns=tmp_path / "none")


def test_close_stops_the_iterator(fleet):
    with cudnnlog.triage(fleet) as it:
        first = next(it)
        assert "path" in first
    assert list(it) == []


def test_summarize_groups_by_fingerprint(fleet, tmp_path):
    missing = tmp_path / "lost.log"
    verdicts = list(cudnnlog.triage([fleet, missing]))
    s = cudnnlog.summarize(verdicts)
    assert (s["jobs"], s["failed"], s["degraded"], s["clean"], s["unreadable"]) == (6, 4, 0, 1, 1)
    assert s["by_primary"] == {"cuda.oom": 2, "cuda.device_assert": 1, "nccl.timeout": 1}
    assert sorted(s["by_fingerprint"].values()) == [1, 1, 2]
    top = s["groups"][0]
    assert (top["class"], top["count"], top["title"]) == ("cuda.oom", 2, "GPU out of memory")
    assert top["examples"] == [str(fleet / "job-1.log"), str(fleet / "job-2.log")]
    assert s["by_fingerprint"][top["fingerprint"]] == 2
    assert [g["count"] for g in s["groups"]] == [2, 1, 1]
    # Any order of the same verdicts, and the iterator itself, give the same summary.
    assert cudnnlog.summarize(reversed(verdicts)) == s
    assert cudnnlog.summarize(cudnnlog.triage([fleet, missing])) == s
    assert cudnnlog.summarize([]) == {
        "jobs": 0, "failed": 0, "degraded": 0, "clean": 0, "unreadable": 0,
        "by_primary": {}, "by_action": {}, "by_fingerprint": {}, "groups": [],
    }


def test_summarize_rejects_what_is_not_a_verdict():
    with pytest.raises(TypeError):
        cudnnlog.summarize({"path": "a"})
    with pytest.raises(TypeError, match="verdict 0"):
        cudnnlog.summarize(["a.log"])
    with pytest.raises(ValueError, match="verdict 1"):
        cudnnlog.summarize([cudnnlog.verdict(b""), {"path": "x"}])


def test_rank_files_tell_one_story(tmp_path):
    # Rank 2 runs out of memory at 09:01:10; the other ranks' watchdogs fire
    # ten minutes later. The job's verdict is rank 2's OOM, not a timeout.
    job = tmp_path / "job"
    job.mkdir()
    for r in (0, 1, 3):
        (job / f"rank{r}.log").write_text(
            f"2024-06-10 09:01:10,00{r} INFO step 100 loss 3.41\n"
            f"[E0610 09:11:12.60000{r} 1403 ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=412, OpType=ALLREDUCE, NumelIn=25557032, "
            "NumelOut=25557032, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.\n"
        )
    (job / "rank2.log").write_text(
        "2024-06-10 09:01:10,002 INFO step 100 loss 3.42\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. GPU 2 has a total "
        "capacity of 79.15 GiB of which 3.21 GiB is free.\n"
    )
    [v] = list(cudnnlog.triage(job))
    assert v["primary"] == "cuda.oom"
    assert v["culprit"]["ranks"] == [2]
    assert v["culprit"]["basis"] == "first_failure"
    assert "ranks 0, 1, 3" in v["culprit"]["reason"]
