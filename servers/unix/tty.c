/*
 * The console tty and its line discipline, in termios terms (termios(3), tty_ioctl(4)).
 *
 * Input arrives through tty_input() and is processed byte by byte as the termios flags
 * say: ISTRIP; IXON's VSTART/VSTOP taken out of the input; ISIG characters (VINTR -> SIGINT, VQUIT -> SIGQUIT, VSUSP -> SIGTSTP to the
 * foreground process group, input flushed unless NOFLSH); IGNCR/ICRNL/INLCR; then either
 * canonical editing (ICANON: VERASE and ^H erase a character, VKILL the line, VWERASE a
 * word, VLNEXT quotes the next byte, VEOF ends a line without itself, newline/VEOL/VEOL2
 * end it with themselves) or raw mode, where every byte is readable at once. ECHO echoes
 * input (control characters as ^X with ECHOCTL; ECHOE erases visually; ECHONL echoes
 * newlines even without ECHO). Output goes to console_write() after OPOST processing
 * (ONLCR, OCRNL).
 *
 * Reading, canonical: one complete line at most per read, 0 for a line ended by VEOF
 * alone. Raw: VMIN and VTIME as termios(3) says for the four basic cases; VTIME counts
 * from the call's start (c->started_ns), which for VMIN > 0 approximates Linux's inter-byte
 * timer by a timer over the whole read. A read waits on the tty's list (-EAGAIN with
 * O_NONBLOCK).
 *
 * The controlling tty: a process's ctty is this tty while the tty's session is the
 * process's session (TIOCSCTTY makes it so, TIOCNOTTY by the session leader ends it for
 * the whole session at once). Job control: a process of a background group that reads
 * its controlling tty, writes it under TOSTOP, or changes its settings is stopped by
 * SIGTTIN/SIGTTOU (signal_tty_background decides). Not yet: hang-up.
 */
#include "devices.h"

#define TTY_QUEUE 4096           /* readable bytes (Linux's N_TTY_BUF_SIZE) */
#define TTY_LINES 64             /* complete lines waiting to be read */
#define TTY_LINE_MAX 4096        /* the line being edited; its last byte is for the newline */
#define CTRL(ch) ((ch) & 037)
#define DEL 0177

struct tty {
    struct linux_termios t;
    struct linux_winsize ws;
    int session, pgrp;               /* 0: no session / no foreground group */
    unsigned major, minor;
    unsigned char queue[TTY_QUEUE];  /* readable bytes; canonical: complete lines only */
    size_t qhead, qlen;
    uint16_t lines[TTY_LINES];       /* canonical: the queued lines' lengths, oldest first */
    size_t lhead, nlines;
    unsigned char edit[TTY_LINE_MAX];    /* canonical: the line being typed */
    size_t edit_len;
    bool lnext;                      /* the next byte is taken literally */
    struct waitlist readable;
};

static struct tty console = {
    .t = {
        .c_iflag = ICRNL | IXON,
        .c_oflag = OPOST | ONLCR,
        .c_cflag = B38400 | CS8 | CREAD | HUPCL,
        .c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN,
        .c_cc = {[VINTR] = CTRL('C'), [VQUIT] = CTRL('\\'), [VERASE] = DEL,
                 [VKILL] = CTRL('U'), [VEOF] = CTRL('D'), [VMIN] = 1,
                 [VSTART] = CTRL('Q'), [VSTOP] = CTRL('S'), [VSUSP] = CTRL('Z'),
                 [VREPRINT] = CTRL('R'), [VDISCARD] = CTRL('O'),
                 [VWERASE] = CTRL('W'), [VLNEXT] = CTRL('V')},
    },
    .major = 5,
    .minor = 1,
};

struct tty *tty_console(void)
{
    return &console;
}

/* ---- output: OPOST processing into a buffer flushed to the console ---- */

struct outbuf {
    char b[256];
    size_t len;
};

static void out_flush(struct outbuf *o)
{
    if (o->len)
        console_write(o->b, o->len);
    o->len = 0;
}

