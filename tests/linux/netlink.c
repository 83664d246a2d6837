/* netlink.c - AF_NETLINK/NETLINK_ROUTE sockets: the behaviour that does not depend on the
 * machine's interfaces (docs/net.md, "Netlink"): socket and bind errors, port ids, and
 * how malformed or unsupported requests are answered (NLMSG_ERROR with the request, an
 * acknowledgement, or nothing), several messages in one send, MSG_TRUNC and MSG_PEEK on
 * an answer, EPERM for a change without privilege. The dumps' contents depend on the
 * interfaces: tests/test_net_sockets.py checks them with busybox ip against Linux.
 */
#include "lt.h"
#include "nl.h"
#include <stdint.h>
#include <sys/socket.h>

/* Send one message: a header of `type` and `flags`, `len` in nlmsg_len, then body. */
static long send_msg(int fd, unsigned type, unsigned flags, unsigned len, const void *body,
		     size_t n)
{
	unsigned char buf[256] = {0};
	struct nlmsghdr h = {.nlmsg_len = len, .nlmsg_type = (unsigned short)type,
			     .nlmsg_flags = (unsigned short)flags, .nlmsg_seq = 77};
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, body, n);
	return send(fd, buf, sizeof h + n, 0);
}

/* The next answer, described: "none", or "error ENAME len L/N flags F seq S" for
 * NLMSG_ERROR (ENAME "0" for an acknowledgement; L its nlmsg_len, N the datagram's length,
 * padded to 4: the request it carries is L - 36 bytes), or "type T". */
static void answer(const char *name, int fd, const char *want)
{
	unsigned char buf[1024];
	char got[96];
	long n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
	struct nlmsghdr h;
	if (n < (long)sizeof h) {
		snprintf(got, sizeof got, n < 0 && errno == EAGAIN ? "none" : "bad %ld", n);
		lt_str(name, got, want);
		return;
	}
	memcpy(&h, buf, sizeof h);
	if (h.nlmsg_type == NLMSG_ERROR && n >= 36) {
		int e;
		memcpy(&e, buf + 16, sizeof e);
		snprintf(got, sizeof got, "error %s len %u/%ld flags %x seq %u",
			 e ? lt_errname(-e) : "0", h.nlmsg_len, n, h.nlmsg_flags, h.nlmsg_seq);
	} else {
		snprintf(got, sizeof got, "type %u", h.nlmsg_type);
	}
	lt_str(name, got, want);
}

static void sockets_and_ports(void)
{
	ERR("socket_stream", socket(AF_NETLINK, SOCK_STREAM, NETLINK_ROUTE), ESOCKTNOSUPPORT);
	ERR("socket_proto", socket(AF_NETLINK, SOCK_RAW, 99), EPROTONOSUPPORT);
	int fd = socket(AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE);
	OK("socket_dgram", fd);
	struct sockaddr_nl a = {.nl_family = AF_NETLINK}, b;
	ERR("bind_short", bind(fd, (struct sockaddr *)&a, 8), EINVAL);
	socklen_t len = sizeof b;
	VAL("name_unbound", getsockname(fd, (struct sockaddr *)&b, &len) == 0 && b.nl_pid == 0, 1);
	OK("bind", bind(fd, (struct sockaddr *)&a, sizeof a));
	len = sizeof b;
	OK("getsockname", getsockname(fd, (struct sockaddr *)&b, &len));
	VAL("name_len", len, 12);
	lt_true("port_is_pid", b.nl_pid == (unsigned)getpid());
	int fd2 = nl_open();
	len = sizeof b;
	getsockname(fd2, (struct sockaddr *)&b, &len);
	lt_true("second_port_negative", (int)b.nl_pid < 0);
	a.nl_pid = (unsigned)getpid();
	int fd3 = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	ERR("bind_in_use", bind(fd3, (struct sockaddr *)&a, sizeof a), EADDRINUSE);
	a.nl_pid = 12345678;
	ERR("sendto_other_port", sendto(fd3, "x", 1, 0, (struct sockaddr *)&a, sizeof a),
	    ECONNREFUSED);
	ERR("listen", listen(fd3, 1), EOPNOTSUPP);
	close(fd);
	close(fd2);
	close(fd3);
}

/* A request whose body is body_len zero bytes (nlmsg_len len), and its one answer. */
struct zero_body_case {
	const char *name;
	unsigned type, flags, len;
	size_t body_len;
	const char *want;
};

