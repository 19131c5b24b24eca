/**
 * A seccomp-BPF filter for the code sandbox, in the raw form bubblewrap's `--seccomp FD` reads
 * (an array of `struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}`, little-endian, 8 bytes each;
 * see seccomp(2) and linux/filter.h).
 *
 * It makes these system calls fail with EPERM and allows everything else:
 * - socket, socketpair: no sockets of any kind (the namespaces already hide the network, host
 *   unix sockets and abstract sockets; this also refuses socket pairs inside the sandbox);
 * - io_uring_setup/enter/register: io_uring can open sockets and files without those calls;
 * - add_key, request_key, keyctl: kernel keyrings are not namespaced by the mount namespace;
 * - bpf, perf_event_open, userfaultfd: kernel attack surface no test program needs.
 * System calls of another ABI (x32 on x86-64, i386 through int 0x80) fail with EPERM as well.
 * Supported architectures: x86-64 and aarch64; elsewhere `seccompFilter()` returns null and the
 * sandbox runs without the filter (reported by `rlvr doctor`).
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const X32_SYSCALL_BIT = 0x40000000;

interface ArchTable {
  audit: number;
  denied: Record<string, number>;
  x32: boolean;
}

const ARCHES: Record<string, ArchTable> = {
  x64: {
    audit: 0xc000003e,
    x32: true,
    denied: {
      socket: 41,
      socketpair: 53,
      add_key: 248,
      request_key: 249,
      keyctl: 250,
      perf_event_open: 298,
      bpf: 321,
      userfaultfd: 323,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
    },
  },
  arm64: {
    audit: 0xc00000b7,
    x32: false,
    denied: {
      socket: 198,
      socketpair: 199,
      add_key: 217,
      request_key: 218,
      keyctl: 219,
      perf_event_open: 241,
      bpf: 280,
      userfaultfd: 282,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
    },
  },
};

/** Names of the system calls the filter refuses (for docs and `rlvr doctor`). */
export const DENIED_SYSCALLS = Object.keys(ARCHES.x64!.denied);

/**
 * The filter program for `arch` (Node's process.arch), or null when unsupported.
 * @returns bytes to feed to `bwrap --seccomp FD`
 */
export function seccompFilter(arch: string = process.arch): Buffer | null {
  const t = ARCHES[arch];
  if (!t) return null;
  const nrs = Object.values(t.denied);
  // Layout: [ld arch][jeq arch][ld nr][jge x32]?[jeq nr]*n [ret allow][ret errno]
  const prog: [number, number, number, number][] = [];
  const count = 3 + (t.x32 ? 1 : 0) + nrs.length + 2;
  const deny = count - 1;
  const at = () => prog.length;
  prog.push([BPF_LD_W_ABS, 0, 0, 4]); // seccomp_data.arch
  prog.push([BPF_JEQ_K, 0, deny - at() - 1, t.audit]);
  prog.push([BPF_LD_W_ABS, 0, 0, 0]); // seccomp_data.nr
  if (t.x32) prog.push([BPF_JGE_K, deny - at() - 1, 0, X32_SYSCALL_BIT]);
  for (const nr of nrs) prog.push([BPF_JEQ_K, deny - at() - 1, 0, nr]);
  prog.push([BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW]);
  prog.push([BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM]);
  const buf = Buffer.alloc(prog.length * 8);
  prog.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}