static void out_raw(struct outbuf *o, char ch)
{
    if (o->len == sizeof o->b)
        out_flush(o);
    o->b[o->len++] = ch;
}

static void out_post(const struct tty *t, struct outbuf *o, unsigned char ch)
{
    uint32_t of = t->t.c_oflag;
    if ((of & OPOST) && ch == '\n' && (of & ONLCR))
        out_raw(o, '\r');
    else if ((of & OPOST) && ch == '\r' && (of & OCRNL))
        ch = '\n';
    out_raw(o, (char)ch);
}

/* Echo of the bytes tty_input processes, written once the whole input is processed. */
static struct outbuf echo_out;

static bool echoed_as_ctrl(const struct tty *t, unsigned char ch)
{
    return (t->t.c_lflag & ECHOCTL) && (ch < 040 || ch == DEL) && ch != '\t' && ch != '\n';
}

static void echo_byte(struct tty *t, unsigned char ch)
{
    if (!(t->t.c_lflag & ECHO))
        return;
    if (echoed_as_ctrl(t, ch)) {
        out_post(t, &echo_out, '^');
        out_post(t, &echo_out, ch ^ 0100);
    } else {
        out_post(t, &echo_out, ch);
    }
}

/* Take back the echo of ch from the screen (ECHOE): one or two columns. */
static void echo_rubout(struct tty *t, unsigned char ch)
{
    if ((t->t.c_lflag & (ECHO | ECHOE)) != (ECHO | ECHOE))
        return;
    for (int cols = echoed_as_ctrl(t, ch) ? 2 : 1; cols; cols--) {
        out_post(t, &echo_out, '\b');
        out_post(t, &echo_out, ' ');
        out_post(t, &echo_out, '\b');
    }
}

/* ---- the input queue ---- */

static void queue_push(struct tty *t, unsigned char ch)
{
    t->queue[(t->qhead + t->qlen) % TTY_QUEUE] = ch;
    t->qlen++;
}

static void flush_input(struct tty *t)
{
    t->qhead = t->qlen = t->lhead = t->nlines = t->edit_len = 0;
    t->lnext = false;
}

/* The edited line becomes readable (dropped when the queue has no room for it). */
static void finish_line(struct tty *t)
{
    if (t->nlines < TTY_LINES && t->qlen + t->edit_len <= TTY_QUEUE) {
        for (size_t i = 0; i < t->edit_len; i++)
            queue_push(t, t->edit[i]);
        t->lines[(t->lhead + t->nlines) % TTY_LINES] = (uint16_t)t->edit_len;
        t->nlines++;
    }
    t->edit_len = 0;
}

/* ---- canonical editing ---- */

static void erase_last(struct tty *t)
{
    if (t->edit_len)
        echo_rubout(t, t->edit[--t->edit_len]);
}

static bool is_word_char(unsigned char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 040) >= 'a' && (ch | 040) <= 'z');
}

/* VWERASE: the blanks before the cursor, then the word before them. */
static void erase_word(struct tty *t)
{
    bool seen_word = false;
    while (t->edit_len) {
        bool word = is_word_char(t->edit[t->edit_len - 1]);
        if (seen_word && !word)
            break;
        seen_word |= word;
        erase_last(t);
    }
}

/* VKILL: the whole line, erased visually with ECHOKE, else the kill character echoed. */
static void kill_line(struct tty *t, unsigned char ch)
{
    if (t->t.c_lflag & ECHOKE) {
        while (t->edit_len)
            erase_last(t);
        return;
    }
    t->edit_len = 0;
    echo_byte(t, ch);
    if (t->t.c_lflag & ECHOK)
        echo_byte(t, '\n');
}

static void edit_append(struct tty *t, unsigned char ch)
{
    if (t->edit_len < TTY_LINE_MAX - 1) {
        t->edit[t->edit_len++] = ch;
        echo_byte(t, ch);
    }
}

