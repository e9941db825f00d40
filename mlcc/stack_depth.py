"""The deepest stack a call of the model's run function can reach on a 32-bit Arm (Thumb) target, found
statically in the static library: each function's frame from the `.stack_sizes` section clang writes with
-fstack-size-section (targets/cortex-m*.toml), the call graph from the branch-and-link relocations, and the
longest path from the run functions.

Calls through a pointer (a kernel configuration's microkernel) are followed to every function whose
address the library takes, so the figure is an upper bound. Helpers the library calls but does not define
(the compiler runtime's __aeabi_*) are listed and counted at their typical frame, COMPILER_RUNTIME_FRAME.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .sizes import members, uleb128

EM_ARM = 40
SHT_SYMTAB, SHT_REL = 2, 9
SHF_EXECINSTR = 0x4
STT_FUNC, STT_SECTION = 2, 3
STB_LOCAL = 0
R_ARM_CALL, R_ARM_JUMP24, R_ARM_THM_CALL, R_ARM_THM_JUMP24 = 28, 29, 10, 30
CALLS = {R_ARM_CALL, R_ARM_JUMP24, R_ARM_THM_CALL, R_ARM_THM_JUMP24}
R_ARM_NONE, R_ARM_PREL31 = 0, 42  # unwind-table references: not a use of the address
COMPILER_RUNTIME_FRAME = 32  # compiler-rt's soft-float and memory helpers: a few saved registers


@dataclass
class Function:
    frame: int | None = None  # bytes, from .stack_sizes; None: unknown
    calls: set[str] = field(default_factory=set)
    indirect: bool = False  # has a call through a register


@dataclass
class StackDepth:
    bytes: int
    path: list[str]  # the deepest chain of calls, from the root
    unknown: list[str]  # functions called but not defined in the library (counted as COMPILER_RUNTIME_FRAME)
    recursive: bool  # a cycle in the call graph was cut: the figure holds for one trip round it

    def as_dict(self) -> dict:
        return {"stack_bytes": self.bytes, "method": "static: -fstack-size-section frames over the call graph "
                "(indirect calls to every address-taken function)", "deepest_path": self.path,
                "external_calls": self.unknown, "recursion": self.recursive}


def _sections(blob: bytes):
    shoff, = struct.unpack_from("<I", blob, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x2E)
    headers = [struct.unpack_from("<IIIIIIIIII", blob, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    text = lambda at: blob[names + at:blob.index(b"\0", names + at)].decode()  # noqa: E731
    return [(text(h[0]), *h[1:]) for h in headers]  # name, type, flags, addr, offset, size, link, info, align, entsize


def _has_indirect_call(code: bytes) -> bool:
    """A `blx rM`, or a `bx rM` other than `bx lr` (a tail call through a register), in Thumb code."""
    pos = 0
    while pos + 2 <= len(code):
        hw, = struct.unpack_from("<H", code, pos)
        if hw >> 11 in (0b11101, 0b11110, 0b11111):  # the first half of a 32-bit instruction
            pos += 4
            continue
        if (hw & 0xFF87) == 0x4780 or ((hw & 0xFF87) == 0x4700 and (hw >> 3) & 0xF != 14):
            return True
        pos += 2
    return False


def _member_graph(blob: bytes, index: int, functions: dict[str, Function], address_taken: set[str]) -> None:
    if blob[4] != 1 or struct.unpack_from("<H", blob, 0x12)[0] != EM_ARM:
        raise ValueError("not a 32-bit Arm object")
    sections = _sections(blob)
    symtab = next(i for i, s in enumerate(sections) if s[1] == SHT_SYMTAB)
    _, _, _, _, sym_off, sym_size, str_index, *_ = sections[symtab]
    strings = sections[str_index][4]
    symbols = []  # (key, type, section, value)
    by_section: dict[int, list[tuple[int, str]]] = {}
    for pos in range(sym_off, sym_off + sym_size, 16):
        name_at, value, size, info, _, shndx = struct.unpack_from("<IIIBBH", blob, pos)
        name = blob[strings + name_at:blob.index(b"\0", strings + name_at)].decode()
        kind = info & 0xF
        key = f"{name}@{index}" if info >> 4 == STB_LOCAL else name  # static functions: per object
        symbols.append((key, kind, shndx, value))
        if kind == STT_FUNC and shndx:
            by_section.setdefault(shndx, []).append((value & ~1, key))
            functions.setdefault(key, Function())

    def function_at(section: int, offset: int) -> str | None:
        candidates = [(start, key) for start, key in by_section.get(section, []) if start <= offset]
        return max(candidates)[1] if candidates else None

    def target(symbol: int, addend: int = 0) -> str | None:
        key, kind, shndx, _ = symbols[symbol]
        if kind == STT_SECTION:
            return function_at(shndx, addend)
        return key if kind == STT_FUNC or shndx == 0 else None  # undefined: defined elsewhere, or external

    for i, (name, kind, flags, _, offset, size, _, info, _, _) in enumerate(sections):
        if kind == SHT_REL and name == ".rel.stack_sizes":
            data_off = sections[info][4]
            relocations = {struct.unpack_from("<I", blob, offset + k)[0]: struct.unpack_from("<I", blob, offset + k + 4)[0] >> 8
                           for k in range(0, size, 8)}
            pos, stop = data_off, data_off + sections[info][5]
            while pos < stop:
                address, = struct.unpack_from("<I", blob, pos)
                frame, after = uleb128(blob, pos + 4)
                function = target(relocations[pos - data_off], address & ~1)
                if function is not None:
                    functions.setdefault(function, Function()).frame = frame
                pos = after
        elif kind == SHT_REL and sections[info][2] & SHF_EXECINSTR:
            for k in range(0, size, 8):
                r_offset, r_info = struct.unpack_from("<II", blob, offset + k)
                callee = target(r_info >> 8)
                if r_info & 0xFF in CALLS:
                    caller = function_at(info, r_offset)
                    if caller is not None and callee is not None:
                        functions[caller].calls.add(callee)
                elif r_info & 0xFF not in (R_ARM_NONE, R_ARM_PREL31) and callee is not None:
                    address_taken.add(callee)
        elif kind == SHT_REL and sections[info][0] not in (".stack_sizes",) and not sections[info][0].startswith(".ARM.ex"):
            for k in range(0, size, 8):
                r_info, = struct.unpack_from("<I", blob, offset + k + 4)
                callee = target(r_info >> 8)
                if callee is not None and r_info & 0xFF not in (R_ARM_NONE, R_ARM_PREL31):
                    address_taken.add(callee)  # a function pointer in data (a configuration table)
        if flags & SHF_EXECINSTR and i in by_section and _has_indirect_call(blob[offset:offset + size]):
            for _, key in by_section[i]:
                functions[key].indirect = True


def library_stack_depth(archive: bytes, roots: list[str]) -> StackDepth | None:
    """The deepest stack from any of `roots` over the archive's call graph; None if the archive is not
    Arm objects with .stack_sizes (other targets) or no root is defined."""
    functions: dict[str, Function] = {}
    address_taken: set[str] = set()
    try:
        for index, member in enumerate(members(archive)):
            _member_graph(member, index, functions, address_taken)
    except (ValueError, StopIteration, struct.error):
        return None
    defined = {k for k, f in functions.items() if f.frame is not None}
    if not defined or not any(r in defined for r in roots):
        return None
    pointer_targets = address_taken & defined
    unknown: set[str] = set()
    recursive = False
    memo: dict[str, tuple[int, list[str]]] = {}
    active: set[str] = set()

    def deepest(key: str) -> tuple[int, list[str]]:
        nonlocal recursive
        function = functions.get(key)
        if function is None or function.frame is None:
            unknown.add(key)
            return COMPILER_RUNTIME_FRAME, [key]
        if key in memo:
            return memo[key]
        if key in active:
            recursive = True
            return 0, []
        active.add(key)
        callees = function.calls | (pointer_targets if function.indirect else set())
        below = max((deepest(c) for c in sorted(callees)), key=lambda d: d[0], default=(0, []))
        active.discard(key)
        memo[key] = (function.frame + below[0], [key.split("@")[0], *below[1]])
        return memo[key]

    depth, path = max((deepest(r) for r in roots if r in defined), key=lambda d: d[0])
    return StackDepth(depth, path, sorted(unknown), recursive)
