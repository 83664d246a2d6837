/* netconf.c - changing the network configuration: the checks rtnetlink (RTM_NEWADDR,
 * RTM_DELADDR, RTM_NEWROUTE, RTM_DELROUTE, RTM_GETROUTE) and the interface and route
 * ioctls make before they change anything, in Linux's order (docs/net.md, "Changing the
 * configuration"): bad lengths, families, unknown interfaces, a process without
 * privilege (the order of the checks: EPERM first). Every case fails, so the machine's configuration stays as it was; the
 * successful changes are compared with Linux by tests/test_net_config.py with busybox.
 */
#include "lt.h"
#include "nl.h"
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* An interface index no interface has; struct ifreq with an IPv4 address (musl's
 * sys/ioctl.h has the SIOC* numbers). */
#define NO_INDEX 0x7fff0000
struct ifreq_in {
	char name[16];
	unsigned short family;
	unsigned char data[22];
};

/* An attribute of a request: type, then vlen bytes of value (type 0 ends a list). */
struct attr {
	unsigned short type, vlen;
	uint32_t value;
};

/* Send type/flags with fixed (fixed_len bytes) and the attributes; answer: the errno
 * name of the NLMSG_ERROR that comes back ("0": an acknowledgement), or "type T". */
static void request(const char *name, int fd, unsigned type, unsigned flags, const void *fixed,
		    unsigned fixed_len, const struct attr *attrs, const char *want)
{
	unsigned char buf[256] = {0};
	unsigned len = 16 + fixed_len;
	memcpy(buf + 16, fixed, fixed_len);
	for (; attrs && attrs->type; attrs++) {
		unsigned short alen = (unsigned short)(4 + attrs->vlen);
		memcpy(buf + len, &alen, 2);
		memcpy(buf + len + 2, &attrs->type, 2);
		memcpy(buf + len + 4, &attrs->value, 4);
		len += (alen + 3u) & ~3u;
	}
	struct nlmsghdr h = {.nlmsg_len = len, .nlmsg_type = (unsigned short)type,
			     .nlmsg_flags = (unsigned short)(flags | NLM_F_REQUEST | NLM_F_ACK),
			     .nlmsg_seq = 5};
	memcpy(buf, &h, sizeof h);
	char got[64];
	if (send(fd, buf, len, 0) != (long)len) {
		snprintf(got, sizeof got, "send %s", lt_errname(errno));
	} else {
		unsigned char in[1024];
		long n = recv(fd, in, sizeof in, MSG_DONTWAIT);
		struct nlmsghdr r;
		memcpy(&r, in, sizeof r);
		int e = 0;
		memcpy(&e, in + 16, sizeof e);
		if (n < 20)
			snprintf(got, sizeof got, "none");
		else if (r.nlmsg_type == NLMSG_ERROR)
			snprintf(got, sizeof got, "%s", e ? lt_errname(-e) : "0");
		else
			snprintf(got, sizeof got, "type %u", r.nlmsg_type);
	}
	lt_str(name, got, want);
}

#define ADDR(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

