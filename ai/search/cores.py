"""The cores and the memory this process may use: a search's threads (``mcts:threads=N``, ``blokus bot --threads N``)
default to its cores; a team's player's memory limit (``ai.players.team_process``) follows from its memory.
Light (no numba): the bot says its threads before its engine loads.

Cores: the CPU affinity (``taskset``, ``docker --cpuset-cpus``), and the CPU quota of this process's cgroup
(``docker --cpus 1``, ``systemd-run -p CPUQuota=100%``: cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us`` /
``cpu.cfs_period_us``, anywhere up its cgroup's tree), rounded down, at least one. Memory: the machine's
(``MemTotal``) and the cgroup's limit (v2 ``memory.max``, v1 ``memory.limit_in_bytes``). The readers take the
root of the file system they read (``root``), so tests give them a folder of their own.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

MAX_THREADS = 64  # a search's threads at most (a tree each)
ROOT = Path("/")
READ_LIMIT = 1 << 16  # bytes read of one /proc or /sys file (bounded: a mount table of a busy machine fits)
CPU_COUNT = "CPU count"  # where a core count came from
AFFINITY = "CPU affinity"
QUOTA = "cgroup CPU quota"
MACHINE = "machine"  # where a memory size came from
CGROUP = "cgroup limit"


@dataclass(frozen=True)
class Cores:
    """The cores this process may use (``count``) and what set them (``source``: AFFINITY, QUOTA, CPU_COUNT)."""

    count: int
    source: str
    affinity: int  # the cores of the affinity (or the CPU count)
    quota: float | None = None  # the CPUs of the cgroup's quota, None without one

    def describe(self) -> str:
        """``1 core by the cgroup CPU quota of 1 CPU, 16 in the affinity``, ``2 cores by the CPU affinity``."""
        plural = "s" if self.count > 1 else ""
        if self.source == QUOTA:
            return f"{self.count} core{plural} by the {QUOTA} of {self.quota:g} CPU, {self.affinity} in the affinity"
        quota = f" (a {QUOTA} of {self.quota:g} CPUs)" if self.quota is not None else ""
        return f"{self.count} core{plural} by the {self.source}{quota}"


@dataclass(frozen=True)
class Memory:
    """The memory this process may use (``bytes``), what set it (``source``: MACHINE, CGROUP), the machine's."""

    bytes: int
    source: str
    machine: int

    @property
    def mib(self) -> int:
        return self.bytes // 2**20

    def describe(self) -> str:
        """``1.5 GiB, the machine's``, ``1.0 GiB by the cgroup limit (the machine has 23.5 GiB)``."""
        if self.source == CGROUP:
            return f"{_gib(self.bytes)} by the {CGROUP} (the machine has {_gib(self.machine)})"
        return f"{_gib(self.bytes)}, the {MACHINE}'s"


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size // 2**20} MiB"


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(READ_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None


def _affinity() -> tuple[int, str]:
    try:
        return max(1, len(os.sched_getaffinity(0))), AFFINITY
    except AttributeError:  # no affinity on this system (macOS, Windows)
        return max(1, os.cpu_count() or 1), CPU_COUNT


def _unescape(field: str) -> str:
    """A path of ``/proc/self/mountinfo`` (spaces and the like are written as ``\\040``)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def cgroup_folders(root: Path, controller: str) -> list[tuple[int, Path]]:
    """The folders of this process's cgroups that may hold a limit of ``controller`` (``cpu``, ``memory``):
    (version, folder) for its cgroup v2 and its v1 cgroup of that controller, each with its ancestors up to
    the mount point of the hierarchy (a limit up the tree applies too). Read from ``root``'s
    ``/proc/self/cgroup`` and ``/proc/self/mountinfo``; none where they are missing (no Linux)."""
    paths: dict[int, str] = {}
    for line in (_read(root / "proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, controllers, path = parts
        if hierarchy == "0" and controllers == "":
            paths.setdefault(2, path)
        elif controller in controllers.split(","):
            paths.setdefault(1, path)
    found: list[tuple[int, Path]] = []
    for line in (_read(root / "proc/self/mountinfo") or "").splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or len(tail) < 3:
            continue
        kind = 2 if tail[0] == "cgroup2" else 1 if tail[0] == "cgroup" else 0
        if kind == 0 or kind not in paths or (kind == 1 and controller not in tail[2].split(",")):
            continue
        mount_root, point, path = _unescape(fields[3]), _unescape(fields[4]), paths.pop(kind)
        # the path below the mount's root (in a cgroup namespace both are "/"); else the mount point itself
        inside = path == mount_root or path.startswith(mount_root.rstrip("/") + "/")
        below = path[len(mount_root) :] if inside else ""
        parts = [part for part in below.split("/") if part and part not in (".", "..")]
        base = root / point.lstrip("/")
        found += [(kind, base.joinpath(*parts[:depth])) for depth in range(len(parts), -1, -1)]
    return found


def cpu_quota(root: Path = ROOT) -> float | None:
    """The CPUs this process's cgroup quota allows (the smallest up its tree), None without a quota."""
    quotas = []
    for version, folder in cgroup_folders(root, "cpu"):
        if version == 2:
            fields = (_read(folder / "cpu.max") or "").split()
            quota, period = (fields + ["", ""])[:2] if fields else ("max", "")
        else:
            quota, period = ((_read(folder / name) or "").strip() for name in ("cpu.cfs_quota_us", "cpu.cfs_period_us"))
        if quota.isdigit() and period.isdigit() and int(period) > 0 and int(quota) > 0:
            quotas.append(int(quota) / int(period))
    return min(quotas, default=None)


def core_budget(root: Path | None = None, affinity: tuple[int, str] | None = None) -> Cores:
    """The cores this process may use and where the number came from (``root``: default ``ROOT``; ``affinity``:
    the count and its source, read from this process when not given)."""
    count, source = affinity if affinity is not None else _affinity()
    quota = cpu_quota(root or ROOT)
    if quota is not None and max(1, math.floor(quota)) < count:
        return Cores(max(1, math.floor(quota)), QUOTA, count, quota)
    return Cores(count, source, count, quota)


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity and its cgroup's CPU quota (``core_budget``)."""
    return core_budget().count


def memory_budget(root: Path | None = None) -> Memory | None:
    """The memory this process may use: the machine's (``MemTotal``), or its cgroup's limit where that is less
    (the smallest up its tree); None where the machine's is not known (no ``/proc/meminfo``)."""
    root = root or ROOT
    machine = None
    for line in (_read(root / "proc/meminfo") or "").splitlines():
        name, _, value = line.partition(":")
        if name == "MemTotal" and value.split()[:1] and value.split()[0].isdigit():
            machine = int(value.split()[0]) * 1024  # in kB
    if machine is None:
        return None
    limits = []
    for version, folder in cgroup_folders(root, "memory"):
        text = (_read(folder / ("memory.max" if version == 2 else "memory.limit_in_bytes")) or "").strip()
        if text.isdigit():
            limits.append(int(text))  # v1's "no limit" is a huge number: more than the machine has
    limit = min(limits, default=machine)
    return Memory(limit, CGROUP, machine) if limit < machine else Memory(machine, MACHINE, machine)


def search_threads(threads: int) -> int:
    """The threads a search set to ``threads`` runs: that many, or all available cores for 0."""
    return min(MAX_THREADS, threads if threads > 0 else available_cores())