static const struct zero_body_case zero_body_cases[] = {
	{"len_beyond_data", RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 400, 4, "none"},
	{"len_below_header", RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 8, 4, "none"},
	{"no_request_flag", RTM_GETLINK, NLM_F_DUMP, 20, 4, "none"},
	{"no_request_flag_ack", RTM_GETLINK, NLM_F_ACK, 20, 4,
	 "error 0 len 36/36 flags 100 seq 77"},
	{"control_type_ack", NLMSG_NOOP, NLM_F_REQUEST | NLM_F_ACK, 16, 0,
	 "error 0 len 36/36 flags 100 seq 77"},
	{"no_rtgenmsg_ack", RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, 16, 0,
	 "error 0 len 36/36 flags 100 seq 77"},
	{"getlink_neither", RTM_GETLINK, NLM_F_REQUEST, 32, 16,
	 "error EINVAL len 52/52 flags 0 seq 77"},
};

static void requests(void)
{
	int fd = nl_open();
	unsigned char body[32] = {0};
	send_msg(fd, 200, NLM_F_REQUEST, 20, body, 4);
	answer("type_above_max", fd, "error EOPNOTSUPP len 40/40 flags 0 seq 77");
	answer("nothing_more", fd, "none");
	for (size_t i = 0; i < sizeof zero_body_cases / sizeof zero_body_cases[0]; i++) {
		const struct zero_body_case *c = &zero_body_cases[i];
		send_msg(fd, c->type, c->flags, c->len, body, c->body_len);
		answer(c->name, fd, c->want);
	}
	struct ifinfomsg ifi = {.ifi_index = 0x7fff0000};
	send_msg(fd, RTM_GETLINK, NLM_F_REQUEST, 32, &ifi, sizeof ifi);
	answer("getlink_no_index", fd, "error ENODEV len 52/52 flags 0 seq 77");
	unsigned char named[16 + 16] = {0};
	memcpy(named + 16, "\x0e\x00\x03\x00" "nosuchif0", 14);
	send_msg(fd, RTM_GETLINK, NLM_F_REQUEST, 16 + 30, named, 30);
	answer("getlink_no_name", fd, "error ENODEV len 68/68 flags 0 seq 77");
	memcpy(named + 16, "\x40\x00\x03\x00", 4);             /* longer than the message */
	send_msg(fd, RTM_GETLINK, NLM_F_REQUEST, 16 + 30, named, 30);
	answer("getlink_bad_attr", fd, "error EINVAL len 68/68 flags 0 seq 77");

	/* two messages in one send: answered in order */
	unsigned char two[40] = {0};
	struct nlmsghdr h1 = {.nlmsg_len = 20, .nlmsg_type = 200, .nlmsg_flags = NLM_F_REQUEST,
			      .nlmsg_seq = 1};
	struct nlmsghdr h2 = {.nlmsg_len = 16, .nlmsg_type = NLMSG_NOOP,
			      .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = 2};
	memcpy(two, &h1, sizeof h1);
	memcpy(two + 20, &h2, sizeof h2);
	VAL("send_two", send(fd, two, 36, 0), 36);
	answer("first_of_two", fd, "error EOPNOTSUPP len 40/40 flags 0 seq 1");
	answer("second_of_two", fd, "error 0 len 36/36 flags 100 seq 2");

	/* MSG_PEEK keeps an answer; a short buffer with MSG_TRUNC gets its whole length */
	send_msg(fd, 200, NLM_F_REQUEST, 20, body, 4);
	unsigned char small[8];
	VAL("peek", recv(fd, small, sizeof small, MSG_PEEK | MSG_DONTWAIT), 8);
	VAL("trunc", recv(fd, small, sizeof small, MSG_TRUNC | MSG_DONTWAIT), 40);
	answer("trunc_dropped_rest", fd, "none");
	close(fd);
}

/* A change (RTM_NEWROUTE) from a process without privilege: EPERM. */
static void unprivileged(int fd)
{
	struct rtmsg rt = {.rtm_family = AF_INET};
	send_msg(fd, RTM_NEWROUTE, NLM_F_REQUEST | NLM_F_ACK, 28, &rt, sizeof rt);
	answer("newroute_unprivileged", fd, "error EPERM len 48/48 flags 0 seq 77");
}

int main(void)
{
	sockets_and_ports();
	requests();
	nl_unprivileged(unprivileged);
	return lt_done();
}
