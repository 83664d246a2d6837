/* mem: brk, mmap (anonymous private and shared, files private and shared: the page
 * cache's sharing and coherence), munmap, mprotect, madvise. Faults are caught with a SIGSEGV handler and reported as text. */
#include "lt.h"
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static sigjmp_buf fault_jump;

static void escape(int sig) { siglongjmp(fault_jump, sig); }

/* "ok" if writing one byte at P works, else "SIGSEGV". */
static const char *try_write(volatile char *p)
{
	if (sigsetjmp(fault_jump, 1))
		return "SIGSEGV";
	*p = 1;
	return "ok";
}

/* The byte at P as text, or the signal reading it raised. */
static const char *try_read(volatile char *p)
{
	static char got[8];
	int sig = sigsetjmp(fault_jump, 1);
	if (sig)
		return sig == SIGBUS ? "SIGBUS" : "SIGSEGV";
	snprintf(got, sizeof got, "%d", *p);
	return got;
}

static void test_brk(void)
{
	uintptr_t cur = syscall(SYS_brk, 0);
	lt_true("brk query nonzero", cur != 0);
	uintptr_t grown = syscall(SYS_brk, cur + 65536);
	lt_true("brk grow", grown == cur + 65536);
	lt_str("brk new memory writable", try_write((char *)cur + 65535), "ok");
	VAL("brk new memory zeroed", ((char *)cur)[100], 0);
	lt_true("brk shrink", (uintptr_t)syscall(SYS_brk, cur) == cur);
	lt_true("brk below start refused", (uintptr_t)syscall(SYS_brk, 4096) == cur);
}

static void test_mmap(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	lt_true("mmap anonymous", p != MAP_FAILED);
	VAL("mmap memory zeroed", p[4096], 0);
	lt_true("mmap page aligned", ((uintptr_t)p & 4095) == 0);
	p[0] = 'a';
	pid_t c = fork();
	if (c == 0) {
		p[0] = 'c';
		_exit(0);
	}
	waitpid(c, NULL, 0);
	VAL("private mapping copied on fork", p[0], 'a');
	char *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s[0] = 'a';
	c = fork();
	if (c == 0) {
		s[0] = 'c';
		_exit(0);
	}
	waitpid(c, NULL, 0);
	VAL("shared mapping seen after fork", s[0], 'c');
	VAL("munmap", munmap(p, 8192), 0);
	lt_str("access after munmap", try_write(p), "SIGSEGV");
	ERR("mmap length 0", (long)mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), EINVAL);
	ERR("mmap neither private nor shared", (long)mmap(NULL, 4096, PROT_READ, MAP_ANONYMOUS, -1, 0), EINVAL);
	ERR("mmap bad fd", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 999, 0), EBADF);
	ERR("mmap unaligned offset", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 0, 1), EINVAL);
	ERR("munmap unaligned", munmap((char *)s + 1, 4096), EINVAL);
	VAL("munmap unmapped range", munmap((void *)0x200000000000, 4096), 0);
	int fd = open("mapped", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, "file contents", 13);
	char *f = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	lt_true("mmap file private read-only", f != MAP_FAILED);
	lt_str("mmap file data", strncmp(f, "file contents", 13) ? "differs" : "file contents", "file contents");
	VAL("mmap file tail zeroed", f[13], 0);
	close(fd);
	fd = open("mapped", O_RDONLY);
	ERR("mmap shared writable on read-only fd", (long)mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
	close(fd);
}

