import type { SyscallTable } from './denied-syscalls';
import { DENIED_SYSCALLS, SYSCALL_TABLES } from './denied-syscalls';

// Classic BPF, as the kernel's seccomp takes it (linux/filter.h, linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
// struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] (little endian).
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const ARG0_LOW_OFFSET = 16;
/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME. */
const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;

type Label = 'allow' | 'deny' | 'nosys';
interface Instruction {
  readonly code: number;
  readonly k: number;
  readonly jt?: Label;
  readonly jf?: Label;
}

/**
 * The seccomp program bwrap loads (`--seccomp FD`) for this machine's architecture, or undefined
 * on one we have no syscall table for. It refuses with EPERM every call in DENIED_SYSCALLS and
 * `clone` with any namespace flag; `clone3` gets ENOSYS (its flags sit in memory a filter cannot
 * read, and glibc then falls back to `clone`); calls through another ABI (i386's int 0x80, x32)
 * are refused whole, since their numbers mean other calls. Everything else is allowed.
 */
export function seccompProgram(arch: string = process.arch): Buffer | undefined {
  const table = SYSCALL_TABLES[arch];
  return table && assemble(instructionsFor(table));
}

function instructionsFor(table: SyscallTable): Instruction[] {
  const denied = DENIED_SYSCALLS.map((name) => table.denied[name]).filter((nr): nr is number => nr !== undefined);
  return [
    { code: LD_W_ABS, k: ARCH_OFFSET },
    { code: JEQ_K, k: table.auditArch, jf: 'deny' },
    { code: LD_W_ABS, k: NR_OFFSET },
    ...(table.x32Bit ? [{ code: JGE_K, k: table.x32Bit, jt: 'deny' as const }] : []),
    ...denied.map((nr) => ({ code: JEQ_K, k: nr, jt: 'deny' as const })),
    { code: JEQ_K, k: table.clone3, jt: 'nosys' },
    { code: JEQ_K, k: table.clone, jf: 'allow' },
    { code: LD_W_ABS, k: ARG0_LOW_OFFSET },
    { code: JSET_K, k: CLONE_NAMESPACE_FLAGS, jt: 'deny', jf: 'allow' },
  ];
}

/** Appends the three returns and turns labels into the relative jumps BPF wants (sock_filter, 8 bytes each). */
function assemble(body: Instruction[]): Buffer {
  const returns: Record<Label, number> = { allow: RET_ALLOW, deny: RET_ERRNO | EPERM, nosys: RET_ERRNO | ENOSYS };
  const labels = Object.keys(returns) as Label[];
  const at = (label: Label) => body.length + labels.indexOf(label);
  const program = Buffer.alloc((body.length + labels.length) * 8);
  const write = (index: number, code: number, jt: number, jf: number, k: number) => {
    if (jt > 255 || jf > 255) throw new Error('seccomp program too long for BPF jumps');
    program.writeUInt16LE(code, index * 8);
    program.writeUInt8(jt, index * 8 + 2);
    program.writeUInt8(jf, index * 8 + 3);
    program.writeUInt32LE(k >>> 0, index * 8 + 4);
  };
  body.forEach((insn, i) => {
    const offset = (label?: Label) => (label ? at(label) - (i + 1) : 0);
    write(i, insn.code, offset(insn.jt), offset(insn.jf), insn.k);
  });
  labels.forEach((label, j) => write(body.length + j, RET_K, 0, 0, returns[label]));
  return program;
}