static bool is_cc(const struct tty *t, unsigned char ch, int index)
{
    return t->t.c_cc[index] && ch == t->t.c_cc[index];
}

static bool ends_line(const struct tty *t, unsigned char ch)
{
    return ch == '\n' || is_cc(t, ch, VEOL) || is_cc(t, ch, VEOL2);
}

static void canon_byte(struct tty *t, unsigned char ch)
{
    bool ext = t->t.c_lflag & IEXTEN;
    if (ext && is_cc(t, ch, VLNEXT)) {
        t->lnext = true;
    } else if (is_cc(t, ch, VERASE) || ch == '\b') {
        erase_last(t);
    } else if (is_cc(t, ch, VKILL)) {
        kill_line(t, ch);
    } else if (ext && is_cc(t, ch, VWERASE)) {
        erase_word(t);
    } else if (is_cc(t, ch, VEOF)) {
        finish_line(t);
    } else if (ends_line(t, ch)) {
        t->edit[t->edit_len++] = ch;          /* the reserved last byte */
        if ((t->t.c_lflag & ECHO) || (ch == '\n' && (t->t.c_lflag & ECHONL)))
            out_post(t, &echo_out, ch);
        finish_line(t);
    } else {
        edit_append(t, ch);
    }
}

static void raw_byte(struct tty *t, unsigned char ch)
{
    if (t->qlen < TTY_QUEUE) {
        queue_push(t, ch);
        echo_byte(t, ch);
    }
}

/* ---- input ---- */

/* An ISIG character: its signal to the foreground group. true if ch was one. */
static bool signal_char(struct tty *t, unsigned char ch)
{
    int sig = is_cc(t, ch, VINTR) ? SIGINT : is_cc(t, ch, VQUIT) ? SIGQUIT
            : is_cc(t, ch, VSUSP) ? SIGTSTP : 0;
    if (!sig)
        return false;
    if (!(t->t.c_lflag & NOFLSH))
        flush_input(t);
    echo_byte(t, ch);
    if (t->pgrp > 0)
        signal_send_pgrp(t->pgrp, sig);
    return true;
}

static void receive_byte(struct tty *t, unsigned char ch)
{
    uint32_t in = t->t.c_iflag;
    if (t->lnext) {
        t->lnext = false;
        edit_append(t, ch);
        return;
    }
    if (in & ISTRIP)
        ch &= 0177;
    if ((in & IXON) && (is_cc(t, ch, VSTART) || is_cc(t, ch, VSTOP)))
        return;                      /* flow control: taken out; output never stops here */
    if ((t->t.c_lflag & ISIG) && signal_char(t, ch))
        return;
    if (ch == '\r' && (in & IGNCR))
        return;
    if (ch == '\r' && (in & ICRNL))
        ch = '\n';
    else if (ch == '\n' && (in & INLCR))
        ch = '\r';
    if (t->t.c_lflag & ICANON)
        canon_byte(t, ch);
    else
        raw_byte(t, ch);
}

void tty_input(const char *buf, size_t n)
{
    struct tty *t = &console;
    for (size_t i = 0; i < n; i++)
        receive_byte(t, (unsigned char)buf[i]);
    out_flush(&echo_out);
    poll_wake(&t->readable);
}

/* ---- the controlling tty ---- */

static bool is_ctty_of(const struct tty *t, const struct proc *p)
{
    return t && p->ctty == t && t->session && t->session == p->sid;
}

static bool has_ctty(const struct proc *p)
{
    return is_ctty_of(p->ctty, p);
}

/* Linux's tty_check_change: 0 when p may go on, else what the call returns. */
static long job_control(const struct tty *t, struct proc *p, int sig)
{
    if (!is_ctty_of(t, p) || t->pgrp <= 0 || p->pgid == t->pgrp)
        return 0;
    return signal_tty_background(p, sig);
}

/* ---- reading ---- */

