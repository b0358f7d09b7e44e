"""Plays like a random bot after trying, at its first request, an attack that the
sandbox or the containment of bots must stop. When the attack succeeds it answers out of
range (an ``illegal`` forfeit tells the test); when it fails it plays on. Says what
happened on stderr. Linux on x86-64 (system call numbers, ptrace's registers).

Usage: intruder.py MODE [ARG...]
  ptrace          attach to pid 1 (the sandbox's init, its parent), make it call
                  prctl(PR_SET_PDEATHSIG, 0) so that its parent's death no longer
                  kills it, then start a child in a session of its own that sleeps
  keyring DESC    read the user key DESC from the session keyring
  env NAME        find the variable NAME in its environment or in /proc/1/environ
  userns MB       make a user and mount namespace, mount a tmpfs, write MB MiB in it
  cmdline         read /proc/1/cmdline: escaped if it shows bwrap's options or a path
                  that the bot cannot see
  logs            list logs/ and replays/ of its working directory, take every number
                  in a file name for the master seed, and rebuild its own hand from it
  write DIR...    make a file and a folder in each DIR (escaped if any is made), then
                  write 1 MiB to its scratch space, /tmp, and make a semaphore in
                  /dev/shm (says whether it could)
  guardkill       kill its guard (a process with its own parent that runs the guard's
                  script), start a child in a session of its own that sleeps, then
                  think for a minute
"""

import contextlib
import ctypes
import ctypes.util
import os
import re
import signal
import sys
import time

from _common import Bot
from taki_protocol import BotHello, Decide, Error, GameStart, Hello, React, Request, Shutdown

MODE, ARGS = sys.argv[1], sys.argv[2:]
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]

SYS_PRCTL, SYS_ADD_KEY, SYS_KEYCTL = 157, 248, 250
PR_SET_PDEATHSIG = 1
KEYCTL_SEARCH, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING = 10, 11, -3
PTRACE_PEEKTEXT, PTRACE_GETREGS, PTRACE_SETREGS = 1, 12, 13
PTRACE_SINGLESTEP, PTRACE_ATTACH, PTRACE_DETACH = 9, 16, 17
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
WALL = 0x40000000


def say(text: str) -> None:
    print(f"intruder {MODE}: {text}", file=sys.stderr, flush=True)


def failed(what: str) -> bool:
    say(f"{what}: {os.strerror(ctypes.get_errno())}")
    return False


class Regs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in (
        "r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
        "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss", "fs_base",
        "gs_base", "ds", "es", "fs", "gs")]


def sleeper_in_own_session() -> None:
    if os.fork() == 0:
        os.setsid()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        time.sleep(120)
        os._exit(0)


def ptrace_pid1() -> bool:
    with open("/proc/1/comm") as f:
        if f.read().strip() != "bwrap":  # never the machine's own init
            say("pid 1 is not a sandbox's")
            return False
    if libc.ptrace(PTRACE_ATTACH, 1, None, None) != 0:
        return failed("cannot attach to pid 1")
    try:
        os.waitpid(1, WALL)
        saved = Regs()
        libc.ptrace(PTRACE_GETREGS, 1, None, ctypes.byref(saved))
        code = libc.ptrace(PTRACE_PEEKTEXT, 1, ctypes.c_void_p(saved.rip - 2), None)
        if code & 0xFFFF != 0x050F:  # not stopped right after a `syscall` instruction
            say("pid 1 is not in a system call")
            return False
        call = Regs.from_buffer_copy(saved)
        call.rax, call.rdi, call.rsi = SYS_PRCTL, PR_SET_PDEATHSIG, 0
        call.rip, call.orig_rax = saved.rip - 2, (1 << 64) - 1
        libc.ptrace(PTRACE_SETREGS, 1, None, ctypes.byref(call))
        libc.ptrace(PTRACE_SINGLESTEP, 1, None, None)
        os.waitpid(1, WALL)
        libc.ptrace(PTRACE_GETREGS, 1, None, ctypes.byref(call))
        libc.ptrace(PTRACE_SETREGS, 1, None, ctypes.byref(saved))
    finally:
        libc.ptrace(PTRACE_DETACH, 1, None, None)
    say(f"pid 1 called prctl: {call.rax}")
    sleeper_in_own_session()
    return call.rax == 0


def read_key(description: str) -> bool:
    key = libc.syscall(SYS_KEYCTL, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, b"user",
                       description.encode(), 0)
    if key < 0:
        return failed("cannot find the key")
    buffer = ctypes.create_string_buffer(256)
    size = libc.syscall(SYS_KEYCTL, KEYCTL_READ, key, buffer, 256)
    if size < 0:
        return failed("cannot read the key")
    say(f"read the key: {buffer.raw[:size]!r}")
    return True


def find_variable(name: str) -> bool:
    if name in os.environ:
        say("found it in its environment")
        return True
    try:
        with open("/proc/1/environ", "rb") as f:
            environ = f.read()
    except OSError as exc:
        say(f"cannot read /proc/1/environ: {exc.strerror}")
        return False
    if name.encode() + b"=" in environ:
        say("found it in /proc/1/environ")
        return True
    say(f"not found ({sorted(os.environ)})")
    return False


