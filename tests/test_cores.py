"""The cores and the memory this process may use (``ai.search.cores``), read from /proc and /sys files of a folder of
the test's own: the CPU affinity and the cgroup CPU quota (v2 ``cpu.max``, v1 ``cfs_quota_us``), the machine's memory
and the cgroup's limit, and what the bot says of them; a team's player's memory limit follows (``team_process``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from blokus.ai.players.registry import PlayerKind, PlayerSpec
from blokus.ai.players.team_process import BOT_MEMORY_MIB, MEMORY_FLOOR_MIB, MEMORY_LIMIT_MIB, default_memory_mib
from blokus.ai.search import cores
from blokus.ai.search.cores import AFFINITY, CGROUP, MACHINE, QUOTA, Memory, core_budget, cpu_quota, memory_budget
from blokus.cli.bot import resource_lines

V2_MOUNTS = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
V1_MOUNTS = (
    "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
)
GIB = 2**30


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def v2(root: Path, group: str, files: dict[str, str], meminfo_kb: int = 16 * 2**20) -> Path:
    """A machine with cgroup v2: this process in ``group``; ``files`` below /sys/fs/cgroup."""
    return write(
        root,
        {
            "proc/self/cgroup": f"0::{group}\n",
            "proc/self/mountinfo": V2_MOUNTS,
            "proc/meminfo": f"MemTotal:       {meminfo_kb} kB\nMemFree:  1000 kB\n",
            **{f"sys/fs/cgroup/{name}": text for name, text in files.items()},
        },
    )


def test_a_cgroup_v2_quota_of_one_cpu_on_a_16_core_machine_gives_one_core(tmp_path):
    root = v2(tmp_path, "/docker/abc", {"docker/abc/cpu.max": "100000 100000\n", "cpu.max": "max 100000\n"})
    assert cpu_quota(root) == 1.0
    budget = core_budget(root, affinity=(16, AFFINITY))
    assert (budget.count, budget.source) == (1, QUOTA)
    assert budget.describe() == "1 core by the cgroup CPU quota of 1 CPU, 16 in the affinity"


@pytest.mark.parametrize(
    ("quota", "affinity", "expected", "source"),
    [
        ("250000 100000", 16, 2, QUOTA),  # 2.5 CPUs: rounded down
        ("50000 100000", 16, 1, QUOTA),  # half a CPU: at least one core
        ("400000 100000", 2, 2, AFFINITY),  # the affinity is the smaller
        ("max 100000", 8, 8, AFFINITY),  # no quota
    ],
)
def test_the_cores_are_the_smaller_of_the_affinity_and_the_quota_rounded_down(
    tmp_path, quota, affinity, expected, source
):
    root = v2(tmp_path, "/job", {"job/cpu.max": quota})
    budget = core_budget(root, affinity=(affinity, AFFINITY))
    assert (budget.count, budget.source) == (expected, source)


def test_a_quota_up_the_tree_applies_and_the_smallest_counts(tmp_path):
    root = v2(
        tmp_path,
        "/system.slice/blokus.scope",
        {"system.slice/cpu.max": "200000 100000", "system.slice/blokus.scope/cpu.max": "max 100000"},
    )
    assert cpu_quota(root) == 2.0
    assert core_budget(root, affinity=(4, AFFINITY)).count == 2


def test_cgroup_v1_quota_and_memory_limit_are_the_fallback(tmp_path):
    root = write(
        tmp_path,
        {
            "proc/self/cgroup": "9:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n",
            "proc/self/mountinfo": V1_MOUNTS,  # no cgroup2 mounted; memory's mount root is the container's
            "proc/meminfo": f"MemTotal: {16 * 2**20} kB\n",
            "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "150000\n",
            "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
            "sys/fs/cgroup/memory/memory.limit_in_bytes": f"{1536 * 2**20}\n",
        },
    )
    assert cpu_quota(root) == 1.5
    assert core_budget(root, affinity=(16, AFFINITY)).count == 1
    memory = memory_budget(root)
    assert memory == Memory(1536 * 2**20, CGROUP, 16 * GIB)
    assert memory.describe() == "1.5 GiB by the cgroup limit (the machine has 16.0 GiB)"


def test_no_cgroup_files_no_quota_and_the_machines_memory(tmp_path):
    write(tmp_path, {"proc/meminfo": "MemTotal: 1572864 kB\n"})
    assert cpu_quota(tmp_path) is None
    assert core_budget(tmp_path, affinity=(2, AFFINITY)).describe() == "2 cores by the CPU affinity"
    memory = memory_budget(tmp_path)
    assert memory == Memory(1536 * 2**20, MACHINE, 1536 * 2**20) and memory.describe() == "1.5 GiB, the machine's"
    assert memory_budget(tmp_path / "nothing") is None


def test_v1s_no_limit_and_v2s_max_are_no_memory_limit(tmp_path):
    root = v2(tmp_path, "/a", {"a/memory.max": "max\n", "memory.max": "max\n"}, meminfo_kb=8 * 2**20)
    assert memory_budget(root) == Memory(8 * GIB, MACHINE, 8 * GIB)
    root = v2(tmp_path / "limited", "/a", {"a/memory.max": f"{GIB}\n"}, meminfo_kb=8 * 2**20)
    assert memory_budget(root) == Memory(GIB, CGROUP, 8 * GIB)


def test_bad_files_are_no_limit(tmp_path):
    root = v2(tmp_path, "/a", {"a/cpu.max": "lots of CPUs\n", "a/memory.max": "-5\n"})
    write(root, {"proc/self/mountinfo": "garbage\n" + V2_MOUNTS + "1 2 3\n"})
    assert cpu_quota(root) is None and memory_budget(root).source == MACHINE


def test_available_cores_reads_the_affinity_and_the_quota(monkeypatch, tmp_path):
    monkeypatch.setattr(cores.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(cores, "ROOT", v2(tmp_path, "/", {"cpu.max": "200000 100000"}))
    assert cores.available_cores() == 2 and cores.search_threads(0) == 2 and cores.search_threads(1) == 1


def test_the_team_processs_default_limit_is_what_is_left_after_the_bot():
    assert default_memory_mib(1536 * 2**20) == 1536 - BOT_MEMORY_MIB  # the contest's 1.5 GB
    assert default_memory_mib(64 * GIB) == MEMORY_LIMIT_MIB  # a big machine: at most the old default
    assert default_memory_mib(512 * 2**20) == MEMORY_FLOOR_MIB  # a small one: the floor
    assert default_memory_mib(None) == MEMORY_LIMIT_MIB


def test_the_bot_says_its_threads_cores_and_memory_and_a_team_players_limit():
    quota = "1 core by the cgroup CPU quota of 1 CPU, 16 in the affinity"
    contest = Memory(1536 * 2**20, MACHINE, 1536 * 2**20)
    assert resource_lines(
        PlayerSpec(PlayerKind.MCTS, "mcts:threads=1", settings=(("threads", 1),)), None, quota, contest
    ) == [f"mcts:threads=1 searches with 1 thread ({quota}; memory 1.5 GiB, the machine's; --threads N caps it)"]
    team = PlayerSpec(PlayerKind.PY, "py:p.py", path="p.py")
    assert resource_lines(team, None, quota, contest) == [
        f"your player's process may use {1536 - BOT_MEMORY_MIB} MiB (what is left of 1.5 GiB, the machine's, after "
        f"the bot's {BOT_MEMORY_MIB} MiB; --memory-limit MIB sets it); the bot: {quota}"
    ]
    small = resource_lines(team, None, quota, Memory(512 * 2**20, CGROUP, 16 * GIB))
    assert small[0].startswith(
        f"your player's process may use {MEMORY_FLOOR_MIB} MiB (the least by default; memory 512 MiB by"
    )
    assert small[1] == (
        f"note: only {512 - BOT_MEMORY_MIB} MiB are left for your player: it gets {MEMORY_FLOOR_MIB} MiB, and this "
        "machine may run out of memory"
    )
    assert resource_lines(team, 100, quota, contest) == []  # the team's own limit: nothing to say
    assert resource_lines(team, None, quota, Memory(64 * GIB, MACHINE, 64 * GIB)) == []  # the most: nothing either
    assert resource_lines(team, None, quota, None) == []
    assert resource_lines(PlayerSpec(PlayerKind.BUILTIN, "greedy"), None, quota, contest) == []