/* Copy k queued bytes to the caller and drop them from the queue: 0 or -EFAULT. */
static long queue_give(struct tty *t, struct ucall *c, uint64_t uaddr, size_t k)
{
    size_t first = TTY_QUEUE - t->qhead < k ? TTY_QUEUE - t->qhead : k;
    if (copy_out(c->proc, uaddr, t->queue + t->qhead, first) ||
        (k > first && copy_out(c->proc, uaddr + first, t->queue, k - first)))
        return -EFAULT;
    t->qhead = (t->qhead + k) % TTY_QUEUE;
    t->qlen -= k;
    return 0;
}

static long canon_read(struct tty *t, struct file *f, struct ucall *c, uint64_t uaddr,
                       size_t n)
{
    if (t->nlines == 0)
        return f->flags & O_NONBLOCK ? -EAGAIN
                                     : ucall_block(c, &t->readable, UNIX_NO_DEADLINE);
    size_t line = t->lines[t->lhead];
    size_t k = n < line ? n : line;
    if (queue_give(t, c, uaddr, k))
        return -EFAULT;
    if (k == line) {
        t->lhead = (t->lhead + 1) % TTY_LINES;
        t->nlines--;
    } else {
        t->lines[t->lhead] = (uint16_t)(line - k);
    }
    return (long)k;
}

/* Raw reads (VMIN, VTIME): how many bytes to give now, or -1 to wait (*deadline says
 * until when) or -2 for "nothing, and do not wait". */
static long raw_ready(const struct tty *t, const struct ucall *c, size_t n, uint64_t *deadline)
{
    size_t vmin = t->t.c_cc[VMIN], vtime = t->t.c_cc[VTIME];
    size_t want = vmin < n ? vmin : n;
    size_t k = t->qlen < n ? t->qlen : n;
    *deadline = UNIX_NO_DEADLINE;
    if (t->qlen && t->qlen >= want)
        return (long)k;
    if (vtime == 0)
        return vmin == 0 ? -2 : -1;
    if (vmin == 0 || t->qlen)
        *deadline = c->started_ns + vtime * 100000000ull;
    return *deadline != UNIX_NO_DEADLINE && unix_now_ns() >= *deadline ? (long)k : -1;
}

static long raw_read(struct tty *t, struct file *f, struct ucall *c, uint64_t uaddr, size_t n)
{
    uint64_t deadline;
    ucall_start_ns(c);                  /* VTIME counts from the first run (raw_ready) */
    long k = raw_ready(t, c, n, &deadline);
    if (k == -2)
        return 0;
    if (k == -1)
        return f->flags & O_NONBLOCK ? -EAGAIN : ucall_block(c, &t->readable, deadline);
    return queue_give(t, c, uaddr, (size_t)k) ? -EFAULT : k;
}

static long tty_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)off;
    struct tty *t = f->priv;
    long stop = job_control(t, c->proc, SIGTTIN);
    if (stop)
        return stop;
    if (n == 0)
        return 0;
    if (t->t.c_lflag & ICANON)
        return canon_read(t, f, c, uaddr, n);
    return raw_read(t, f, c, uaddr, n);
}

/* ---- writing ---- */

static long tty_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)off;
    struct tty *t = f->priv;
    unsigned char chunk[128];
    struct outbuf o = {.len = 0};
    long stop = t->t.c_lflag & TOSTOP ? job_control(t, c->proc, SIGTTOU) : 0;
    if (stop)
        return stop;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof chunk ? n - done : sizeof chunk;
        if (copy_in(c->proc, chunk, uaddr + done, k)) {
            out_flush(&o);
            return done ? (long)done : -EFAULT;
        }
        for (size_t i = 0; i < k; i++)
            out_post(t, &o, chunk[i]);
        done += k;
    }
    out_flush(&o);
    return (long)n;
}

