/**
 * System calls an agent's commands never need, and that widen the kernel surface an escape would
 * use: new namespaces and mounts (a nested user namespace gives "root" inside it), kernel
 * keyrings, tracing and reading other processes' memory, loading kernel code or BPF programs,
 * io_uring, userfaultfd, and setting the clock. Each is refused with EPERM, as if the sandbox
 * lacked the privilege; everything else is allowed. docs/operations/security.md "Isolation (the sandbox)" lists them.
 */
export const DENIED_SYSCALLS = [
  // namespaces and mounts
  'unshare',
  'setns',
  'mount',
  'umount2',
  'pivot_root',
  'mount_setattr',
  'move_mount',
  'open_tree',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  // kernel keyrings
  'keyctl',
  'add_key',
  'request_key',
  // tracing and other processes' memory
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'perf_event_open',
  'kcmp',
  // kernel code, BPF, I/O ports and system state
  'bpf',
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'reboot',
  'swapon',
  'swapoff',
  'acct',
  'syslog',
  'iopl',
  'ioperm',
  'quotactl',
  'quotactl_fd',
  'lookup_dcookie',
  // exploit primitives with no use here
  'userfaultfd',
  'open_by_handle_at',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  // the clock
  'settimeofday',
  'clock_settime',
  'clock_adjtime',
] as const;

export type DeniedSyscall = (typeof DENIED_SYSCALLS)[number];

export interface SyscallTable {
  /** AUDIT_ARCH_* of the architecture: calls made under any other ABI are refused whole. */
  readonly auditArch: number;
  /** Numbers of the denied calls; a call the architecture lacks is simply absent. */
  readonly denied: Partial<Record<DeniedSyscall, number>>;
  readonly clone: number;
  readonly clone3: number;
  /** x86_64's x32 ABI marks its calls with this bit; they are refused whole. */
  readonly x32Bit?: number;
}

// From <asm/unistd_64.h> (x86_64) and <asm-generic/unistd.h> (aarch64).
export const SYSCALL_TABLES: Readonly<Record<string, SyscallTable>> = {
  x64: {
    auditArch: 0xc000003e,
    x32Bit: 0x40000000,
    clone: 56,
    clone3: 435,
    denied: {
      unshare: 272,
      setns: 308,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      mount_setattr: 442,
      move_mount: 429,
      open_tree: 428,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      perf_event_open: 298,
      kcmp: 312,
      bpf: 321,
      kexec_load: 246,
      kexec_file_load: 320,
      init_module: 175,
      finit_module: 313,
      delete_module: 176,
      reboot: 169,
      swapon: 167,
      swapoff: 168,
      acct: 163,
      syslog: 103,
      iopl: 172,
      ioperm: 173,
      quotactl: 179,
      quotactl_fd: 443,
      lookup_dcookie: 212,
      userfaultfd: 323,
      open_by_handle_at: 304,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
      settimeofday: 164,
      clock_settime: 227,
      clock_adjtime: 305,
    },
  },
  arm64: {
    auditArch: 0xc00000b7,
    clone: 220,
    clone3: 435,
    denied: {
      unshare: 97,
      setns: 268,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      mount_setattr: 442,
      move_mount: 429,
      open_tree: 428,
      fsopen: 430,
      fsconfig: 431,
      fsmount: 432,
      fspick: 433,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      perf_event_open: 241,
      kcmp: 272,
      bpf: 280,
      kexec_load: 104,
      kexec_file_load: 294,
      init_module: 105,
      finit_module: 273,
      delete_module: 106,
      reboot: 142,
      swapon: 224,
      swapoff: 225,
      acct: 89,
      syslog: 116,
      quotactl: 60,
      quotactl_fd: 443,
      lookup_dcookie: 18,
      userfaultfd: 282,
      open_by_handle_at: 265,
      io_uring_setup: 425,
      io_uring_enter: 426,
      io_uring_register: 427,
      settimeofday: 170,
      clock_settime: 112,
      clock_adjtime: 266,
    },
  },
};