static void test_protect(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	VAL("mprotect read-only", mprotect(p, 4096, PROT_READ), 0);
	lt_str("write to read-only page", try_write(p), "SIGSEGV");
	VAL("mprotect read-write", mprotect(p, 4096, PROT_READ | PROT_WRITE), 0);
	lt_str("write after mprotect back", try_write(p), "ok");
	ERR("mprotect unaligned", syscall(SYS_mprotect, p + 1, 4096, PROT_READ), EINVAL);
	ERR("mprotect bad prot", mprotect(p, 4096, 0x100), EINVAL);
	ERR("mprotect unmapped", mprotect((void *)0x200000000000, 4096, PROT_READ), ENOMEM);
	VAL("madvise DONTNEED", madvise(p, 4096, MADV_DONTNEED), 0);
	VAL("madvise DONTNEED zeroes private page", p[0], 0);
	VAL("madvise NORMAL", madvise(p, 4096, MADV_NORMAL), 0);
	ERR("madvise bad advice", madvise(p, 4096, 12345), EINVAL);
	p[0] = 5;
	VAL("madvise FREE accepted", madvise(p, 4096, MADV_FREE), 0);
	ERR("madvise DONTNEED unaligned", madvise(p + 1, 4096, MADV_DONTNEED), EINVAL);
	ERR("madvise length wraps", syscall(SYS_madvise, p, -1L, MADV_DONTNEED), EINVAL);
	VAL("madvise length 0", madvise(p, 0, MADV_DONTNEED), 0);
	ERR("madvise DONTNEED unmapped", madvise((void *)0x200000000000, 4096, MADV_DONTNEED), ENOMEM);
	munmap(p, 4096);
}

/* MADV_DONTNEED: a private page is dropped for this process only (a fork's copy keeps
 * its data), a range with a hole drops the mapped part and says ENOMEM, shared anonymous
 * memory keeps its contents, and the mapping stays usable. */
static void test_dontneed(void)
{
	char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(p, 7, 3 * 4096);
	int pp[2];
	pipe(pp);
	pid_t c = fork();
	if (c == 0) {
		char got = madvise(p, 4096, MADV_DONTNEED) == 0 ? p[0] : 'x';
		write(pp[1], &got, 1);
		_exit(0);
	}
	char child_saw = '?';
	read(pp[0], &child_saw, 1);
	waitpid(c, NULL, 0);
	VAL("DONTNEED in a fork's child reads zero", child_saw, 0);
	VAL("DONTNEED in the child leaves the parent's copy", p[0], 7);
	munmap(p + 4096, 4096);
	ERR("DONTNEED over a hole", madvise(p, 3 * 4096, MADV_DONTNEED), ENOMEM);
	VAL("DONTNEED over a hole drops the mapped part", p[0] + p[2 * 4096], 0);
	p[0] = 3;
	VAL("the mapping stays writable", p[0], 3);
	char *s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	s[0] = 9;
	VAL("DONTNEED shared anonymous", madvise(s, 4096, MADV_DONTNEED), 0);
	VAL("DONTNEED shared keeps contents", s[0], 9);
	munmap(s, 4096);
	close(pp[0]);
	close(pp[1]);
}

/* File mappings as a dynamic loader makes them (glibc's ld.so: one private read-only
 * mapping of the whole library, then MAP_FIXED mappings of its segments at their file
 * offsets over it, an anonymous MAP_FIXED one for the bss, mprotect and partial munmap):
 * a private writable mapping is the process's own copy (the file and a fork's child
 * keep theirs). */
/* madvise(MADV_DONTNEED) on one thread while another writes and reads back the same
 * pages, on two CPUs when there are two (tests/test_smp.py): a private page reads back
 * what was written or, when it went in between, zero; a shared one keeps its bytes. */
#define RACE_PAGES 16
#define RACE_ROUNDS 1000
static unsigned char *race_area;
static volatile int race_stop;

static void *dontneed_loop(void *arg)
{
	(void)arg;
	while (!race_stop)
		madvise(race_area, RACE_PAGES * 4096, MADV_DONTNEED);
	return NULL;
}

