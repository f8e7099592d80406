"""A small classic-BPF assembler for seccomp filters (and a tiny emulator).

Programs are lists of `Insn` and `Label` items. Jump targets are label names,
or None for "the next instruction". `assemble` resolves them to the relative
offsets BPF wants and packs `struct sock_filter[]` (u16 code, u8 jt, u8 jf,
u32 k: 8 bytes each, native byte order).

Conditional jumps only have 8-bit offsets. When a target is more than 255
instructions away, `assemble` routes it through a trampoline: an unconditional
`JA` (32-bit offset) placed right after the conditional jump.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass, replace

# Instruction classes and fields (linux/bpf_common.h).
BPF_LD, BPF_ALU, BPF_JMP, BPF_RET = 0x00, 0x04, 0x05, 0x06
BPF_W, BPF_ABS, BPF_K = 0x00, 0x20, 0x00
BPF_AND = 0x50
BPF_JA, BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET = 0x00, 0x10, 0x20, 0x30, 0x40

BPF_MAXINSNS = 4096  # kernel limit per filter program
_INSN = struct.Struct("=HBBI")
INSN_SIZE = _INSN.size  # 8


@dataclass(frozen=True)
class Label:
    name: str


@dataclass(frozen=True)
class Insn:
    code: int
    k: int = 0
    jt: str | None = None  # label name; None = fall through to the next insn
    jf: str | None = None
    ja: str | None = None  # target of an unconditional BPF_JA


# --- constructors -----------------------------------------------------------

def ld_abs(offset: int) -> Insn:
    """A <- 32-bit word at `offset` in struct seccomp_data."""
    return Insn(BPF_LD | BPF_W | BPF_ABS, offset)


def and_k(mask: int) -> Insn:
    return Insn(BPF_ALU | BPF_AND | BPF_K, mask)


def jeq(k: int, jt: str | None = None, jf: str | None = None) -> Insn:
    return Insn(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf)


def jge(k: int, jt: str | None = None, jf: str | None = None) -> Insn:
    """Unsigned A >= k."""
    return Insn(BPF_JMP | BPF_JGE | BPF_K, k, jt, jf)


def jgt(k: int, jt: str | None = None, jf: str | None = None) -> Insn:
    return Insn(BPF_JMP | BPF_JGT | BPF_K, k, jt, jf)


def jset(mask: int, jt: str | None = None, jf: str | None = None) -> Insn:
    """A & mask != 0."""
    return Insn(BPF_JMP | BPF_JSET | BPF_K, mask, jt, jf)


def ja(target: str) -> Insn:
    return Insn(BPF_JMP | BPF_JA, ja=target)


def ret(value: int) -> Insn:
    return Insn(BPF_RET | BPF_K, value)


class LabelMaker:
    """Hands out unique label names so generated blocks never collide."""

    def __init__(self) -> None:
        self._n = itertools.count()

    def __call__(self, hint: str = "L") -> str:
        return f"{hint}.{next(self._n)}"


# --- assembly ---------------------------------------------------------------

def _is_cond(insn: Insn) -> bool:
    return insn.code & 0x07 == BPF_JMP and insn.code & 0xF0 != BPF_JA


def _positions(items: list) -> dict[str, int]:
    pos: dict[str, int] = {}
    n = 0
    for item in items:
        if isinstance(item, Label):
            if item.name in pos:
                raise ValueError(f"duplicate label {item.name!r}")
            pos[item.name] = n
        else:
            n += 1
    return pos


def _offset(pos: dict[str, int], target: str | None, index: int) -> int:
    if target is None:
        return 0
    if target not in pos:
        raise ValueError(f"undefined label {target!r}")
    off = pos[target] - (index + 1)
    if off < 0:
        raise ValueError(f"backward jump to {target!r} (BPF only jumps forward)")
    return off


def _add_trampolines(items: list, pos: dict[str, int], fresh: LabelMaker) -> list | None:
    """Return a new item list with the first too-long conditional jump split
    through JA trampolines, or None if every jump already fits in 8 bits."""
    index = 0
    for i, item in enumerate(items):
        if isinstance(item, Label):
            continue
        if _is_cond(item):
            far = [t for t in (item.jt, item.jf)
                   if t is not None and _offset(pos, t, index) > 255]
            if far:
                fixed, tramps = item, []
                after = fresh("after")
                for field in ("jt", "jf"):
                    target = getattr(item, field)
                    if target in far:
                        hop = fresh("tramp")
                        fixed = replace(fixed, **{field: hop})
                        tramps += [Label(hop), ja(target)]
                    elif target is None:
                        # "next instruction" must now skip the trampolines.
                        fixed = replace(fixed, **{field: after})
                # The trampolines sit right after the jump; a near branch keeps
                # its label and simply skips over them.
                return items[:i] + [fixed] + tramps + [Label(after)] + items[i + 1:]
        index += 1
    return None


def assemble(items) -> bytes:
    """Resolve labels and pack the program as struct sock_filter[]."""
    items = list(items)
    fresh = LabelMaker()
    while True:
        pos = _positions(items)
        expanded = _add_trampolines(items, pos, fresh)
        if expanded is None:
            break
        items = expanded

    out = bytearray()
    index = 0
    for item in items:
        if isinstance(item, Label):
            continue
        if _is_cond(item):
            jt, jf, k = _offset(pos, item.jt, index), _offset(pos, item.jf, index), item.k
        elif item.code == BPF_JMP | BPF_JA:
            jt, jf, k = 0, 0, _offset(pos, item.ja, index)
        else:
            jt, jf, k = 0, 0, item.k
        out += _INSN.pack(item.code, jt, jf, k & 0xFFFFFFFF)
        index += 1
    if not 0 < index <= BPF_MAXINSNS:
        raise ValueError(f"program has {index} instructions (limit {BPF_MAXINSNS})")
    return bytes(out)


def disassemble(program: bytes) -> list[tuple[int, int, int, int]]:
    """Unpack a program into (code, jt, jf, k) tuples."""
    if len(program) % INSN_SIZE:
        raise ValueError("program length is not a multiple of 8")
    return [_INSN.unpack_from(program, i) for i in range(0, len(program), INSN_SIZE)]


# --- emulation (for tests and for auditing a program without the kernel) ----

def emulate(program: bytes, data: bytes) -> int:
    """Run a seccomp program over a packed struct seccomp_data; return the
    action value. Only the opcodes this assembler emits are supported."""
    insns = disassemble(program)
    acc = 0
    pc = 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == BPF_LD | BPF_W | BPF_ABS:
            (acc,) = struct.unpack_from("=I", data, k)
        elif code == BPF_ALU | BPF_AND | BPF_K:
            acc &= k
        elif code == BPF_JMP | BPF_JA:
            pc += k
        elif code & 0x07 == BPF_JMP:
            op = code & 0xF0
            taken = {BPF_JEQ: acc == k, BPF_JGT: acc > k,
                     BPF_JGE: acc >= k, BPF_JSET: bool(acc & k)}[op]
            pc += jt if taken else jf
        elif code == BPF_RET | BPF_K:
            return k
        else:
            raise ValueError(f"unsupported opcode {code:#x} at {pc - 1}")
