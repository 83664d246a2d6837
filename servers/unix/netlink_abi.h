/*
 * Linux's netlink message header values (uapi linux/netlink.h, linux/rtnetlink.h): the
 * facts netlink.c answers by and its hosted test (host/test_netlink.c) checks against.
 */
#ifndef UNIX_NETLINK_ABI_H
#define UNIX_NETLINK_ABI_H

#define NLMSG_ERROR 2
#define NLMSG_DONE 3
#define NLMSG_MIN_TYPE 0x10
#define NLM_F_REQUEST 0x1
#define NLM_F_MULTI 0x2
#define NLM_F_ACK 0x4
#define NLM_F_DUMP 0x300           /* NLM_F_ROOT | NLM_F_MATCH */
#define NLM_F_CAPPED 0x100
#define NLM_F_REPLACE 0x100        /* NEW requests' flags */
#define NLM_F_EXCL 0x200
#define NLM_F_CREATE 0x400
#define RTM_NEWLINK 16
#define RTM_GETLINK 18
#define RTM_NEWADDR 20
#define RTM_DELADDR 21
#define RTM_GETADDR 22
#define RTM_NEWROUTE 24
#define RTM_DELROUTE 25
#define RTM_GETROUTE 26
#define RTM_NEWNEIGH 28
#define RTM_GETNEIGH 30
#define RTM_MAX 123                /* Linux 6.1's: types above it are EOPNOTSUPP */

#endif
