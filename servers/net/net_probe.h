/*
 * P3's per-layer probes (docs/net.md, "P3's per-layer cost in QEMU"): one hook at each
 * layer boundary of the stack. NET_PROBE_ENTER(layer) marks the start of a layer's own
 * work, NET_PROBE_LEAVE(layer) its end (back to whoever called it). The platform charges
 * the instructions in between to the innermost layer entered, so nested layers are not
 * counted twice (net_probe_enter/net_probe_leave, implemented by the network server,
 * servers/net/netsrv.c, with pcnt slots).
 *
 * Only the server builds define NET_LAYER_PROBES (servers/net/net.mk); in the hosted builds and
 * libnet.a the hooks are empty, so the stack needs no platform function for them.
 */
#ifndef ONDOL_NET_PROBE_H
#define ONDOL_NET_PROBE_H

/* P3's modules. The order is the slot order the platform uses (first slot + layer). */
enum net_layer {
    NET_L_SOCK,       /* socket send/receive: the copy between the caller and the rings */
    NET_L_TCP_OUT,    /* tcp_output: what to send, header, checksum */
    NET_L_IP_OUT,     /* ip_output: header, checksum, next hop (ARP lookup) */
    NET_L_DRV_OUT,    /* ether_output and the driver's send */
    NET_L_DRV_IN,     /* net_input: the driver's copy into an mbuf, Ethernet input */
    NET_L_IP_IN,      /* ip_input: checks and dispatch */
    NET_L_TCP_IN,     /* tcp_input: checksum, ACK processing and buffer release, append */
    NET_LAYERS
};

#ifdef NET_LAYER_PROBES
void net_probe_enter(enum net_layer layer);
void net_probe_leave(enum net_layer layer);
#define NET_PROBE_ENTER(layer) net_probe_enter(layer)
#define NET_PROBE_LEAVE(layer) net_probe_leave(layer)
#else
#define NET_PROBE_ENTER(layer) ((void)0)
#define NET_PROBE_LEAVE(layer) ((void)0)
#endif
#endif
