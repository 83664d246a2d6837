# gdb commands for a running (or hung) ondol kernel: `source tools/gdb_ondol.py` in a gdb
# attached to QEMU's stub (tools/gdbinit; docs/debugging.md, "A hung system").
#   ondol-threads   every thread in the thread table: id, task, scheduler and IPC state,
#                   the CPU it is on or queued on, and a Linux thread's forwarded call
#   ondol-cpus      every started CPU: what it runs, its run queue's words, whether it
#                   holds the big kernel lock; the lock's byte and the clock's ticks
# Both only read kernel memory (the kernel half is mapped in every address space), so they
# work wherever the CPUs stopped. The field names are kernel/core/thread.h's and
# kernel/arch/x86_64/include/cpu.h's: a rename there must be made here too.
import gdb

THREAD_SLOTS = "sizeof(thread_fast) / sizeof(thread_fast[0])"
IPC_STATES = {0: "idle", 1: "sending", 2: "receiving"}
BKL_NOT_HELD = 1                        # cpu.h: a CPU's bkl byte when it does not hold it
FWD_KINDS = {0: "", 1: "syscall", 2: "fault", 3: "interrupt", 4: "regs", 5: "pager"}  # fwd.h


def _int(v):
    return int(v.cast(gdb.lookup_type("long")))


def _tid(ptr):
    return _int(ptr.dereference()["tid"]) if _int(ptr) else 0


def _thread_line(t):
    task = t["task"]
    who = f'{task["name"].string()}({_int(task["id"])})' if _int(task) else "kernel"
    line = (f'tid {_int(t["tid"]):5} {who:18} {str(t["state"]):10} cpu {_int(t["cpu"]):2}'
            f' on_cpu {_int(t["on_cpu"])} ipc {IPC_STATES.get(_int(t["ipc_state"]), "?")}')
    if _int(t["ipc_state"]) == 1:
        line += f' to {_int(t["send_to"])}'
    if _int(t["ipc_state"]) == 2:
        line += f' from {_int(t["recv_from"]) or "any"}'
    if _int(t["waiting_on"]):
        line += f' queue {_int(t["waiting_on"]) % (1 << 64):#x}'
    if _int(t["reply_head"]):
        line += f' replies-owed-to {_tid(t["reply_head"])}'
    if _int(t["killed"]):
        line += f' killed(interrupt {_int(t["interrupt"])})'
    kind = FWD_KINDS.get(_int(t["fwd"]), "?")
    if kind == "syscall":
        line += f' linux-syscall {_int(t["fwd_words"][1])}'
    elif kind:
        line += f" forwarded-{kind}"
    return line


class OndolThreads(gdb.Command):
    """List every thread of the kernel's thread table."""

    def __init__(self):
        super().__init__("ondol-threads", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        none = _int(gdb.parse_and_eval("&thread_none"))
        for i in range(_int(gdb.parse_and_eval(THREAD_SLOTS))):
            p = gdb.parse_and_eval(f"thread_fast[{i}]")
            if _int(p) != none:
                print(_thread_line(p.dereference()))


class OndolCpus(gdb.Command):
    """List every started CPU: its current thread, run queue and whether it holds the BKL."""

    def __init__(self):
        super().__init__("ondol-cpus", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        print(f'ticks {_int(gdb.parse_and_eval("ticks"))}, '
              f'BKL byte {_int(gdb.parse_and_eval("kernel_bkl_byte"))} (0: free)')
        for i in range(_int(gdb.parse_and_eval("cpus_running"))):
            c = gdb.parse_and_eval(f"cpus[{i}]")
            cur = c["current"]
            idle = " (idle)" if _int(cur) == _int(c["idle"]) else ""
            print(f'cpu {i:2}: runs {_tid(cur)}{idle}, run queue words {_int(c["rq_words"]):#x},'
                  f' need_resched {_int(c["need_resched"])}, x87/SSE of {_tid(c["fpu_owner"])}'
                  f'{"" if _int(c["bkl"]) == BKL_NOT_HELD else ", holds the BKL"}')


OndolThreads()
OndolCpus()
