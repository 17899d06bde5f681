"""Randomized multi-client stress test of the shared-object system against a
real sos-server (issue 3): several sos-stress processes, several threads
each, random load / lock+increment / release over a small set of chunks that
hold counters. Each process checks as it goes (every word of a chunk equal:
no torn or half-installed copy; every read at least what its thread saw and
what its process wrote; the bytes never change during an access) and reports
its increments; at the end a fresh reader must find each chunk's counter
equal to its start value plus the sum of everybody's increments, exactly.

Seeds: random per run, printed in every assertion message; set
SOS_STRESS_SEED=<n> to replay a run."""

import json
import os
import random
import re
import signal
import subprocess
import time

import pytest

PROCESSES = 4
THREADS = 3
OPS = 6000          # per thread, at most
WORK_SECONDS = 12   # each thread stops after OPS or this long: a loaded machine does less
DEADLINE = 30.0     # seconds for the whole test, closing included


def base_seed():
    s = os.environ.get("SOS_STRESS_SEED")
    return int(s) if s else random.randrange(1, 1 << 31)


def run_stress(binary, procs, server, secret_file, ids, seed, processes=PROCESSES, threads=THREADS,
               ops=OPS, deadline=None, extra=(), during=None):
    """Runs the stress processes concurrently; returns their JSON reports.
    Fails (naming the seeds, with every process's report) on any violation,
    error or timeout."""
    id_list = ",".join(f"{i:#x}" for i in ids)
    started = []
    for n in range(processes):
        s = seed + n
        p = procs.start([binary, "--server", server.address, "--secret-file", secret_file,
                         "--ids", id_list, "--threads", str(threads), "--ops", str(ops),
                         "--seed", str(s), "--seconds", str(WORK_SECONDS),
                         "--node-name", f"stress{n}-seed{s}"] + list(extra))
        started.append((s, p))
    deadline = deadline or time.monotonic() + DEADLINE - 5
    if during is not None:
        during()
    replay = f"SOS_STRESS_SEED={seed}"
    results, problems = [], []
    for s, p in started:
        try:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            problems.append(f"seed {s} did not finish in time")
        lines = [l for l in out.splitlines() if l.startswith("{")]
        report = json.loads(lines[-1]) if lines else None
        results.append((s, p, report))
        if report is None:
            problems.append(f"seed {s} printed no report (exit {p.returncode})")
        elif p.returncode != 0 or report.get("violations") or report.get("errors"):
            problems.append(f"seed {s} exit {p.returncode}: violations {report.get('violations')} "
                            f"errors {report.get('errors')}")
        elif report["ops"] < threads:
            problems.append(f"seed {s} made no progress: {report['ops']} operations in "
                            f"{WORK_SECONDS} s")
    if problems or not server.alive():
        detail = "\n".join(f"--- seed {s} (exit {p.returncode}): report {r}\n"
                            f"stderr: {procs.stderr_of(p)[-1500:]}" for s, p, r in results)
        pytest.fail(f"sos-stress failed ({replay}; threads {threads}, ops {ops}): "
                    + "; ".join(problems)
                    + ("" if server.alive() else "; sos-server died")
                    + f"\n{detail}\n--- server log:\n{server.log()[-6000:]}")
    for s, _, r in results:
        assert r["seed"] == s
    return [r for _, _, r in results]


def totals(reports, ids):
    out = {i: 0 for i in ids}
    for r in reports:
        for k, v in r["increments"].items():
            out[int(k, 0)] += v
    return out


def check_final(reader, ids, sizes, start, reports, seed):
    incs = totals(reports, ids)
    assert sum(incs.values()) > 0, f"no increments at all (seed {seed})"
    for cid, size in zip(ids, sizes):
        want = start + incs[cid]
        words = [reader.read(cid, off) for off in range(0, size, 8)]
        assert words == [want] * len(words), (
            f"chunk {cid:#x}: final words {words}, expected {want} = {start} + the "
            f"{incs[cid]} increments the stress processes report (SOS_STRESS_SEED={seed})")


SIZES = [16, 16, 24, 64, 4096]


def set_every_word(node, ids, sizes, value):
    for cid, size in zip(ids, sizes):
        node.ok(f"lock {cid:#x}")
        for off in range(0, size, 8):
            node.ok(f"set {cid:#x} {off} {value}")
        node.ok(f"release {cid:#x}")


