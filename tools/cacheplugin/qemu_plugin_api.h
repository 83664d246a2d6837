/*
 * Declarations of the QEMU TCG plugin API, written for ondol, in the one of two versions
 * that the QEMU in use takes; the build chooses it (plugin.mk passes -DCACHESIM_QEMU_API):
 *  - version 1: QEMU 4.2 .. 8.2, Debian 12's QEMU 7.2 (accepts versions 0..1);
 *  - version 3: QEMU 9.0 and later, the QEMU 10.0 that scripts/qemu.sh unpacks (10.0
 *    accepts versions 2..4; 2 removed v1's one-word inline counter and
 *    qemu_plugin_n_max_vcpus, 3 made qemu_plugin_insn_data copy into a buffer).
 *
 * No Debian package ships QEMU's qemu-plugin.h, so this file declares only what cachesim
 * uses, from the documented facts of the interface: function names and signatures, enum
 * values and the exported `qemu_plugin_version` symbol. Every function declared for a
 * version is exported by that QEMU (checked with `nm -D ... | grep qemu_plugin`;
 * tests/cachemodel/test_cachemodel_load.py re-checks it against the QEMU in use, on the
 * preprocessed header), and the loader accepts the plugin (same test).
 *
 * Facts that matter for correctness:
 *  - QEMU refuses a plugin whose qemu_plugin_version lies outside its [min, cur].
 *  - enum qemu_plugin_mem_rw: R = 1, W = 2, RW = 3; enum qemu_plugin_cb_flags: NO_REGS = 0.
 *  - qemu_plugin_insn_data() returns a pointer to the opcode bytes that is valid only
 *    inside the translation callback (v1); from v3 it copies up to len bytes into dest
 *    and returns how many (also only inside the translation callback).
 *  - qemu_plugin_insn_haddr() returns a HOST pointer to the bytes, not a guest address.
 *  - qemu_plugin_get_hwaddr() returns a handle valid only inside the memory callback.
 *  - v1's inline add targets one word shared by all vCPUs; from v2 the target is an entry
 *    of a scoreboard, one element per vCPU (qemu_plugin_u64: scoreboard and offset).
 *  - From v2 a callback registered with QEMU_PLUGIN_CB_R_REGS may read the registers of
 *    the vCPU running it (qemu_plugin_read_register, which APPENDS the value's bytes, in
 *    the target's order, to a glib GByteArray and returns how many, or -1). The handles
 *    come from qemu_plugin_get_registers(), callable only in vCPU context (the vCPU init
 *    callback): a glib GArray of qemu_plugin_reg_descriptor, names as in QEMU's gdb XML
 *    (x86-64: "gs_base", "k_gs_base"). The names are interned: freeing the array alone is
 *    right. QEMU links glib, so the plugin calls the few glib functions it needs from it;
 *    GArray and GByteArray are glib's public structs (data pointer, then length).
 */
#ifndef CACHESIM_QEMU_PLUGIN_API_H
#define CACHESIM_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#ifndef CACHESIM_QEMU_API
#error "build with -DCACHESIM_QEMU_API=1 or 3 (tools/cacheplugin/plugin.mk chooses it)"
#endif
#define QEMU_PLUGIN_VERSION CACHESIM_QEMU_API

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;

/* What QEMU tells the plugin at install time. */
typedef struct qemu_info_t {
    const char *target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    };
} qemu_info_t;

enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS = 0,
    QEMU_PLUGIN_CB_R_REGS = 1,
    QEMU_PLUGIN_CB_RW_REGS = 2,
};

/* Inline operations: QEMU adds imm to a 64-bit word in the generated code, with no call
 * (v1: one word for all vCPUs; from v2: the word of the executing vCPU in a scoreboard). */
enum qemu_plugin_op {
    QEMU_PLUGIN_INLINE_ADD_U64 = 0,
};

enum qemu_plugin_mem_rw {
    QEMU_PLUGIN_MEM_R = 1,
    QEMU_PLUGIN_MEM_W = 2,
    QEMU_PLUGIN_MEM_RW = 3,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);

/* The plugin defines these two; QEMU looks them up with dlsym. */
extern QEMU_PLUGIN_EXPORT int qemu_plugin_version;
QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv);

/* Registration. */
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
#if QEMU_PLUGIN_VERSION == 1
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
                                                enum qemu_plugin_op op, void *ptr,
                                                uint64_t imm);
#else
struct qemu_plugin_scoreboard;
typedef struct {
    struct qemu_plugin_scoreboard *score;
    size_t offset;
} qemu_plugin_u64;

struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t element_size);
uint64_t qemu_plugin_u64_get(qemu_plugin_u64 entry, unsigned int vcpu_index);
void qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(struct qemu_plugin_insn *insn,
                                                         enum qemu_plugin_op op,
                                                         qemu_plugin_u64 entry, uint64_t imm);

/* Registers (v2 on), with the glib types and functions they take. */
typedef struct {
    char *data;
    unsigned int len;
} GArray;
typedef struct {
    uint8_t *data;
    unsigned int len;
} GByteArray;
GByteArray *g_byte_array_new(void);
char *g_array_free(GArray *array, int free_segment);

struct qemu_plugin_register;
typedef struct {
    struct qemu_plugin_register *handle;
    const char *name;
    const char *feature;
} qemu_plugin_reg_descriptor;

void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                          qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
GArray *qemu_plugin_get_registers(void);
int qemu_plugin_read_register(struct qemu_plugin_register *handle, GByteArray *buf);
#endif
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
                                      qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
                                    void *userdata);

/* Translation-time queries. */
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
#if QEMU_PLUGIN_VERSION == 1
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
#else
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest, size_t len);
#endif
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);

/* Memory-callback queries. */
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

/* Miscellaneous. */
void qemu_plugin_outs(const char *string);

#endif