def big_tmpfs(mb: int) -> bool:
    uid, gid = os.getuid(), os.getgid()
    if libc.syscall(272, CLONE_NEWUSER | CLONE_NEWNS) != 0:  # unshare
        return failed("cannot unshare")
    # Root in the new namespace, as the bot's own user outside.
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                       ("gid_map", f"0 {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    target = "/tmp/intruder-tmpfs"
    os.makedirs(target, exist_ok=True)
    if libc.mount(b"none", target.encode(), b"tmpfs", 0, b"size=1g") != 0:
        return failed("cannot mount a tmpfs")
    written = 0
    with open(f"{target}/fill", "wb") as f:
        block = b"\1" * (1 << 20)
        try:
            for _ in range(mb):
                f.write(block)
                written += 1
        except OSError as exc:
            say(f"wrote {written} MiB, then: {exc.strerror}")
            return False
    say(f"wrote {written} MiB")
    return True


def wrote_outside_tmp(dirs: list[str]) -> bool:
    made = False
    for folder in dirs:
        for path, make in ((os.path.join(folder, "intruder-file"), write_file),
                           (os.path.join(folder, "intruder-folder"), os.mkdir)):
            try:
                make(path)
            except OSError as exc:
                say(f"cannot make {path}: {exc.strerror}")
            else:
                say(f"made {path}")
                made = True
    try:
        write_file("/tmp/scratch", 1 << 20)
    except OSError as exc:
        say(f"scratch space: cannot write /tmp/scratch: {exc.strerror}")
    else:
        say("scratch space: wrote 1 MiB to /tmp/scratch")
    try:
        import multiprocessing  # its semaphores live in /dev/shm

        multiprocessing.Semaphore(1)
    except OSError as exc:
        say(f"shared memory: no semaphore: {exc.strerror}")
    else:
        say("shared memory: a semaphore works")
    return made


def write_file(path: str, size: int = 1) -> None:
    with open(path, "xb") as f:
        f.write(b"x" * size)


def bwrap_options_shown() -> bool:
    with open("/proc/1/cmdline", "rb") as f:
        words = [w.decode(errors="replace") for w in f.read().split(b"\0") if w]
    say(f"/proc/1/cmdline: {words}")
    options = [w for w in words if w.startswith("--") and w not in ("--args", "--")]
    unseen = [w for w in words if w.startswith("/") and not os.path.exists(w)]
    return bool(options or unseen)


def rebuilt_hand(game: GameStart, request: Request) -> bool:
    from referee.core.schedule import derive_seed
    from referee.rules import Rules
    from referee.rules.cards import NAMES
    from referee.rules.state import new_game

    names = []
    for directory in ("logs", "replays"):
        with contextlib.suppress(OSError):
            names += os.listdir(directory)
    say(f"sees {len(names)} files")
    number = int(game.game_id.removeprefix("game")) - 1 if game.game_id.startswith(
        "game") else 0
    deal = number // game.players
    mine = list(request.view["hand"])
    for seed in {int(n) for name in names for n in re.findall(r"\d{6,}", name)}:
        state = new_game(game.players, derive_seed(seed, "deal", deal), Rules())
        dealt = [NAMES[c] for c in state.hand(game.seat)]
        if all(mine.count(card) >= dealt.count(card) for card in dealt):
            say(f"rebuilt the deal from master seed {seed}")
            return True
    say("rebuilt nothing")
    return False


def kill_guard() -> bool:
    killed = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                line = f.read()
            with open(f"/proc/{pid}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])
            if b"read -r group" in line and parent == os.getppid():
                os.kill(int(pid), signal.SIGKILL)
                killed += 1
    sleeper_in_own_session()
    say(f"killed {killed} guards and started a child in a session of its own")
    time.sleep(60)  # the test kills the referee meanwhile
    return killed > 0


started: GameStart | None = None


def escaped(request: Request) -> bool:
    if MODE == "ptrace":
        return ptrace_pid1()
    if MODE == "keyring":
        return read_key(ARGS[0])
    if MODE == "env":
        return find_variable(ARGS[0])
    if MODE == "userns":
        return big_tmpfs(int(ARGS[0]))
    if MODE == "cmdline":
        return bwrap_options_shown()
    if MODE == "logs":
        assert started is not None
        return rebuilt_hand(started, request)
    if MODE == "guardkill":
        return kill_guard()
    if MODE == "write":
        return wrote_outside_tmp(ARGS)
    raise SystemExit(f"unknown mode {MODE}")


bot = Bot(f"intruder-{MODE}")
tried = False
for message in bot.messages():
    if isinstance(message, Hello):
        bot.send(BotHello(name=bot.name))
    elif isinstance(message, GameStart):
        started = message
    elif isinstance(message, Decide) and not tried:
        tried = True
        bot.answer(message, choice=len(message.legal) + 998 if escaped(message) else None)
    elif isinstance(message, Decide | React):
        bot.answer(message)
    elif isinstance(message, Error | Shutdown):
        break