# Where the cached bytes live: in the client (djava_sos_data), or in the
# program's own buffers through install/produce callbacks, as in the JVM.
BYTES = {"client-bytes": [], "callbacks": ["--callbacks"]}


@pytest.mark.parametrize("where", BYTES)
def test_stress_chunks_written_home_by_a_leaving_creator(sos_server, probe, procs, secret_file,
                                                          stress_binary, where):
    seed = base_seed()
    creator = probe(sos_server, "creator")
    ids = [creator.alloc(size) for size in SIZES]
    assert creator.ok("close") == ""
    assert creator.wait_exit() == 0

    reports = run_stress(stress_binary, procs, sos_server, secret_file, ids, seed, extra=BYTES[where])
    assert all(r["stats"]["misses"] > 0 for r in reports)
    if where == "callbacks":
        assert all(r["callbacks"]["installs"] > 0 and r["callbacks"]["produces"] > 0
                   for r in reports), [r["callbacks"] for r in reports]
    reader = probe(sos_server, "final-reader")
    check_final(reader, ids, SIZES, 0, reports, seed)
    reader.ok("abandon")


@pytest.mark.parametrize("where", BYTES)
def test_stress_chunks_dirty_at_a_live_creator(sos_server, probe, procs, secret_file, stress_binary,
                                               where):
    """The chunks never left their creator: the stress processes' first
    accesses must flush them from it, and the creator, still alive, must
    find everybody's increments when it reads them back. The final reader
    learns the ids from this test, after every node that held them left:
    only a server that keeps chunks until their program ends serves them
    then (with collection they are freed: see the next test)."""
    seed = base_seed()
    creator = probe(sos_server, "creator")
    ids = [creator.alloc(size) for size in SIZES]
    start = 1000
    set_every_word(creator, ids, SIZES, start)

    reports = run_stress(stress_binary, procs, sos_server, secret_file, ids, seed, extra=BYTES[where])
    check_final(creator, ids, SIZES, start, reports, seed)
    # The creator now holds read copies; it rewrites one chunk (same value,
    # but dirty here again) and leaves cleanly: a later node finds the same
    # totals at home.
    creator.write(ids[0], 0, start + totals(reports, ids)[ids[0]])
    assert creator.ok("close") == ""
    reader = probe(sos_server, "final-reader")
    check_final(reader, ids, SIZES, start, reports, seed)


def test_chunks_every_holder_let_go_of_are_freed_and_said_so(sos_server_with, probe):
    """A node that leaves holds nothing: once its chunks are home and no
    node holds them, the collector frees them, and a node that asks for
    one by an id it learned elsewhere is told so, never given zeroes."""
    sos_server = sos_server_with()
    creator = probe(sos_server, "creator")
    ids = [creator.alloc(size) for size in SIZES]
    for cid in ids:
        creator.write(cid, 0, 42)
    other = probe(sos_server, "other")
    assert other.read(ids[0], 0) == 42  # home now, held by both
    assert creator.ok("close") == ""
    assert other.ok("close") == ""
    # Asked before the collector ran, the reader would hold the chunk itself.
    deadline = time.monotonic() + 10
    collected = 0
    while collected < len(ids) and time.monotonic() < deadline:
        sos_server.proc.send_signal(signal.SIGUSR1)
        time.sleep(0.2)
        counts = re.findall(r"collected (\d+), holds", sos_server.log())
        collected = int(counts[-1]) if counts else 0
    assert collected >= len(ids), sos_server.log()[-2000:]
    reader = probe(sos_server, "late-reader")
    answer = reader.cmd(f"read {ids[0]:#x} 0")
    assert answer.startswith("error FREED"), answer
    assert "distributed garbage collector" in answer, answer


def test_stress_one_hot_chunk_many_threads(sos_server, probe, procs, secret_file, stress_binary):
    """Everything on one chunk: every write conflicts with every other node."""
    seed = base_seed()
    creator = probe(sos_server, "creator")
    ids = [creator.alloc(48)]
    reports = run_stress(stress_binary, procs, sos_server, secret_file, ids, seed, processes=3, threads=4,
                         ops=4000)
    check_final(creator, ids, [48], 0, reports, seed)
    creator.ok("abandon")


