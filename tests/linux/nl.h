/* nl.h - Linux's netlink and rtnetlink formats for the suite's netlink programs
 * (netlink.c, netconf.c): linux/netlink.h and linux/rtnetlink.h stated here, since musl
 * has no kernel headers, and not shared with the UNIX server, so that the tests state
 * Linux's format themselves. Include after lt.h.
 */
#ifndef LT_NL_H
#define LT_NL_H
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define NETLINK_ROUTE 0
#define NLMSG_NOOP 1
#define NLMSG_ERROR 2
#define NLM_F_REQUEST 0x1
#define NLM_F_ACK 0x4
#define NLM_F_EXCL 0x200
#define NLM_F_CREATE 0x400
#define NLM_F_DUMP 0x300
#define RTM_GETLINK 18
#define RTM_NEWADDR 20
#define RTM_DELADDR 21
#define RTM_NEWROUTE 24
#define RTM_DELROUTE 25
#define RTM_GETROUTE 26
#define IFA_LOCAL 2
#define RTA_DST 1
#define RTA_OIF 4
#define RTA_GATEWAY 5

struct sockaddr_nl {
	unsigned short nl_family, nl_pad;
	uint32_t nl_pid, nl_groups;
};
struct nlmsghdr {
	uint32_t nlmsg_len;
	uint16_t nlmsg_type, nlmsg_flags;
	uint32_t nlmsg_seq, nlmsg_pid;
};
struct ifinfomsg {
	unsigned char ifi_family, ifi_pad;
	unsigned short ifi_type;
	int ifi_index;
	unsigned ifi_flags, ifi_change;
};
struct ifaddrmsg {
	unsigned char ifa_family, ifa_prefixlen, ifa_flags, ifa_scope;
	unsigned ifa_index;
};
struct rtmsg {
	unsigned char rtm_family, rtm_dst_len, rtm_src_len, rtm_tos, rtm_table, rtm_protocol,
		rtm_scope, rtm_type;
	unsigned rtm_flags;
};

/* A bound NETLINK_ROUTE socket, or -1. */
static inline int nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	struct sockaddr_nl a = {.nl_family = AF_NETLINK};
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0)
		return -1;
	return fd;
}

/* Run cases on a new netlink socket in a child that has dropped privilege (uid 65534, no
 * CAP_NET_ADMIN); the child's failures count here as one failed case. */
static inline void nl_unprivileged(void (*cases)(int fd))
{
	pid_t p = fork();
	if (p == 0) {
		lt_failed = 0;
		if (setuid(65534) != 0)
			_exit(2);
		cases(nl_open());
		_exit(lt_failed ? 1 : 0);
	}
	int st = 0;
	waitpid(p, &st, 0);
	lt_cases++;
	lt_failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
#endif
