/*
 * execve of "#!" scripts (docs/unix.md, "Processes"), with Linux 6.1's binfmt_script rules:
 * the line is read from the file's first 256 bytes (BINPRM_BUF_SIZE, zeros beyond the
 * file's end); its interpreter name ends at the first space, tab or NUL, and what follows
 * (without leading or trailing spaces and tabs) is one optional argument, spaces and all.
 * A line with no name, or one with no newline in those 256 bytes whose name may be cut
 * short, is -ENOEXEC. The interpreter runs with argv = {name, [argument,] the script's
 * path as opened, argv[1]...}; execfn (AT_EXECFN, the process's name) stays the path the
 * caller gave. The interpreter may itself be a script, up to EXEC_MAX_DEPTH deep (exec.c).
 */
#include "devices.h"

#define SCRIPT_BUF 256               /* Linux's BINPRM_BUF_SIZE */

bool exec_is_script(const struct inode *ino)
{
    return ino->size >= 2 && ino->data[0] == '#' && ino->data[1] == '!';
}

static bool spacetab(char c) { return c == ' ' || c == '\t'; }

/* The first character in [first, last] that is not a space or tab, or NULL. */
static char *next_non_spacetab(char *first, const char *last)
{
    for (; first <= last; first++)
        if (!spacetab(*first))
            return first;
    return NULL;
}

/* The first space, tab or NUL in [first, last], or NULL. */
static char *next_terminator(char *first, const char *last)
{
    for (; first <= last; first++)
        if (spacetab(*first) || !*first)
            return first;
    return NULL;
}

/* Parse the "#!" line in buf (SCRIPT_BUF bytes, changed in place): the interpreter's
 * name and its argument (NULL when none), or -ENOEXEC. */
static long parse_line(char *buf, char **name, char **arg)
{
    char *buf_end = buf + SCRIPT_BUF - 1, *i_end = NULL;
    for (char *s = buf; s <= buf_end && !i_end; s++)
        if (*s == '\n')
            i_end = s;
    if (!i_end) {
        char *first = next_non_spacetab(buf + 2, buf_end);
        if (!first || !next_terminator(first, buf_end))
            return -ENOEXEC;          /* all blanks, or a name that may be truncated */
        i_end = buf_end;
    }
    while (spacetab(i_end[-1]))
        i_end--;
    char *i_name = next_non_spacetab(buf + 2, i_end);
    if (!i_name || i_name == i_end)
        return -ENOEXEC;              /* no interpreter name */
    char *i_sep = next_terminator(i_name, i_end), *i_arg = NULL;
    if (i_sep && *i_sep)
        i_arg = next_non_spacetab(i_sep, i_end);
    *i_end = 0;
    if (i_sep)
        *i_sep = 0;
    *name = i_name;
    *arg = i_arg;
    return 0;
}

struct script_args {
    char line[SCRIPT_BUF];
    const char *argv[];               /* name, [arg,] file, the caller's argv[1]... */
};

long exec_script(struct proc *p, const struct uthread *caller, const struct inode *script,
                 const char *file, const char *execfn, const char *const *argv,
                 const char *const *envp, int depth)
{
    size_t argc = 0;
    while (argv[argc])
        argc++;
    struct script_args *s = unix_alloc(sizeof(*s) + (argc + 4) * sizeof(char *));
    if (!s)
        return -ENOMEM;
    uint64_t n = script->size < SCRIPT_BUF ? script->size : SCRIPT_BUF;
    vfs_memcpy(s->line, script->data, n);
    char *name, *arg;
    long r = parse_line(s->line, &name, &arg);
    if (r == 0) {
        size_t k = 0;
        s->argv[k++] = name;
        if (arg)
            s->argv[k++] = arg;
        s->argv[k++] = file;
        for (size_t i = 1; i < argc; i++)   /* argv[0] is dropped, as remove_arg_zero */
            s->argv[k++] = argv[i];
        s->argv[k] = NULL;
        r = exec_file(p, caller, name, execfn, s->argv, envp, depth + 1);
    }
    unix_free(s);
    return r;
}
