/* ondol libc: character classes (ASCII only, no locales). */
#ifndef ONDOL_CTYPE_H
#define ONDOL_CTYPE_H

int isdigit(int c);
int isxdigit(int c);
int isalpha(int c);
int isalnum(int c);
int isupper(int c);
int islower(int c);
int isspace(int c);
int isblank(int c);
int iscntrl(int c);
int isprint(int c);
int isgraph(int c);
int ispunct(int c);
int toupper(int c);
int tolower(int c);

#endif