static void rtnetlink_checks(int fd)
{
	struct ifaddrmsg ifa = {.ifa_family = AF_INET, .ifa_prefixlen = 24, .ifa_index = NO_INDEX};
	const struct attr local[] = {{IFA_LOCAL, 4, ADDR(10, 201, 0, 9)}, {0, 0, 0}};
	const struct attr short_local[] = {{IFA_LOCAL, 2, ADDR(10, 201, 0, 9)}, {0, 0, 0}};
	request("newaddr_short", fd, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, 4, NULL, "EINVAL");
	request("newaddr_no_local", fd, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof ifa,
		NULL, "EINVAL");
	request("newaddr_no_index", fd, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof ifa,
		local, "ENODEV");
	request("newaddr_short_local", fd, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa,
		sizeof ifa, short_local, "ERANGE");
	ifa.ifa_prefixlen = 33;
	request("newaddr_prefix_33", fd, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, &ifa, sizeof ifa,
		local, "EINVAL");
	ifa.ifa_family = AF_UNSPEC;
	request("newaddr_unspec", fd, RTM_NEWADDR, NLM_F_CREATE, &ifa, sizeof ifa, local,
		"EOPNOTSUPP");
	ifa = (struct ifaddrmsg){.ifa_family = AF_INET, .ifa_prefixlen = 24, .ifa_index = NO_INDEX};
	request("deladdr_short", fd, RTM_DELADDR, 0, &ifa, 4, NULL, "EINVAL");
	request("deladdr_no_index", fd, RTM_DELADDR, 0, &ifa, sizeof ifa, local, "ENODEV");

	struct rtmsg rt = {.rtm_family = AF_INET, .rtm_table = 254, .rtm_protocol = 3,
			   .rtm_type = 1};
	const struct attr no_oif[] = {{RTA_OIF, 4, NO_INDEX}, {0, 0, 0}};
	const struct attr via[] = {{RTA_GATEWAY, 4, ADDR(10, 201, 0, 1)}, {0, 0, 0}};
	const struct attr via_no_oif[] = {{RTA_GATEWAY, 4, ADDR(10, 201, 0, 1)},
					  {RTA_OIF, 4, NO_INDEX}, {0, 0, 0}};
	const struct attr absent[] = {{RTA_DST, 4, ADDR(10, 202, 0, 0)}, {0, 0, 0}};
	const struct attr short_dst[] = {{RTA_DST, 2, ADDR(10, 202, 0, 0)}, {0, 0, 0}};
	request("newroute_short", fd, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rt, 4, NULL,
		"EINVAL");
	request("newroute_no_oif", fd, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rt, sizeof rt,
		no_oif, "ENODEV");
	/* the next hop is checked first: no route to the gateway (10.201.0.1 is on no
	 * subnet here), with or without an unknown interface */
	request("newroute_gw_unreachable", fd, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rt,
		sizeof rt, via, "ENETUNREACH");
	request("newroute_gw_no_oif", fd, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, &rt, sizeof rt,
		via_no_oif, "ENETUNREACH");
	request("delroute_short", fd, RTM_DELROUTE, 0, &rt, 4, NULL, "EINVAL");
	rt.rtm_dst_len = 16;
	request("delroute_absent", fd, RTM_DELROUTE, 0, &rt, sizeof rt, absent, "ESRCH");
	rt.rtm_family = AF_UNSPEC;
	request("newroute_unspec", fd, RTM_NEWROUTE, NLM_F_CREATE, &rt, sizeof rt, absent,
		"EOPNOTSUPP");
	rt.rtm_family = AF_INET;
	request("getroute_short", fd, RTM_GETROUTE, 0, &rt, 4, NULL, "EINVAL");
	rt = (struct rtmsg){.rtm_family = AF_INET};
	request("getroute_short_dst", fd, RTM_GETROUTE, 0, &rt, sizeof rt, short_dst, "ERANGE");
}

/* SIOCSIFFLAGS works on any socket, a netlink one too (the suite's ondol has no network
 * server for AF_INET sockets): an unknown device is ENODEV. The other interface and route
 * ioctls are AF_INET's: tests/test_net_config.py compares them with busybox. */
static void ioctl_checks(int fd)
{
	struct ifreq_in r = {.name = "nosuchif0", .family = AF_INET};
	ERR("sifflags_no_device", ioctl(fd, SIOCSIFFLAGS, &r), ENODEV);
}

/* Without privilege (uid 65534, no CAP_NET_ADMIN): EPERM before anything else. */
static void unprivileged(int fd)
{
	struct ifaddrmsg ifa = {.ifa_family = AF_INET, .ifa_index = NO_INDEX};
	request("newaddr_unprivileged", fd, RTM_NEWADDR, 0, &ifa, 4, NULL, "EPERM");
	request("deladdr_unprivileged", fd, RTM_DELADDR, 0, &ifa, sizeof ifa, NULL, "EPERM");
	struct rtmsg rt = {.rtm_family = AF_INET};
	request("delroute_unprivileged", fd, RTM_DELROUTE, 0, &rt, sizeof rt, NULL, "EPERM");
	struct ifreq_in r = {.name = "nosuchif0", .family = AF_INET};
	ERR("sifflags_unprivileged", ioctl(fd, SIOCSIFFLAGS, &r), EPERM);
}

int main(void)
{
	int fd = nl_open();
	OK("socket", fd);
	rtnetlink_checks(fd);
	ioctl_checks(fd);
	nl_unprivileged(unprivileged);
	return lt_done();
}