static int stray_bytes_while_dropped(int shared)
{
	race_area = mmap(NULL, RACE_PAGES * 4096, PROT_READ | PROT_WRITE,
			 (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (race_area == MAP_FAILED)
		return -1;
	pthread_t t;
	race_stop = 0;
	pthread_create(&t, NULL, dontneed_loop, NULL);
	int bad = 0;
	for (int r = 1; r <= RACE_ROUNDS; r++)
		for (int p = 0; p < RACE_PAGES; p++) {
			volatile unsigned char *b = race_area + p * 4096 + (r % 4096);
			*b = (unsigned char)r;
			unsigned char v = *b;
			bad += v != (unsigned char)r && (shared || v != 0);
		}
	race_stop = 1;
	pthread_join(t, NULL);
	munmap(race_area, RACE_PAGES * 4096);
	return bad;
}

static void test_dontneed_race(void)
{
	VAL("madvise DONTNEED racing a writer, private: stray bytes", stray_bytes_while_dropped(0), 0);
	VAL("madvise DONTNEED racing a writer, shared: bytes lost", stray_bytes_while_dropped(1), 0);
}

static void test_file_segments(void)
{
	static char page[4096];
	int fd = open("lib", O_RDWR | O_CREAT | O_TRUNC, 0644);
	memset(page, 'A', sizeof page);
	write(fd, page, sizeof page);
	memset(page, 'B', sizeof page);
	write(fd, page, sizeof page);
	write(fd, "CCCC", 4);
	char *r = mmap(NULL, 3 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	lt_true("reserve: a private read-only file mapping", r != MAP_FAILED);
	lt_str("pages at their offsets", r[0] == 'A' && r[4096] == 'B' && r[8192] == 'C' ? "ABC" : "wrong", "ABC");
	char *seg = mmap(r + 4096, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 8192);
	lt_true("MAP_FIXED over it at an offset", seg == r + 4096);
	lt_str("the offset's bytes, zeros after the end", seg[0] == 'C' && seg[3] == 'C' && seg[4] == 0 ? "CCCC" : "wrong", "CCCC");
	seg[0] = 'x';
	char back = 0;
	pread(fd, &back, 1, 8192);
	VAL("a private write leaves the file", back, 'C');
	pid_t c = fork();
	if (c == 0)
		_exit(seg[0] == 'x' && (seg[0] = 'y') == 'y' ? 0 : 1);
	int st = 0;
	waitpid(c, &st, 0);
	VAL("a fork's child sees the copy", WEXITSTATUS(st), 0);
	VAL("and its writes stay its own", seg[0], 'x');
	VAL("mprotect a file page read-only", mprotect(seg, 4096, PROT_READ), 0);
	lt_str("write to it", try_write(seg), "SIGSEGV");
	VAL("munmap the last page", munmap(r + 8192, 4096), 0);
	lt_str("access after partial munmap", try_write(r + 8192), "SIGSEGV");
	VAL("the first page stays", r[0], 'A');
	char *bss = mmap(r + 8192, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0);
	lt_true("anonymous MAP_FIXED in the hole", bss == r + 8192);
	VAL("reads zero", bss[100], 0);
	VAL("munmap the lot", munmap(r, 3 * 4096), 0);
	close(fd);
	fd = open("lib", O_RDONLY);
	char *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 4096);
	lt_true("private writable on a read-only fd", w != MAP_FAILED);
	w[1] = 'z';
	VAL("is writable", w[0] + w[1], 'B' + 'z');
	munmap(w, 4096);
	close(fd);
}

/* /proc/meminfo's MemFree, in KiB. */
static long mem_free_kib(void)
{
	char line[128];
	long kib = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "MemFree: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

#define BIG (4 << 20)

/* Sum of one byte a page, touching every page of [p, p + n). */
static long touch(const volatile char *p, long n)
{
	long sum = 0;
	for (long i = 0; i < n; i += 4096)
		sum += p[i];
	return sum;
}

/* A file's pages are the page cache's: a second mapping of a 4 MiB file (in another
 * process too) takes no memory for the file's bytes, and a private mapping of it copies
 * only the page it writes. */
static void test_file_sharing(void)
{
	int fd = open("big", O_RDWR | O_CREAT | O_TRUNC, 0644);
	static char chunk[65536];
	memset(chunk, 1, sizeof chunk);
	for (int i = 0; i < BIG / (int)sizeof chunk; i++)
		write(fd, chunk, sizeof chunk);
	char *a = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE, fd, 0);
	VAL("a 4 MiB file mapped and read", touch(a, BIG), BIG / 4096);
	long before = mem_free_kib();
	char *b = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE, fd, 0);
	long sum = touch(b, BIG);
	lt_str("a second mapping shares its pages", before - mem_free_kib() < 1024 ? "yes" : "no", "yes");
	VAL("and reads the same bytes", sum, BIG / 4096);
	int pp[2];
	pipe(pp);
	pid_t c = fork();
	if (c == 0) {
		long at = mem_free_kib();
		char *m = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		long got = touch(m, BIG);
		char r = got == BIG / 4096 && at - mem_free_kib() < 1024 ? 'y' : 'n';
		m[0] = 5;
		char back = 0;
		pread(fd, &back, 1, 0);
		r = r == 'y' && back == 1 ? 'y' : 'n';
		write(pp[1], &r, 1);
		_exit(0);
	}
	char child = '?';
	read(pp[0], &child, 1);
	waitpid(c, NULL, 0);
	VAL("another process's mapping shares them, its write stays its own", child, 'y');
	VAL("the parent's mapping keeps the file's byte", b[0], 1);
	munmap(a, BIG);
	munmap(b, BIG);
	close(fd);
	close(pp[0]);
	close(pp[1]);
	unlink("big");
}

/* Mappings follow the file: a private mapping sees later writes to pages it has not
 * written, a shared one writes the file, truncation makes the pages past the end SIGBUS,
 * an unlinked file stays mapped, MADV_DONTNEED reads the file again. */
static void test_file_coherence(void)
{
	static char page[8192];
	int fd = open("coh", O_RDWR | O_CREAT | O_TRUNC, 0644);
	memset(page, 'a', sizeof page);
	write(fd, page, sizeof page);
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	char *s = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	lt_true("MAP_SHARED writable of a file", s != MAP_FAILED);
	p[0] = 'p';
	pwrite(fd, "WW", 2, 4095);
	lt_str("a private mapping sees a later write to a page it has not written",
	       p[4096] == 'W' ? "yes" : "no", "yes");
	lt_str("but not to a page it has written", p[4095] == 'a' ? "own copy" : "changed", "own copy");
	s[100] = 'S';
	char back = 0;
	pread(fd, &back, 1, 100);
	VAL("a write through a shared mapping reaches the file", back, 'S');
	VAL("the private mapping keeps its own page", p[100], 'a');
	VAL("the shared mapping sees write()", s[4095], 'W');
	pid_t c = fork();
	if (c == 0) {
		s[200] = 'C';
		_exit(0);
	}
	waitpid(c, NULL, 0);
	VAL("a fork's write through the shared mapping", s[200], 'C');
	VAL("MADV_DONTNEED a private file page", madvise(p, 4096, MADV_DONTNEED), 0);
	VAL("reads the file again", p[0], 'a');
	VAL("ftruncate to one page", ftruncate(fd, 4096), 0);
	lt_str("a shared page past the end", try_read(s + 4096), "SIGBUS");
	lt_str("a private page past the end", try_read(p + 4096 + 10), "SIGBUS");
	lt_str("the page before the end", try_read(s + 4095), "87");
	VAL("ftruncate back to two pages", ftruncate(fd, 8192), 0);
	lt_str("the page is back, zeroed", try_read(s + 4096), "0");
	char *past = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 3 * 4096);
	lt_true("mmap at an offset past the end", past != MAP_FAILED);
	lt_str("its page", try_read(past), "SIGBUS");
	VAL("unlink the mapped file", unlink("coh"), 0);
	close(fd);
	s[1] = 'U';
	VAL("its mappings stay", s[0] + s[1], 'a' + 'U');
	munmap(past, 4096);
	munmap(p, 8192);
	munmap(s, 8192);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = escape;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	test_brk();
	test_mmap();
	test_protect();
	test_dontneed();
	test_dontneed_race();
	test_file_segments();
	test_file_sharing();
	test_file_coherence();
	return lt_done();
}
