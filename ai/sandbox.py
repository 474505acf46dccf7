"""Walls around a team's program: the team's process of ``blokus bot --player`` (``ai.players.pyplayer``, walled
right before it imports the team's file) and every ``cmd:`` program (``net.external``, walled between fork
and exec). Built on the kernel's Landlock (Linux 5.13+, unprivileged; a few syscalls, no dependency):

* **files**: it reads the system's folders, Python and the installed packages, this project, its own folder
  (and, for a ``cmd:`` program, its working directory); it writes only in its **scratch folder** (its working
  directory for ``py:``, ``$TMPDIR`` for both; made per game, removed with it, bounded in total
  by :func:`scratch_used` checks of the caller plus ``RLIMIT_FSIZE`` per file) and ``/dev/null``;
* **network** (Landlock ABI 4+): no TCP connection and no TCP listening for ``py:``; a ``cmd:`` program may
  connect only to its game server's port;
* **processes**: it cannot trace, read the memory, environment or descriptors (``/proc/PID/...``,
  ``pidfd_getfd``) of a process outside its walls (every ABI), nor signal one or reach its abstract Unix
  sockets (ABI 6+: scoping). Whatever it starts inherits the walls.

Where a wall is missing (no Landlock: an old kernel, macOS; an ABI without TCP rules or scoping) the caller
says which in one line (:func:`missing_line`) and the game plays as before. ``BLOKUS_SANDBOX=off`` turns the
walls off (tests of that line). ``bench/bench_sandbox.py`` measures the cost (microseconds per start).

Not walled by Landlock (ABI 7, measured on Linux 6.18): UDP and named Unix sockets; a ``cmd:`` program (all of
/proc readable: its runtime's need) still reads other processes' command lines and, of our processes that are
dumpable or when it runs as root, their environment and descriptor lists (``/proc/PID/environ``, ``fd/``; not
their memory, not the descriptors themselves). Our bot is undumpable (``ai.processes.keep_private``) and keeps
no secret in its environment. The process walls need no Landlock: what a program starts ends with it
(``ai.processes``: its group, its token, the subreaper's sweeps).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import functools
import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ENV = "BLOKUS_SANDBOX"  # "off": no walls
SCRATCH_ENV = "BLOKUS_SCRATCH"  # the scratch folder a ``py:`` seat's bot gives its team's processes
SCRATCH_LIMIT_BYTES = 256 * 2**20  # in a scratch folder, all files together (disk blocks)
SCRATCH_LIMIT_FILES = 10_000  # entries in a scratch folder
LINUX = sys.platform.startswith("linux")

# Landlock's interface (include/uapi/linux/landlock.h); syscall numbers are the same on every architecture
# that has them (asm-generic: 444-446)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_TRUNCATE, FS_IOCTL_DEV = 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV  # what a rule on a file may hold


def _fs_rights(abi: int) -> int:
    """Every filesystem right this ABI knows (all handled: what no rule allows is denied)."""
    rights = (1 << 13) - 1  # ABI 1: execute … make_sym
    if abi >= 2:
        rights |= 1 << 13  # refer (moving a file between folders)
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not LINUX:
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    libc.syscall.restype = ctypes.c_long
    return libc


def _syscall(number: int, *args: object) -> int:
    libc = _libc()
    if libc is None:
        return -1
    return int(libc.syscall(ctypes.c_long(number), *args))


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version (0: none, or turned off by ``BLOKUS_SANDBOX=off``)."""
    if os.environ.get(ENV, "").lower() in ("off", "0", "no"):
        return 0
    version = _syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(version, 0)


def missing() -> list[str]:
    """The walls this system cannot build, in words (empty: all of them)."""
    version = abi()
    if version == 0:
        off = os.environ.get(ENV, "").lower() in ("off", "0", "no")
        why = f"{ENV}=off" if off else "no Landlock: Linux 5.13+ only" if LINUX else "Linux only"
        return [f"all ({why}): it may write, connect and signal wherever this user may"]
    found = []
    if version < 4:
        found.append(f"the network (Landlock ABI {version} < 4): it may connect anywhere")
    if version < 6:
        found.append(f"signals (Landlock ABI {version} < 6): it may signal this user's other processes")
    return found


def missing_line() -> str:
    """The one line to say when a team's program starts with walls missing ("" if none is)."""
    gaps = missing()
    return f"walls missing around team programs: {'; '.join(gaps)}" if gaps else ""


# --- building the walls -----------------------------------------------------------------------------------

SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/dev", "/sys", "/nix", "/snap")
# of /proc, a walled Python process reads its own folder and these (Landlock lets a walled process read the
# environment and the descriptor list of any process of its user under /proc/PID: a ``cmd:`` program, whose
# runtime may need all of /proc, keeps that; our bot holds no secret in its environment)
PROC_READ = ("cpuinfo", "meminfo", "stat", "filesystems", "mounts", "sys")


@dataclass(frozen=True)
class Walls:
    """What a team's program may do: write in ``scratch``; read ``reads`` besides the system's folders,
    Python and this project; connect to the TCP ``ports`` of the loopback (py: none)."""

    scratch: Path
    reads: tuple[Path, ...] = ()
    ports: tuple[int, ...] = ()
    whole_proc: bool = True  # all of /proc (a program's runtime); False: its own /proc/PID only (:func:`confine`)
    writes: tuple[Path, ...] = ()  # files it may also write (its own logs: ``> /dev/stderr`` opens them anew)


def _project_root() -> Path:
    return Path(__file__).resolve().parents[2]  # the folder holding the package (this file is blokus/ai/sandbox.py)