/* sendfile to the tty: the same output processing and job control as write. */
static long tty_write_buf(struct file *f, struct ucall *c, const void *buf, size_t n,
                          uint64_t *off)
{
    (void)off;
    struct tty *t = f->priv;
    struct outbuf o = {.len = 0};
    long stop = t->t.c_lflag & TOSTOP ? job_control(t, c->proc, SIGTTOU) : 0;
    if (stop)
        return stop;
    for (size_t i = 0; i < n; i++)
        out_post(t, &o, ((const unsigned char *)buf)[i]);
    out_flush(&o);
    return (long)n;
}

static bool readable_now(const struct tty *t)
{
    if (t->t.c_lflag & ICANON)
        return t->nlines > 0;
    size_t vmin = t->t.c_cc[VMIN];
    size_t need = vmin && !t->t.c_cc[VTIME] ? vmin : 1;
    return t->qlen >= need;
}

static unsigned tty_poll(struct file *f, struct waitlist **w)
{
    struct tty *t = f->priv;
    if (w)
        *w = &t->readable;
    return POLLOUT | POLLWRNORM | (readable_now(t) ? POLLIN | POLLRDNORM : 0);
}

/* ---- the controlling tty, continued ---- */

unsigned tty_devnum_of(const struct proc *p)
{
    if (!has_ctty(p))
        return 0;
    const struct tty *t = p->ctty;
    return (t->minor & 0xff) | (t->major << 8) | ((t->minor & ~0xffu) << 12);
}

int tty_fg_pgrp_of(const struct proc *p)
{
    return has_ctty(p) && p->ctty->pgrp ? p->ctty->pgrp : -1;
}

long tty_open_ctty(struct file *f, struct ucall *c)
{
    if (!has_ctty(c->proc))
        return -ENXIO;
    f->priv = c->proc->ctty;
    return 0;
}

/* Opening the console never makes it a controlling tty (as on Linux): TIOCSCTTY does. */
long tty_open_console(struct file *f, struct ucall *c)
{
    (void)c;
    f->priv = &console;
    return 0;
}

/* ---- ioctls ---- */

/* Switching canonical mode: raw bytes pending become one complete line; a line being
 * edited becomes readable raw bytes (what Linux's n_tty does). */
static void set_termios(struct tty *t, const struct linux_termios *nt)
{
    bool was = t->t.c_lflag & ICANON, now = nt->c_lflag & ICANON;
    if (was && !now) {
        for (size_t i = 0; i < t->edit_len && t->qlen < TTY_QUEUE; i++)
            queue_push(t, t->edit[i]);
        t->edit_len = t->nlines = t->lhead = 0;
    } else if (!was && now) {
        t->lhead = 0;
        t->nlines = t->qlen ? 1 : 0;
        t->lines[0] = (uint16_t)t->qlen;
    }
    t->t = *nt;
    poll_wake(&t->readable);
}

static long ioctl_setattr(struct tty *t, struct ucall *c, unsigned long cmd, uint64_t arg)
{
    struct linux_termios nt;
    long stop = job_control(t, c->proc, SIGTTOU);
    if (stop)
        return stop;
    if (copy_in(c->proc, &nt, arg, sizeof nt))
        return -EFAULT;
    if (cmd == TCSETSF)
        flush_input(t);
    set_termios(t, &nt);            /* TCSETSW: console output is already written */
    return 0;
}

static long ioctl_setwinsz(struct tty *t, struct ucall *c, uint64_t arg)
{
    struct linux_winsize ws;
    if (copy_in(c->proc, &ws, arg, sizeof ws))
        return -EFAULT;
    if (memcmp(&ws, &t->ws, sizeof ws) && t->pgrp > 0)
        signal_send_pgrp(t->pgrp, SIGWINCH);
    t->ws = ws;
    return 0;
}

static long ioctl_setpgrp(struct tty *t, struct ucall *c, uint64_t arg)
{
    int32_t pgid;
    if (!is_ctty_of(t, c->proc))
        return -ENOTTY;
    long stop = job_control(t, c->proc, SIGTTOU);
    if (stop)
        return stop == -EIO ? -ENOTTY : stop;
    if (copy_in(c->proc, &pgid, arg, sizeof pgid))
        return -EFAULT;
    if (pgid < 0)
        return -EINVAL;
    long sid = proc_pgrp_session(pgid);
    if (sid < 0)
        return -ESRCH;
    if (sid != t->session)
        return -EPERM;
    t->pgrp = pgid;
    return 0;
}

