/*
 * The server's memory budget (docs/unix.md, "Reliability"). A client can make the server
 * allocate without end only through buffers whose size it chooses or multiplies: file
 * data in tmpfs (in the heap, or in the page cache's file objects: tmpfs.c) and pipe
 * buffers (processes, fds and names are bounded by the process
 * table, RLIMIT_NOFILE and the path limits). Such a buffer is refused when it would leave
 * less than UNIX_MEM_KEEP of the machine's memory free, and the call fails with its
 * documented error (a file: ENOSPC; a pipe or FIFO: ENOMEM). What is kept serves the
 * server's own small allocations (MK: its heap's pages; a fault of the server that found
 * no frame would end it), the kernel and the other processes.
 */
#include "runtime.h"
#include "unix.h"

bool unix_budget_ok(uint64_t n)
{
    uint64_t total, free;
    rt_memory(&total, &free);
    return free >= n && free - n >= UNIX_MEM_KEEP;
}

void *unix_alloc_big(size_t n)
{
    return unix_budget_ok(n) ? unix_alloc(n) : NULL;
}