def readable(extra: Iterable[Path | str] = ()) -> list[str]:
    """The folders a walled program reads: the system's, Python's (its prefixes and import path), this
    project's, and ``extra``; only those that exist, each once."""
    places = [
        *SYSTEM_READ,
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        *sys.path,
        str(_project_root()),
        *map(str, extra),
    ]
    found: dict[str, None] = {}
    for place in places:
        if place and os.path.isabs(place) and os.path.exists(place):
            found[os.path.realpath(place)] = None
            found[place] = None  # a link's own path as well as its target (both are walked)
    return list(found)


def program_reads(argv: list[str], cwd: Path | None = None) -> tuple[Path, ...]:
    """A ``cmd:`` program's own folders to read: its working directory, the installation of its executable
    (``/x/jdk/bin/java`` → ``/x/jdk``) and the folder of each argument that names a file (``player.jar``)."""
    here = cwd or Path.cwd()
    found = [here]
    exe = shutil.which(argv[0]) if argv else None
    if exe is not None:
        real = Path(exe).resolve()
        found += [Path(exe).parent, real.parent, real.parent.parent]
    for arg in argv[1:]:
        with contextlib.suppress(OSError, ValueError):
            path = here / arg
            if path.is_file():
                found += [path.parent, path.resolve().parent]
            elif path.is_dir():
                found.append(path)
    return tuple(found)


def prepare(walls: Walls) -> int | None:
    """The walls as a Landlock ruleset (its descriptor, to :func:`enter` in the process to be walled, then to
    close); None if this system has no Landlock (or the walls are off)."""
    version = abi()
    if version == 0:
        return None
    attr = _RulesetAttr(_fs_rights(version), NET_BIND_TCP | NET_CONNECT_TCP if version >= 4 else 0, 0)
    if version >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    size = ctypes.sizeof(_RulesetAttr) if version >= 6 else 16
    fd = _syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        return None
    try:
        everything = _fs_rights(version)
        proc = ["/proc"] if walls.whole_proc else [f"/proc/{os.getpid()}", *(f"/proc/{name}" for name in PROC_READ)]
        for place in readable([*walls.reads, *proc]):
            _allow_path(fd, place, _READ)
        walls.scratch.mkdir(parents=True, exist_ok=True)
        _allow_path(fd, str(walls.scratch), everything)
        if os.path.isdir("/dev/shm"):  # POSIX shared memory: multiprocessing's locks and heaps, a JVM's need it
            _allow_path(fd, "/dev/shm", everything)
        for file in (os.devnull, *map(str, walls.writes)):
            _allow_path(fd, file, (FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE) & everything)
        if version >= 4:
            for port in walls.ports:
                rule = _NetPortAttr(NET_CONNECT_TCP, port)
                if _syscall(_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_NET_PORT), ctypes.byref(rule), 0) < 0:
                    raise OSError(ctypes.get_errno(), f"cannot allow port {port}")
    except OSError:
        os.close(fd)
        raise
    return fd


def _allow_path(ruleset: int, place: str, rights: int) -> None:
    try:
        target = os.open(place, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since it was listed: nothing to allow
    try:
        if not os.path.isdir(place):
            rights &= _FILE_RIGHTS
        rule = _PathBeneathAttr(rights, target)
        if _syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), 0) < 0:
            raise OSError(ctypes.get_errno(), f"cannot allow {place}")
    finally:
        os.close(target)


def enter(ruleset: int) -> bool:
    """Wall this process (its calling thread and everything it starts from now on) by ``ruleset``: for
    good. Safe between fork and exec (two syscalls). True if walled."""
    libc = _libc()
    if libc is None or libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return _syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) == 0


def confine(walls: Walls) -> bool:
    """Wall this very process by ``walls`` (the team's Python process, before it imports the team's file).
    True if walled; False where Landlock is missing or off (the parent has said so). Of /proc it reads
    only its own folder (``walls.whole_proc`` is ignored)."""
    try:
        ruleset = prepare(dataclasses.replace(walls, whole_proc=False))
    except OSError:
        return False
    if ruleset is None:
        return False
    try:
        return enter(ruleset)
    finally:
        os.close(ruleset)


# --- the scratch folder ----------------------------------------------------------------------------------


def scratch_used(folder: Path, limit_files: int = SCRATCH_LIMIT_FILES) -> tuple[int, int]:
    """The disk space (bytes of its blocks) and the number of entries in ``folder`` (its links not
    followed); counting stops after ``limit_files`` entries."""
    used = files = 0
    todo = [folder]
    while todo and files <= limit_files:
        with contextlib.suppress(OSError), os.scandir(todo.pop()) as entries:
            for entry in entries:
                files += 1
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    used += getattr(info, "st_blocks", 0) * 512 or info.st_size
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(Path(entry.path))
                if files > limit_files:
                    break
    return used, files


def scratch_over(folder: Path, limit: int = SCRATCH_LIMIT_BYTES, limit_files: int = SCRATCH_LIMIT_FILES) -> str:
    """Why ``folder`` holds too much, in words ("" if it does not)."""
    used, files = scratch_used(folder, limit_files)
    if files > limit_files:
        return f"its scratch folder holds more than {limit_files} files"
    if used > limit:
        return f"its scratch folder holds {used / 2**20:.0f} MiB (at most {limit / 2**20:g} MiB)"
    return ""


def clear(folder: Path) -> None:
    """Remove the scratch folder and what is in it."""
    shutil.rmtree(folder, ignore_errors=True)


def scratch_env(folder: Path) -> dict[str, str]:
    """The environment that points a program's temporary files at its scratch folder."""
    text = str(folder)
    return {"TMPDIR": text, "TMP": text, "TEMP": text}