@pytest.mark.parametrize("shards", [1, 2])
def test_stress_survives_a_node_killed_mid_run(sos_server, sos_shards, probe, procs, secret_file,
                                               stress_binary, shards):
    """A fifth node runs the same random workload and is killed (SIGKILL) in
    the middle, holding some chunks modified and others shared, with
    requests, invalidates and flushes in flight. The survivors must see no
    incoherence; a chunk may become LOST (then every node, later too, gets
    LOST naming the dead node), every other chunk stays usable and holds at
    least the survivors' increments; the server keeps serving. With the
    directory split, every shard does so for its own chunks."""
    if shards > 1:
        sos_server = sos_shards(shards)
    seed = base_seed()
    creator = probe(sos_server, "creator")
    ids = [creator.alloc(size) for size in SIZES]
    assert creator.ok("close") == ""
    victim_name = f"victim-seed{seed + 100}"
    victim = procs.start([stress_binary, "--server", sos_server.address, "--secret-file", secret_file,
                          "--ids", ",".join(f"{i:#x}" for i in ids), "--threads", "3",
                          "--ops", "1000000000", "--seed", str(seed + 100),
                          "--node-name", victim_name])

    def kill_victim():
        time.sleep(1.0)
        if victim.poll() is not None:
            raise AssertionError(f"the victim ended early ({victim.returncode}): "
                                 f"{procs.stderr_of(victim)} {victim.stdout.read()}")
        victim.kill()
        victim.wait(timeout=10)

    reports = run_stress(stress_binary, procs, sos_server, secret_file, ids, seed,
                         processes=3, threads=3, ops=8000, extra=["--tolerate-lost"],
                         during=kill_victim)
    incs = totals(reports, ids)
    print("lost:", [r["lost"] for r in reports], "ops:", [r["ops"] for r in reports])
    lost_somewhere = {int(k, 0) for r in reports for k in r["lost"]}
    for r in reports:
        for k, msg in r["lost"].items():
            assert victim_name in msg, f"LOST of {k} does not name the dead node: {msg} (seed {seed})"
    reader = probe(sos_server, "final-reader")
    for cid, size in zip(ids, SIZES):
        answer = reader.cmd(f"read {cid:#x} 0")
        if answer.startswith("error LOST"):
            assert victim_name in answer, answer
            continue
        assert cid not in lost_somewhere, (
            f"chunk {cid:#x} was LOST for a survivor but reads {answer} now (seed {seed})")
        words = [reader.read(cid, off) for off in range(0, size, 8)]
        assert len(set(words)) == 1, f"chunk {cid:#x} torn: {words} (seed {seed})"
        assert words[0] >= incs[cid], (
            f"chunk {cid:#x} holds {words[0]}, below the survivors' {incs[cid]} increments "
            f"(SOS_STRESS_SEED={seed})")
    # The server still serves: a fresh chunk moves between two fresh nodes.
    x = probe(sos_server, "after-x")
    y = probe(sos_server, "after-y")
    cid = x.alloc(16)
    x.write(cid, 0, 5)
    assert y.read(cid, 0) == 5
    assert "died 1" in sos_server.log() or victim_name in sos_server.log()


@pytest.mark.parametrize("shards", [2, 4])
def test_stress_on_a_directory_split_over_shards(sos_shards, probe, procs, secret_file,
                                                 stress_binary, shards):
    """The same workload with the directory split over several sos-servers:
    every node talks to the chunks' homes on their own shards, a chunk's
    coherence is its home's, and the totals come out exact on every shard."""
    seed = base_seed()
    server = sos_shards(shards)
    creator = probe(server, "creator")
    sizes = SIZES * 3
    ids = [creator.alloc(size) for size in sizes]
    homes = {shard_of(cid, shards) for cid in ids}
    assert homes == set(range(shards)), f"ids {ids} leave a shard without chunks"
    start = 500
    set_every_word(creator, ids, sizes, start)
    reports = run_stress(stress_binary, procs, server, secret_file, ids, seed,
                         extra=BYTES["callbacks"])
    check_final(creator, ids, sizes, start, reports, seed)
    assert creator.ok("close") == ""
    reader = probe(server, "final-reader")
    check_final(reader, ids, sizes, start, reports, seed)


def shard_of(cid, shards):
    """sos/ids.h's HomeShard."""
    return ((cid * 0x9E3779B97F4A7C15) % (1 << 64) >> 32) % shards