/* TIOCSCTTY: a session leader without a controlling tty takes this one; one that belongs
 * to another session only when arg is 1 (the caller is root: it may steal). */
static long ioctl_setctty(struct tty *t, struct proc *p, uint64_t arg)
{
    bool leader = p->pid == p->sid;
    if (leader && t->session == p->sid)
        return 0;
    if (!leader || has_ctty(p))
        return -EPERM;
    if (t->session && arg != 1)
        return -EPERM;
    t->session = p->sid;
    t->pgrp = p->pgid;
    p->ctty = t;
    return 0;
}

/* TIOCNOTTY: the caller gives up its controlling tty; a session leader ends it for the
 * whole session, and its foreground group gets SIGHUP and SIGCONT. */
static long ioctl_noctty(struct tty *t, struct proc *p)
{
    if (!is_ctty_of(t, p))
        return -ENOTTY;
    if (p->pid == p->sid) {
        if (t->pgrp > 0) {
            signal_send_pgrp(t->pgrp, SIGHUP);
            signal_send_pgrp(t->pgrp, SIGCONT);
        }
        t->session = t->pgrp = 0;
    }
    p->ctty = NULL;
    return 0;
}

static long put_int(struct ucall *c, uint64_t arg, int32_t v)
{
    return copy_out(c->proc, arg, &v, sizeof v);
}

static long ioctl_ctty_query(struct tty *t, struct ucall *c, unsigned long cmd, uint64_t arg)
{
    if (!is_ctty_of(t, c->proc))
        return -ENOTTY;
    return put_int(c, arg, cmd == TIOCGPGRP ? t->pgrp : t->session);
}

static long ioctl_flush(struct tty *t, struct ucall *c, uint64_t arg)
{
    long stop = job_control(t, c->proc, SIGTTOU);
    if (stop)
        return stop;
    if (arg > TCIOFLUSH)
        return -EINVAL;
    if (arg != TCOFLUSH)
        flush_input(t);
    return 0;
}

static long tty_ioctl(struct file *f, struct ucall *c, unsigned long cmd, uint64_t arg)
{
    struct tty *t = f->priv;
    switch (cmd) {
    case TCGETS:
        return copy_out(c->proc, arg, &t->t, sizeof t->t);
    case TCSETS:
    case TCSETSW:
    case TCSETSF:
        return ioctl_setattr(t, c, cmd, arg);
    case TIOCGWINSZ:
        return copy_out(c->proc, arg, &t->ws, sizeof t->ws);
    case TIOCSWINSZ:
        return ioctl_setwinsz(t, c, arg);
    case TIOCGPGRP:
    case TIOCGSID:
        return ioctl_ctty_query(t, c, cmd, arg);
    case TIOCSPGRP:
        return ioctl_setpgrp(t, c, arg);
    case TIOCSCTTY:
        return ioctl_setctty(t, c->proc, arg);
    case TIOCNOTTY:
        return ioctl_noctty(t, c->proc);
    case FIONREAD:
        return put_int(c, arg, (int32_t)t->qlen);
    case TIOCOUTQ:
        return put_int(c, arg, 0);
    case TCFLSH:
        return ioctl_flush(t, c, arg);
    default:
        return -ENOTTY;
    }
}

const struct file_ops tty_file_ops = {
    .read = tty_read,
    .write = tty_write,
    .write_buf = tty_write_buf,
    .poll = tty_poll,
    .ioctl = tty_ioctl,
};

_Static_assert(sizeof(struct linux_termios) == 36, "the kernel's struct termios is 36 bytes");
_Static_assert(sizeof(struct linux_winsize) == 8, "struct winsize is 8 bytes");
