"""Section sizes of built artifacts (ELF objects, shared libraries, executables, `ar` archives of ELF
objects, WebAssembly modules), read from their headers in a few lines of struct, with no tool or dependency:
what a board's flash and RAM must hold.

code_bytes: executable sections (wasm: the code section); rodata_bytes: other allocated read-only sections
(constants, weights, tables; on shared libraries also the dynamic symbol tables); data_bytes: initialised
writable data (wasm: data segments, which hold the weights); bss_bytes: zero-initialised data. A firmware
image's reserved stack region (a `.stack` section) is stack_region_bytes, not bss.
"""

from __future__ import annotations

import struct
from pathlib import Path

SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4
SHT_SYMTAB, SHT_NOBITS = 2, 8
STB_LOCAL, SHN_UNDEF = 0, 0
FIELDS = ("code_bytes", "rodata_bytes", "data_bytes", "bss_bytes")


def _empty() -> dict[str, int]:
    return dict.fromkeys(FIELDS, 0)


def elf_sizes(blob: bytes) -> dict[str, int]:
    """Sums of allocated sections by kind, from the section header table."""
    is64, little = blob[4] == 2, blob[5] == 1
    end = "<" if little else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", blob, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", blob, 0x3A)
        header = end + "IIQQQQ"  # name, type, flags, addr, offset, size
    else:
        shoff, = struct.unpack_from(end + "I", blob, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", blob, 0x2E)
        header = end + "IIIIII"
    names = struct.unpack_from(header, blob, shoff + shstrndx * shentsize)[4] if shstrndx else None
    sizes = _empty()
    for i in range(shnum):
        name, kind, flags, _, _, size = struct.unpack_from(header, blob, shoff + i * shentsize)
        if not flags & SHF_ALLOC:
            continue
        if kind == SHT_NOBITS and names is not None and blob[names + name:names + name + 7] == b".stack\0":
            sizes["stack_region_bytes"] = sizes.get("stack_region_bytes", 0) + size
        elif kind == SHT_NOBITS:
            sizes["bss_bytes"] += size
        elif flags & SHF_EXECINSTR:
            sizes["code_bytes"] += size
        elif flags & SHF_WRITE:
            sizes["data_bytes"] += size
        else:
            sizes["rodata_bytes"] += size
    return sizes


def elf_symbols(blob: bytes) -> tuple[set[str], set[str]]:
    """(defined, undefined) global and weak symbols of an ELF object, from its symbol table."""
    is64, little = blob[4] == 2, blob[5] == 1
    end = "<" if little else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", blob, 0x28)
        shentsize, shnum = struct.unpack_from(end + "HH", blob, 0x3A)
        header, symbol, symbol_size = end + "IIQQQQI", end + "IBBH", 24  # ... offset, size, link; name, info, other, shndx
    else:
        shoff, = struct.unpack_from(end + "I", blob, 0x20)
        shentsize, shnum = struct.unpack_from(end + "HH", blob, 0x2E)
        header, symbol, symbol_size = end + "IIIIIII", end + "I8xBBH", 16
    sections = [struct.unpack_from(header, blob, shoff + i * shentsize) for i in range(shnum)]
    defined, undefined = set(), set()
    for _, kind, _, _, offset, size, link in sections:
        if kind != SHT_SYMTAB:
            continue
        strings = sections[link][4]
        for pos in range(offset + symbol_size, offset + size, symbol_size):  # entry 0 is the null symbol
            name, info, _, shndx = struct.unpack_from(symbol, blob, pos)
            if info >> 4 == STB_LOCAL or not name:
                continue
            text = blob[strings + name:blob.index(b"\0", strings + name)].decode()
            (undefined if shndx == SHN_UNDEF else defined).add(text)
    return defined, undefined - defined


def archive_sizes(blob: bytes) -> dict[str, int]:
    """Sums over the ELF members of an `ar` archive (the symbol table and name table are skipped)."""
    sizes = _empty()
    for member in members(blob):
        for k, v in elf_sizes(member).items():
            sizes[k] += v
    return sizes


def archive_symbols(blob: bytes) -> tuple[set[str], set[str]]:
    """(defined, undefined) global symbols over the ELF members of an `ar` archive: what it needs from
    elsewhere at link time."""
    defined, undefined = set(), set()
    for member in members(blob):
        d, u = elf_symbols(member)
        defined |= d
        undefined |= u
    return defined, undefined - defined


def members(blob: bytes):
    """The ELF members of an `ar` archive."""
    pos = 8
    while pos + 60 <= len(blob):
        size = int(blob[pos + 48:pos + 58].decode().strip())
        member = blob[pos + 60:pos + 60 + size]
        if member[:4] == b"\x7fELF":
            yield member
        pos += 60 + size + (size & 1)


def uleb128(blob: bytes, pos: int) -> tuple[int, int]:
    """The unsigned LEB128 number at blob[pos] (wasm's integers, DWARF's and .stack_sizes'), and the position after it."""
    value = shift = 0
    while True:
        byte = blob[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def wasm_sizes(blob: bytes) -> dict[str, int]:
    """The code section (10) and the data section (11) of a module; other sections are metadata."""
    sizes, pos = _empty(), 8
    while pos < len(blob):
        section = blob[pos]
        size, pos = uleb128(blob, pos + 1)
        if section == 10:
            sizes["code_bytes"] += size
        elif section == 11:
            sizes["data_bytes"] += size
        pos += size
    return sizes


def artifact_sizes(path: Path) -> dict[str, int]:
    """file_bytes plus the section sizes of any artifact kind mlcc writes."""
    blob = Path(path).read_bytes()
    if blob[:4] == b"\x7fELF":
        sizes = elf_sizes(blob)
    elif blob[:8] == b"!<arch>\n":
        sizes = archive_sizes(blob)
    elif blob[:4] == b"\0asm":
        sizes = wasm_sizes(blob)
    else:
        sizes = _empty()
    return {"file_bytes": len(blob), **sizes}
